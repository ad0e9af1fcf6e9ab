"""A deployment folder is data (issue 31, docs/reliability.md "Untrusted files"): its runtime options are checked
against the runtime's schema, an option naming a path (OpenVINO ``cache_dir``) is refused before anything runs and
nothing is created where it points, and a record nested 100,000 levels deep is one line, not a RecursionError."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from edgeopt.deploy import load_deployment
from edgeopt.deploy.io import DeploymentError
from edgeopt.deploy.options import path_options, shippable_options
from tests.conftest import make_matmul_model
from tests.deployments import make_deployment


@pytest.fixture()
def model(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    return make_matmul_model(tmp_path / "src" / "m.onnx")


def _edit(folder: Path, **changes: object) -> None:
    """Change ``deployment.json`` as a hostile hand would: the JSON only, every file hash untouched."""
    record = folder / "deployment.json"
    data = json.loads(record.read_text())
    data.update(changes)
    record.write_text(json.dumps(data))


def test_the_path_options_are_marked_in_the_agent_schemas():
    assert path_options("openvino") == ("cache_dir",)
    assert path_options("tensorrt") == ("engine_cache_dir",)
    assert path_options("onnxruntime") == () and path_options("no-such-runtime") == ()


@pytest.mark.parametrize("where", ["absolute", "relative"])
def test_a_cache_dir_from_a_deployment_is_refused_and_nothing_is_created(tmp_path, model, capsys, monkeypatch,
                                                                          where):
    folder = make_deployment(tmp_path / "dep" / "a" / "b", model, runtime="openvino")
    target = tmp_path / "written-here" if where == "absolute" else tmp_path / "dep" / "X"
    value = str(target) if where == "absolute" else "../../X"
    _edit(folder, runtime_options={"cache_dir": value})
    monkeypatch.chdir(folder)  # a relative cache_dir resolves from the working directory: ../../X is dep/X
    code = main(["bench", str(folder), "--iterations", "5", "--min-duration", "0", "--warmup", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(folder / "deployment.json") in err and "runtime_options.cache_dir" in err and value in err
    assert "--override-deployment" in err  # the fix
    assert not target.exists() and not os.path.lexists(target)


def test_an_option_the_schema_refuses_names_the_file_and_the_option(tmp_path, model):
    folder = make_deployment(tmp_path / "dep", model, runtime="openvino")
    _edit(folder, runtime_options={"performance_hint": "fastest"})
    with pytest.raises(DeploymentError) as err:
        load_deployment(folder)
    text = str(err.value)
    assert "deployment.json" in text and "performance_hint 'FASTEST': use one of" in text and "\n" not in text
    _edit(folder, runtime_options={"bogus_option": 1})
    with pytest.raises(DeploymentError, match=r"unknown openvino option\(s\) bogus_option; known: "):
        load_deployment(folder)


def test_an_unknown_runtime_is_refused(tmp_path, model):
    folder = make_deployment(tmp_path / "dep", model, runtime="onnxruntime")
    _edit(folder, runtime="evil_rt")
    with pytest.raises(DeploymentError, match=r"runtime 'evil_rt' is not registered here \(known: onnxruntime"):
        load_deployment(folder)


@pytest.mark.parametrize("value", ["/etc/cron.d", "../../X", "~/x", {"dirs": ["a/b"]}, ["C:\\x"]])
def test_a_runtime_without_an_option_schema_takes_no_path_from_a_deployment(tmp_path, model, value):
    """A plug-in runtime that declares no option schema (the null runtime here) cannot mark its path options, so
    every value that may name a path is refused from a deployment; plain values still load."""
    folder = make_deployment(tmp_path / "dep", model, runtime="null")
    _edit(folder, runtime_options={"dump": value})
    with pytest.raises(DeploymentError) as err:
        load_deployment(folder)
    text = str(err.value)
    assert "runtime_options.dump" in text and "declares no option schema" in text and "\n" not in text
    _edit(folder, runtime_options={"mode": "fast", "level": 3})
    deployment, _ = load_deployment(folder)
    assert deployment.runtime_options == {"mode": "fast", "level": 3}


def test_the_options_a_sweep_measured_with_still_load(tmp_path, model):
    folder = make_deployment(tmp_path / "dep", model, runtime="openvino",
                             runtime_options={"inference_precision": "f32", "performance_hint": "LATENCY",
                                              "cache_dir": None})
    deployment, _ = load_deployment(folder)
    assert deployment.runtime_options["inference_precision"] == "f32"


def test_a_sweep_leaves_path_options_out_of_what_it_ships():
    options = {"cache_dir": "/var/cache/ov", "inference_precision": "f32"}
    assert shippable_options("openvino", options) == {"inference_precision": "f32"}


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"name": ' * 100_000 + "1" + "}" * 100_000,
    '{"runtime_options": {"a": ' + "[" * 5_000 + "]" * 5_000 + "}}",
])
def test_a_deeply_nested_record_is_one_line(tmp_path, model, capsys, text):
    folder = make_deployment(tmp_path / "dep", model, runtime="onnxruntime")
    (folder / "deployment.json").write_text(text)
    with pytest.raises(DeploymentError, match="nested more than 64 levels deep"):
        load_deployment(folder)
    assert main(["bench", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "RecursionError" not in err and len(err.strip().splitlines()) == 1


def test_a_record_that_is_not_a_regular_file_is_refused_at_once(tmp_path, model):
    folder = make_deployment(tmp_path / "dep", model, runtime="onnxruntime")
    record = folder / "deployment.json"
    record.unlink()
    os.mkfifo(record)  # opened without blocking, refused on fstat: nothing waits for a writer
    with pytest.raises(DeploymentError):
        load_deployment(record)


def test_qualify_refuses_such_a_deployment_when_the_spec_is_loaded(tmp_path, model):
    from edgeopt.qualify import QualifySpecError, load_spec

    folder = make_deployment(tmp_path / "dep", model, runtime="openvino")
    _edit(folder, runtime_options={"cache_dir": str(tmp_path / "elsewhere")})
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: q\nmodel: {{path: {model}}}\noptimized: {folder}\ngates: {{model_size: {{max_mb: 5}}}}\n")
    with pytest.raises(QualifySpecError, match=r"spec.yaml:3: optimized: .*runtime_options.cache_dir .* names a path"):
        load_spec(spec)
    assert not (tmp_path / "elsewhere").exists()
