"""Eval data that cannot tell levels apart is called out by the sweep, optimize's fidelity table and qualify's
retention gate (issue 23, item 8).

The data: eight copies of one random image, so mobilenet-tiny (tests/conftest.py) predicts the same class for
every sample and every level "retains" 100 %. Before, the sweep recommended a level with no word about it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx

from edgeopt.cli.main import main
from edgeopt.optimize.fidelity import measure_fidelity
from edgeopt.qualify.gate_spec import Gates
from edgeopt.qualify.gates import GateContext, evaluate
from edgeopt.qualify.retention import HostOnnxEvaluator, _artifact
from tests.synthetic_results import bench_result


def _same_image(model: Path, path: Path, n: int = 8) -> Path:
    inp = onnx.load(str(model)).graph.input[0]
    dims = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    one = np.random.default_rng(0).standard_normal([1, *dims[1:]]).astype(np.float32)
    np.savez(path, **{inp.name: np.repeat(one, n, axis=0)})
    return path


def test_sweep_says_the_data_cannot_tell_levels_apart(tiny_cnn: Path, tmp_path: Path, capsys):
    data = _same_image(tiny_cnn, tmp_path / "same.npz")
    args = ["sweep", str(tiny_cnn), "--eval", str(data), "--recipes", "fp16", "--runtimes", "onnxruntime",
            "--iterations", "10", "--min-duration", "0.05", "--no-int8-search", "--objective", "size",
            "--out", str(tmp_path / "out")]
    code = main([*args, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    why = doc["eval_cannot_tell"]
    assert why and "predicts class" in why and "for every one of the 8 samples" in why
    assert doc["recommendation"]["reason"].startswith("retention untested by this data")
    assert why in doc["warnings"]
    main(args)  # again from the cache: the reference is measured once more to tell
    text = capsys.readouterr().out
    assert "retention untested by this data" in text and "cannot tell levels apart" in text


def test_fidelity_and_the_retention_gate_say_so(tiny_cnn: Path, tmp_path: Path):
    data = _same_image(tiny_cnn, tmp_path / "same.npz")
    feeds = [{k: v[i:i + 1] for k, v in np.load(data).items()} for i in range(8)]
    said: list[str] = []
    ref = _artifact(tiny_cnn)
    measure_fidelity(ref, [ref], feeds, data="eval", warn=said.append)
    assert len(said) == 1 and "predicts class" in said[0]

    shapes = {onnx.load(str(tiny_cnn)).graph.input[0].name: [1, 3, 32, 32]}
    ret = HostOnnxEvaluator().evaluate(tiny_cnn, tiny_cnn, data=data, samples=8, metric="auto", shapes=shapes,
                                       seed=0)
    assert ret.retention == 1.0 and ret.cannot_tell and "predicts class" in ret.cannot_tell
    (gate,) = evaluate(Gates.model_validate({"retention": {"min_ratio": 0.98}}),
                       GateContext(device="dev", bench=bench_result(), retention=ret))
    assert "UNTESTED: evaluation data cannot tell levels apart" in gate.detail

