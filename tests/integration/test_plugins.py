"""A throwaway runtime and a throwaway format, each a plug-in in a temp directory (``EDGEOPT_PLUGIN_PATH``), are
picked up by ``bench``, ``profile``, ``optimize``, the manifest bench, sweep's runtime selection, its levels and its
INT8 search with no edit to edgeopt: the CLI (real processes where the plug-in's bench flags and a fresh
process's discovery are the point, else its ``main`` in this process with the plug-in path set: tests/cli_here.py)
and the real agent as the local runner's subprocess.
(``devices check``: tests/integration/ssh/test_ssh_plugins.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_here import edgeopt_here
from tests.contract.test_registry_agreement import agreement_problems, reference_problems
from tests.integration.test_cli_bench import edgeopt
from tests.plugin_kit import format_plugin, runtime_plugin

# 100 iterations: p99's 100 samples whatever the CPU's load (20 gave 76 samples on a loaded 2-core machine)
QUICK = ("--min-duration", "0.1", "--iterations", "100", "--no-budget", "--json")


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plugins")
    return {"runtime": runtime_plugin(root / "rt"), "format": format_plugin(root / "fmt")}


def _env(*dirs: Path) -> dict[str, str]:
    return {"EDGEOPT_PLUGIN_PATH": os.pathsep.join(str(d) for d in dirs)}


@pytest.fixture()
def here(monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``edgeopt ARGS`` in this process (tests/cli_here.py; a real process costs ~1-2 CPU-s of interpreter start
    and imports and tells nothing more here: plug-ins are found per ``EDGEOPT_PLUGIN_PATH`` value, and a real
    process finds them in test_plugin_runtime_is_the_targets_default_for_bench; the runtime flags, read once per
    process, are tested in real processes). ``sys.path`` is restored
    afterwards, so later tests do not see the plug-ins (see ``active``)."""
    pytest.importorskip("onnxruntime.transformers")
    monkeypatch.setattr(sys, "path", list(sys.path))
    return edgeopt_here


