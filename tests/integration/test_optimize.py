"""``edgeopt optimize`` end to end: real passes on real (small) models, artifacts, manifest, clear errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import edgeopt
from edgeopt.errors import InputError
from edgeopt.fsutil import sha256_file
from edgeopt.optimize import OptimizeResult
from edgeopt.passes import Artifact
from tests.cli_here import edgeopt_here
from tests.unit.passes.builders import Recorder, mlp_model

ONNX_RECIPES = ["fp16", "int8", "int8-dynamic", "int4", "prune50", "prune30-int8"]


def onnx_final(result: OptimizeResult) -> Artifact:
    """The recipe's last ONNX artifact (format conversions for the target may follow it)."""
    return [a for a in result.artifacts if a.format.value == "onnx"][-1]


def edgeopt_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``edgeopt ARGS`` in this process (tests/cli_here.py: no interpreter start, ~1 CPU-s less each)."""
    return edgeopt_here(*args)


@pytest.fixture()
def cnn_data(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    calib, eval_ = tmp_path / "calib.npz", tmp_path / "eval.npz"
    np.savez(calib, input=rng.random((16, 1, 3, 32, 32), dtype=np.float32))
    np.savez(eval_, input=rng.random((12, 1, 3, 32, 32), dtype=np.float32), labels=rng.integers(0, 10, 12))
    return calib, eval_


def test_int8_writes_artifacts_and_manifest_and_keeps_the_input(tmp_path: Path, tiny_cnn: Path, cnn_data) -> None:
    calib, eval_ = cnn_data
    before = sha256_file(tiny_cnn)
    out = tmp_path / "out"
    rec = Recorder()
    result = edgeopt.optimize(tiny_cnn, target="local", recipe="int8", calib=calib, eval_data=eval_, out_dir=out,
                              progress=rec, bench=False)
    assert sha256_file(tiny_cnn) == before and result.model.sha256 == before
    names = {p.name for p in out.iterdir()}
    assert {"manifest.json", "mobilenet-tiny.int8.1-cleanup.onnx", "mobilenet-tiny.int8.onnx"} <= names
    assert not [n for n in names if n.startswith(".")]  # no temp files left
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == json.loads(result.model_dump_json())
    first, final = [a for a in manifest["artifacts"] if a["format"] == "onnx"]  # conversions may follow
    assert first["parent_sha256"] == before and final["parent_sha256"] == first["sha256"]
    assert final["precision"] == "int8" and final["pass_name"] == "quantize_int8"
    assert final["pass_config"]["reduce_range"] is not None and final["pass_config"]["activation_type"] == "u8"
    assert final["sha256"] == sha256_file(Path(final["path"])) and final["size_bytes"] > 0
    assert final["seconds"] > 0 and manifest["calibration"] == {"source": str(calib), "random": False}
    rows = {r["artifact"]: r for r in manifest["fidelity"]}
    assert {"input", "1-cleanup", "2-quantize_int8"} <= set(rows)
    q = rows["2-quantize_int8"]
    assert q["data"] == "eval" and q["samples"] == 12 and 0 <= q["top1_agreement"] <= 1
    assert q["cosine_similarity"] > 0.9 and q["accuracy"] is not None and q["size_ratio"] > 0  # 4 KB model: QDQ adds
    assert rows["1-cleanup"]["max_abs_error"] < 1e-4
    assert any(task == "calibrating INT8 ranges" for task, _, _ in rec.progress_events)


@pytest.mark.parametrize("recipe", ONNX_RECIPES)
def test_every_onnx_recipe_runs(tmp_path: Path, recipe: str, cnn_data) -> None:
    calib, _ = cnn_data
    model = mlp_model(tmp_path / "mlp.onnx")
    data = tmp_path / "mlp.npz"
    np.savez(data, x=np.random.default_rng(0).standard_normal((8, 1, 64)).astype(np.float32))
    result = edgeopt.optimize(model, target="local", recipe=recipe, calib=data, out_dir=tmp_path / recipe,
                              bench=False)
    final = onnx_final(result)
    assert Path(final.path).is_file() and final.name.endswith(final.pass_name or "")
    assert result.fidelity is not None and result.fidelity[-1].cosine_similarity is not None
    assert result.fidelity[-1].cosine_similarity > 0.8
    assert not list((tmp_path / recipe).glob(".edgeopt-work-*"))  # no temp leftovers


def test_cli_json_with_latency(tmp_path: Path, tiny_cnn: Path, cnn_data) -> None:
    calib, eval_ = cnn_data
    p = edgeopt_cli("optimize", str(tiny_cnn), "--target", "local", "--recipe", "int8", "--calib", str(calib),
                    "--eval", str(eval_), "--out", str(tmp_path / "o"), "--json")
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)  # stdout holds only JSON
    assert "calibrating INT8 ranges" in p.stderr
    lat = [r["latency_ms_p50"] for r in result["fidelity"]]
    assert all(v is not None and v > 0 for v in lat)
    assert result["fidelity"][0]["speedup"] == 1.0


def test_an_input_shape_for_an_input_the_model_lacks_is_an_error_not_ignored(tmp_path: Path, tiny_cnn: Path) -> None:
    """`--input-shape nope=...` on a model whose input is `input` used to be ignored silently (session 19)."""
    p = edgeopt_cli("optimize", str(tiny_cnn), "-t", "local", "-r", "int8", "--out", str(tmp_path / "o"),
                    "--no-bench", "--input-shape", "nope=1x3x32x32")
    assert p.returncode == 2, p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert str(tiny_cnn) in line and "has inputs input but --input-shape names nope" in line
    assert not (tmp_path / "o").exists()  # failed before any work
    ok = edgeopt_cli("optimize", str(tiny_cnn), "-t", "local", "-r", "int8", "--out", str(tmp_path / "o2"),
                     "--no-bench", "--no-fidelity", "--input-shape", "input=2x3x32x32")
    assert ok.returncode == 0, ok.stderr
    # --shape, as bench, profile and sweep spell it, is the same option
    alias = edgeopt_cli("optimize", str(tiny_cnn), "-t", "local", "-r", "int8", "--out", str(tmp_path / "o3"),
                        "--no-bench", "--shape", "nope=1x3x32x32")
    assert alias.returncode == 2 and alias.stderr.strip() == line, alias.stderr


def test_random_calibration_warns_loudly(tmp_path: Path, tiny_cnn: Path) -> None:
    p = edgeopt_cli("optimize", str(tiny_cnn), "-t", "local", "-r", "int8", "--out", str(tmp_path / "o"),
                    "--no-bench")
    assert p.returncode == 0, p.stderr
    assert "NO CALIBRATION DATA" in p.stderr and "accuracy will be poor" in p.stderr
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["calibration"]["random"] is True
    assert any("NO CALIBRATION DATA" in w for w in manifest["warnings"])


@pytest.mark.parametrize(("target", "recipe", "message"), [
    ("coral-usb", "int4", "needs int4 or fp32 compute .* 'coral-usb' runs only int8"),
    ("jetson-nano", "int8", "produces int8 but target 'jetson-nano' runs only fp32, fp16"),
    ("coral-usb", "int8", "coral-usb.*tflite"),  # Coral takes TFLite only
    ("local", "int9", r"unknown recipe 'int9' \(did you mean 'int8'\?\)"),
])
def test_impossible_pairs_fail_before_any_work(tmp_path: Path, tiny_cnn: Path, target: str, recipe: str,
                                               message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # No TFLite converter installed, whatever the machine's tool directory holds: Coral INT8 then fails first.
    monkeypatch.setenv("EDGEOPT_TOOLS_DIR", str(tmp_path / "no-tools"))
    out = tmp_path / "never"
    with pytest.raises(InputError, match=message):
        edgeopt.optimize(tiny_cnn, target=target, recipe=recipe, out_dir=out)
    assert not out.exists()
    p = edgeopt_cli("optimize", str(tiny_cnn), "-t", target, "-r", recipe, "--out", str(out), "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["exit_code"] == 2
    assert not out.exists()


def test_missing_calibration_file_and_bad_model_fail_before_work(tmp_path: Path, tiny_cnn: Path) -> None:
    out = tmp_path / "never"
    with pytest.raises(InputError, match="calibration data .*missing.npz not found"):
        edgeopt.optimize(tiny_cnn, target="local", recipe="int8", calib=tmp_path / "missing.npz", out_dir=out)
    not_onnx = tmp_path / "model.onnx"
    not_onnx.write_text("hello")
    with pytest.raises(InputError, match="not an ONNX model"):
        edgeopt.optimize(not_onnx, target="local", recipe="int8", out_dir=out)
    assert not out.exists()


def test_user_recipe_path_with_an_unknown_option(tmp_path: Path, tiny_cnn: Path) -> None:
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("name: mine\ndescription: my recipe\npasses:\n  - pass: prune_magnitude\n"
                      "    config:\n      sparsity: 0.5\n")
    p = edgeopt_cli("optimize", str(tiny_cnn), "-t", "local", "-r", str(recipe), "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert f"{recipe}:6: unknown option 'sparsity' for pass 'prune_magnitude'" in p.stderr
    recipe.write_text("name: mine\ndescription: my recipe\npasses:\n  - pass: prune_magnitude\n"
                      "    config:\n      sparsity_ratio: 0.25\n      min_weight_elements: 64\n")
    result = edgeopt.optimize(tiny_cnn, target="local", recipe=recipe, out_dir=tmp_path / "o", bench=False)
    assert result.recipe == "mine" and onnx_final(result).report["layers_pruned"] > 0


def test_recipes_command_lists_and_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In this process (``main``): three interpreter starts less than ``edgeopt_cli``, the same output."""
    from edgeopt.cli.main import main

    capsys.readouterr()
    assert main(["recipes", "--json"]) == 0
    items = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert {"fp16", "int8", "int8-dynamic", "int4", "prune50", "prune30-int8", "distill-half"} <= set(items)
    assert items["int8"]["status"] == "ok" and items["int8"]["passes"] == ["cleanup", "quantize_int8"]
    assert main(["recipes", "show", "int8", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["config"][1]["config"]["per_channel"] is True
    assert main(["recipes", "show", "nope"]) == 2
    assert "unknown recipe 'nope'" in capsys.readouterr().err


def test_a_model_with_an_unsupported_op_fails_clearly(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], domain="com.example")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    path = tmp_path / "custom.onnx"
    onnx.save(model, str(path))
    p = edgeopt_cli("optimize", str(path), "-t", "local", "-r", "fp16", "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert "cleanup: onnxruntime cannot load the model" in p.stderr and "FancyOp" in p.stderr
    assert not list((tmp_path / "o").glob("*.onnx"))
