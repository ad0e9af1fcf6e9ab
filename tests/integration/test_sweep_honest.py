"""Honest levels end to end: a recipe that changes nothing is shown as 'no change (= fp32)', never recommended,
and its warning reaches sweep.json and the progress output (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt.sweep import sweep
from tests.unit.sweep.test_honest import conv_only


def test_int4_on_a_conv_only_model_is_no_change_and_never_recommended(tmp_path: Path) -> None:
    model = conv_only(tmp_path / "conv.onnx")
    rng = np.random.default_rng(0)
    data = tmp_path / "eval.npz"
    np.savez(data, x=rng.standard_normal((8, 3, 16, 16)).astype(np.float32))
    events: list[dict[str, Any]] = []
    result = sweep(model, eval=data, recipes=["int4"], metric="cosine", min_retention=0.9,
                   runtimes=["onnxruntime", "openvino"], iterations=20, min_duration_s=0.1, int8_search=False,
                   out_dir=tmp_path / "out", progress=events.append)
    by = {lv.recipe: lv for lv in result.levels}
    assert by["int4"].no_change and by["int4"].details["no_change"] is True
    assert by["int4"].passed  # it meets the threshold (it is the model) ...
    assert result.recommendation is not None and result.recommendation.recipe != "int4"  # ... but is never chosen
    assert any("int4" in w and "no change (= fp32)" in w for w in result.warnings), result.warnings
    doc = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert any("no change" in w for w in doc["warnings"])
    assert [lv["no_change"] for lv in doc["levels"] if lv["recipe"] == "int4"] == [True, True]
    assert any(e.get("event") == "warning" and "no change" in e["message"] for e in events)
    assert result.threads >= 1 and doc["threads"] == result.threads