@pytest.fixture()
def active(plugins: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Both plug-ins active in this process (sys.path is restored afterwards, so later tests do not see them)."""
    # onnxruntime.transformers appends its own directory to sys.path when first imported (the fp16 and INT8
    # passes need it): import it before the patch, or a later test finds it in sys.modules but not on sys.path
    pytest.importorskip("onnxruntime.transformers")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("EDGEOPT_PLUGIN_PATH", _env(plugins["runtime"], plugins["format"])["EDGEOPT_PLUGIN_PATH"])
    return plugins


def test_without_the_plugin_its_target_and_runtime_are_unknown(here, tiny_cnn):
    p = here("bench", str(tiny_cnn), "--target", "plugbox", "--no-budget")
    assert p.returncode == 2 and "plugbox" in p.stderr


def test_host_and_agent_agree_with_plugins_active(active):
    assert agreement_problems() == [] and reference_problems() == []


def test_plugin_runtime_is_the_targets_default_for_bench(plugins, tiny_cnn):
    p = edgeopt("bench", str(tiny_cnn), "--target", "plugbox", *QUICK, env=_env(plugins["runtime"]))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["runtime"]["name"] == "ortplug" and r["valid"] is True and r["target"] == "plugbox"
    assert r["model"]["params"] > 0  # still an ONNX model, inspected as one


def test_plugin_runtime_by_name_and_the_one_that_is_missing(here, plugins, tiny_cnn):
    env = _env(plugins["runtime"])
    p = here("bench", str(tiny_cnn), "--runtime", "ortplug", *QUICK, env=env)
    assert p.returncode == 0 and json.loads(p.stdout)["runtime"]["name"] == "ortplug", p.stderr
    p = here("bench", str(tiny_cnn), "--runtime", "ghostrt", *QUICK, env=env)
    assert p.returncode == 3 and "pip install ghost-runtime-lib" in p.stderr  # the agent's own message


def test_plugin_format_is_converted_validated_and_benchmarked(here, plugins, tiny_cnn, tmp_path):
    env = _env(plugins["format"])
    recipe = tmp_path / "onnxc.yaml"
    recipe.write_text("name: onnxc\ndescription: cleanup, delivered as ONNX and onnxc\n"
                      "passes:\n  - pass: cleanup\nformats: [onnx, onnxc]\n")
    out = tmp_path / "out"
    p = here("optimize", str(tiny_cnn), "--target", "local", "--recipe", str(recipe), "--out", str(out),
                "--no-bench", "--json", env=env)
    assert p.returncode == 0, p.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["formats"] == ["onnx", "onnxc"]
    onnxc = next(a for a in manifest["artifacts"] if a["format"] == "onnxc")
    assert onnxc["pass_name"] == "to_onnxc" and Path(onnxc["path"]).suffix == ".onnxc"
    assert onnxc["report"]["validation"]["runtime"] == "onnxruntime" and onnxc["report"]["validation"]["passed"]

    p = here("bench", str(out / "manifest.json"), *QUICK, env=env)
    assert p.returncode == 0, p.stderr
    rows = {row["format"]: row for row in json.loads(p.stdout)["results"]}
    assert rows["onnxc"]["runtime"] == "onnxruntime" and rows["onnxc"]["result"]["valid"] is True

    p = here("bench", onnxc["path"], *QUICK, env=env)  # the format is detected from the suffix
    assert p.returncode == 0 and json.loads(p.stdout)["model"]["sha256"] == onnxc["sha256"], p.stderr


def test_plugin_format_content_check_and_unknown_without_plugin(here, plugins, tmp_path):
    bad = tmp_path / "bad.onnxc"
    bad.write_bytes(b"not onnx at all")
    p = here("bench", str(bad), "--no-budget", env=_env(plugins["format"]))
    assert p.returncode == 2 and "is not ONNX bytes" in p.stderr
    p = here("bench", str(bad), "--no-budget")  # no plug-in: no known suffix, no marker: read as ONNX
    assert p.returncode == 2 and "onnxc" not in p.stdout


def test_sweep_selects_the_plugin_runtimes_of_the_target(active, digits, tmp_path):
    from edgeopt.sweep import sweep

    model, data = digits  # the session's digits MLP (tests/integration/conftest.py), not one trained per test
    # objective size: no latency-ranking rounds (the runtimes' selection is the point here)
    result = sweep(model, eval=data, target="plugbox", recipes=["fp16"], iterations=20, min_duration_s=0.1,
                   int8_search=False, objective="size", out_dir=tmp_path / "sweep")
    assert result.runtimes == ["ortplug", "onnxruntime"]  # the target's order; ghostrt is not installed
    assert any("ghostrt is not installed" in w for w in result.warnings)
    measured = {(lv.recipe, lv.runtime) for lv in result.levels}
    assert {("fp32", "ortplug"), ("fp16", "ortplug"), ("fp16", "onnxruntime")} <= measured
    assert all(lv.retention > 0.9 for lv in result.levels)


def test_plugin_runtime_flag_joins_bench_and_profile(plugins, tiny_cnn):
    env = _env(plugins["runtime"])
    p = edgeopt("bench", "--help", env=env)
    assert p.returncode == 0 and "--ortplug-device" in p.stdout and "ortplug" in p.stdout
    p = edgeopt("bench", str(tiny_cnn), "--ortplug-device", "CPU", *QUICK, env=env)  # implies --runtime ortplug
    assert p.returncode == 0, p.stderr
    rt = json.loads(p.stdout)["runtime"]
    assert rt["name"] == "ortplug" and rt["device"] == "CPU" and rt["inference_precision"] == "f16"
    p = edgeopt("profile", str(tiny_cnn), "--ortplug-device", "CPU", "--iterations", "5", "--warmup", "1", "--json",
                env=env)
    assert p.returncode == 0, p.stderr
    prof = json.loads(p.stdout)
    assert prof["runtime"]["name"] == "ortplug" and prof["runtime"]["device"] == "CPU" and prof["layers"]
    p = edgeopt("bench", str(tiny_cnn), "--ortplug-device", "CPU", "--ov-device", "CPU", *QUICK, env=env)
    assert p.returncode == 2 and "flags of several runtimes" in p.stderr
    assert "--ortplug-device" not in edgeopt("bench", "--help").stdout  # without the plug-in, no flag


def test_sweep_gives_the_plugin_runtime_its_low_precision_level_and_int8_search(active, digits, tmp_path):
    """ortplug's descriptor alone puts it in the sweep's reference options, its low-precision level and the INT8
    search's latency-aware float sets (``qdq`` backend). Kept short: one runtime, one recipe, 8 device trials, the
    size objective (no latency-ranking rounds). Its low-precision default applies on any CPU (no CPU flags
    declared), so the INT8 search gets an f16 branch on any machine (issue 21; the flags' rule:
    tests/unit/sweep/test_decision_rules.py): the chosen mix measured with f16 float parts, as level
    ``int8-search+f16``."""
    from edgeopt.sweep import sweep

    model, data = digits
    # snr_db retention of plain INT8 here is ~0.99976 (tests/integration/test_sweep.py): 0.9999 starts the search
    result = sweep(model, eval=data, target="plugbox", runtimes=["ortplug"], recipes=["int8"], metric="snr_db",
                   min_retention=0.9999, max_trials=8, max_search_s=120, objective="size", iterations=20,
                   min_duration_s=0.1, out_dir=tmp_path / "sweep")
    by = {(lv.recipe, lv.runtime): lv for lv in result.levels}
    fp32, low = by[("fp32", "ortplug")], by[("f16", "ortplug")]
    assert fp32.details["effective_runtime_options"] == {"precision": "f32"}
    assert fp32.details["inference_precision"] == "f32"
    assert low.details["effective_runtime_options"] == {} and low.details["inference_precision"] == "f16"
    assert low.retention == pytest.approx(1.0)  # retention against the f32 reference
    assert not by[("int8", "ortplug")].meets_retention
    # the plain INT8 artifact with its float parts at the runtime's default (what `compile` with no options runs)
    int8, int8_low = by[("int8", "ortplug")], by[("int8+f16", "ortplug")]
    assert int8_low.artifact == int8.artifact and int8_low.details["effective_runtime_options"] == {}
    assert int8_low.details["inference_precision"] == "f16" and int8.details["inference_precision"] == "f32"
    assert int8_low.retention <= 1.0 + 1e-9 and int8_low.latency_ms > 0
    search = result.int8_search
    assert search is not None and search.runtime == "ortplug"
    assert search.runtimes == ["ortplug"] and search.float_sets["ortplug"]["profiled"] is True
    cost = search.float_sets["ortplug"]["float_cost"]  # the float set's cost by the per-layer profile
    assert cost["nodes"] == search.float_sets["ortplug"]["float_nodes"]
    assert cost["profiled_ms"] >= sum(cost["costliest"].values()) > 0 or cost["costliest"] == {}
    assert ("int8-search", "ortplug") in by, search.trials
    f32_mix, low_mix = by[("int8-search", "ortplug")], by[("int8-search+f16", "ortplug")]
    assert f32_mix.details["effective_runtime_options"] == {"precision": "f32"}
    assert low_mix.details["effective_runtime_options"] == {} and low_mix.details["inference_precision"] == "f16"
    assert low_mix.artifact == f32_mix.artifact and low_mix.details["float_precision"] == "f16"
    low_trials = [t for t in search.trials if t.precision == "f16"]
    assert low_trials and search.chosen_low_precision_by_runtime["ortplug"] in low_trials
    assert search.chosen is not None and search.chosen.precision is None  # the f32 branch's choice stays chosen
