"""The INT8 search's range repair end to end (local agent, onnxruntime): a calibration outlier ruins min-max INT8,
the search repairs the ranges on the host instead of keeping layers in float, confirms on the device, and says per
layer what it did in sweep.json and in the deployment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgeopt.sweep import sweep
from tests.unit.sweep.outlier_model import outlier_convnet, outlier_data


def test_range_repair_replaces_the_float_set(tmp_path: Path) -> None:
    model = outlier_convnet(tmp_path / "outlier.onnx")
    calib, data = outlier_data(tmp_path)
    result = sweep(model, eval=data, calib=calib, recipes=["int8"], metric="snr_db", min_retention=0.95,
                   max_trials=6, out_dir=tmp_path / "out", iterations=20, min_duration_s=0.1,
                   runtimes=["onnxruntime"], objective="size")
    by = {lv.recipe: lv for lv in result.levels}
    assert not by["int8"].meets_retention, "min-max INT8 is ruined by the outlier"
    search = result.int8_search
    assert search is not None and search.chosen is not None
    assert search.float_nodes == [], "the repaired ranges keep every layer in INT8"
    assert search.chosen.label.startswith("range repair on onnxruntime")
    assert by["int8-search"].retention >= 0.95
    rr = search.range_repair
    assert rr is not None and rr["host_retention_before"] < 0.95 <= rr["host_retention"]
    assert rr["chosen"]["r1"] == "percentile"
    layers = search.layers_by_runtime["onnxruntime"]
    assert layers[0].node == "*" and layers[0].repair == "calibration:percentile"
    assert not [x for x in layers if x.repair == "float"]
    saved = json.loads((tmp_path / "out" / "sweep.json").read_text())["int8_search"]
    assert saved["layers_by_runtime"]["onnxruntime"][0]["repair"] == "calibration:percentile"
    if result.recommendation is not None and result.recommendation.recipe == "int8-search":
        deployed = json.loads((tmp_path / "out" / "recommended" / "deployment.json").read_text())
        assert deployed["int8_layers"][0]["repair"] == "calibration:percentile"


def test_nncf_repair_on_openvino_when_no_range_choice_suffices(tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    pytest.importorskip("nncf")
    model = outlier_convnet(tmp_path / "outlier.onnx", 64)
    calib, data = outlier_data(tmp_path, 64, every_sample=True)  # percentile keeps an outlier every sample has
    result = sweep(model, eval=data, calib=calib, recipes=["int8"], metric="snr_db", min_retention=0.95,
                   max_trials=6, out_dir=tmp_path / "out", iterations=20, min_duration_s=0.1,
                   runtimes=["openvino"], objective="size")
    search = result.int8_search
    assert search is not None and search.range_repair is not None
    assert search.range_repair["host_retention"] < 0.95, "no calibration method's ranges reach the threshold"
    tried = search.nncf_repairs["openvino"]["candidates"]
    assert [c["name"] for c in tried] == ["fast_bias_correction", "range_mean_quantile"]
    assert tried[0]["host_retention"] < 0.95 <= tried[1]["host_retention"]
    assert search.chosen is not None and search.chosen.label == "nncf repair on openvino: range_mean_quantile"
    assert search.float_nodes == [] and search.chosen.passed
    assert [x.repair for x in search.layers_by_runtime["openvino"]] == ["nncf:range_mean_quantile"]
