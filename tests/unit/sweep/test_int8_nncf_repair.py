"""NNCF's repairs of the INT8 search, on the host: an outlier in every calibration sample ruins NNCF's default
min-max ranges; its mean-quantile range estimator repairs them, so OpenVINO needs no layer in float."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from edgeopt.evaluation import resolve_metric, retention
from edgeopt.sweep.int8.nncf_repair import NncfRepair, host_retention, ov_outputs, quantize_ir, repairs_for, try_repairs

from .outlier_model import outlier_convnet, outlier_data

pytest.importorskip("nncf")
pytest.importorskip("openvino")

SIZE = 64
THRESHOLD = 0.95  # snr_db retention
SHAPES = {"x": [1, 4, SIZE, SIZE]}


def _model(path: Path, matmul: bool = False) -> Path:
    return outlier_convnet(path, SIZE, matmul=matmul, batch=1)


def test_only_applicable_repairs_are_listed(tmp_path: Path) -> None:
    conv, skipped = repairs_for(onnx.load(str(_model(tmp_path / "c.onnx"))))
    assert [r.name for r in conv] == ["fast_bias_correction", "range_mean_quantile", "bias_correction"]
    assert "MatMul" in skipped["smooth_quant"]
    with_mm, skipped = repairs_for(onnx.load(str(_model(tmp_path / "m.onnx", matmul=True))))
    assert with_mm[-1].name == "smooth_quant" and not skipped


def test_range_estimator_repairs_what_the_default_ruins(tmp_path: Path) -> None:
    src = _model(tmp_path / "m.onnx")
    calib_npz, eval_npz = outlier_data(tmp_path, SIZE, every_sample=True)  # a per-sample min-max sees it each time
    feeds = [{"x": c} for c in np.load(calib_npz)["x"]]
    evals = [{"x": e[None]} for e in np.load(eval_npz)["x"][:8]]
    ref, _ = ov_outputs(src, evals, SHAPES)
    metric = resolve_metric("snr_db")

    def build(rep: NncfRepair) -> tuple[Path, float, float]:
        xml = tmp_path / rep.name / "m.xml"
        seconds = quantize_ir(src, xml, rep, feeds, SHAPES)
        return xml, seconds, host_retention(xml, evals, lambda o, _: retention(metric, ref[0], o[0], None)[1], SHAPES)

    rows, winner = try_repairs(repairs_for(onnx.load(str(src)))[0], build, THRESHOLD)
    assert winner is not None and winner[0].name == "range_mean_quantile" and winner[1].is_file()
    assert [r["name"] for r in rows] == ["fast_bias_correction", "range_mean_quantile"], "cheapest passing first"
    assert rows[0]["host_retention"] < THRESHOLD <= rows[1]["host_retention"]
    assert rows[1]["options"] == {"range_estimator": "mean_quantile"}
