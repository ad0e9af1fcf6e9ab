"""Per-tensor range repair of the INT8 search: an activation whose min-max range one calibration outlier ruins is
repaired by another method's range, chosen on the host, built by onnxruntime, and fewer layers stay float."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import onnx
import pytest
from onnx import numpy_helper

from edgeopt.calib import DataSource
from edgeopt.evaluation import resolve_metric
from edgeopt.evaluation.select import OutputSelection
from edgeopt.passes.quantize_int8 import QuantizeInt8Config, QuantizeInt8Pass
from edgeopt.sweep.int8.float_sets import smallest_passing_prefix
from edgeopt.sweep.int8.host_eval import HostEval
from edgeopt.sweep.int8.qdq_surgery import keep_float, quantized_nodes
from edgeopt.sweep.int8.range_repair import activation_qparams, choose_ranges, consumers, load_ranges, with_ranges

from ..passes.builders import Recorder, artifact, context
from .outlier_model import outlier_convnet, outlier_data

OPS = ["Conv", "MatMul", "Gemm"]
THRESHOLD = 0.95  # snr_db retention: 13 dB


def _data(tmp_path: Path) -> tuple[DataSource, Path]:
    calib, eval_npz = outlier_data(tmp_path)
    return DataSource(calib), eval_npz


def _quantize(tmp_path: Path, src: Path, calib: DataSource, name: str, rec: Recorder | None = None,
              **cfg: object) -> onnx.ModelProto:
    out = QuantizeInt8Pass(QuantizeInt8Config.model_validate({"op_types_to_quantize": OPS, "reduce_range": False,
                                                              **cfg})).run(
        artifact(src), context(tmp_path, f"{name}.onnx", calibration=calib, reporter=rec or Recorder()))
    return onnx.load(str(out.path))


Ranges = dict[str, dict[str, tuple[float, float]]]


def _all_methods(tmp_path: Path) -> tuple[Path, Path, dict[str, onnx.ModelProto], Ranges]:
    src = outlier_convnet(tmp_path / "m.onnx")
    calib, eval_npz = _data(tmp_path)
    caches = {m: tmp_path / "calib" / f"{m}.json" for m in ("minmax", "percentile", "entropy")}
    models = {m: _quantize(tmp_path, src, calib, m, calibration_method=m,
                           advanced={"calibration_cache": str(c), "num_bins": 512}) for m, c in caches.items()}
    return src, eval_npz, models, {m: load_ranges(c) for m, c in caches.items()}


def test_range_repair_keeps_fewer_layers_float(tmp_path: Path) -> None:
    src, eval_npz, models, ranges = _all_methods(tmp_path)
    assert ranges["minmax"]["r1"][1] > 100 > 10 * ranges["percentile"]["r1"][1], "the outlier sets r1's min-max"
    assert ranges["entropy"]["r1"][1] < ranges["minmax"]["r1"][1], "entropy with its bins (quantize_static: = min-max)"
    base = onnx.load(str(src))
    host = HostEval(base, eval_npz, resolve_metric("snr_db"), OutputSelection(), None)

    def score(methods: Mapping[str, str]) -> float:
        donors = {t: models[m] for t, m in methods.items() if m != "minmax"}
        return host.score(with_ranges(models["minmax"], donors))[0]

    choice = choose_ranges(list(activation_qparams(models["minmax"])), ranges, score, THRESHOLD)
    assert choice.retention_before < THRESHOLD <= choice.retention
    assert choice.methods["r1"] == "percentile" and choice.methods["x"] == "percentile"
    assert choice.whole_model["percentile"] == round(choice.retention, 6)

    def float_layers(qdq: onnx.ModelProto) -> list[str]:
        ranking = quantized_nodes(qdq, OPS)  # in graph order: conv1, conv2, conv3
        prefix = smallest_passing_prefix([""] + ranking, lambda fs: host.score(keep_float(qdq, base, fs, OPS))[0]
                                         >= THRESHOLD, lambda: True)
        assert prefix is not None
        return [n for n in prefix if n]

    repaired = with_ranges(models["minmax"], {t: models[m] for t, m in choice.methods.items()})
    assert float_layers(repaired) == [] and len(float_layers(models["minmax"])) >= 2, "min-max needs conv1, conv2"
    assert consumers(models["minmax"], "r1") == ["conv2"]


def test_swapped_ranges_equal_onnxruntime_overrides_and_the_cache_is_reused(tmp_path: Path) -> None:
    src, _, models, ranges = _all_methods(tmp_path)
    rec = Recorder()
    swap = ("r1", "y")  # conv2's input (its int32 bias follows the range) and the graph output
    built = _quantize(tmp_path, src, DataSource(tmp_path / "calib.npz"), "overridden", rec,
                      tensor_ranges={t: dict(zip(("rmin", "rmax"), ranges["percentile"][t], strict=True))
                                     for t in swap},
                      advanced={"calibration_cache": str(tmp_path / "calib" / "minmax.json")})
    assert not rec.progress_events, "the min-max ranges come from the cache: no calibration run"
    assert ranges["percentile"]["y"] != ranges["minmax"]["y"]
    swapped = with_ranges(models["minmax"], {t: models["percentile"] for t in swap})
    assert _inits(built) == _inits(swapped)
    assert _inits(swapped) != _inits(models["minmax"])
    assert [n.input for n in built.graph.node] == [n.input for n in swapped.graph.node]


def _inits(m: onnx.ModelProto) -> dict[str, bytes]:
    return {t.name: numpy_helper.to_array(t).tobytes() for t in m.graph.initializer}


def test_choose_ranges_picks_per_tensor_and_says_why() -> None:
    ranges = {"minmax": {"a": (0.0, 100.0), "b": (0.0, 10.0), "c": (0.0, 1.0)},
              "percentile": {"a": (0.0, 2.0), "b": (0.0, 1.0), "c": (0.0, 1.0)}}
    gains = {("a", "percentile"): 0.2, ("b", "percentile"): -0.3}  # clipping b hurts: whole-model percentile loses
    calls: list[dict[str, str]] = []

    def score(methods: Mapping[str, str]) -> float:
        calls.append(dict(methods))
        return 0.5 + sum(gains.get((t, m), 0.0) for t, m in methods.items())

    choice = choose_ranges(["a", "b", "c"], ranges, score, 0.9)
    assert choice.whole_model == {"minmax": 0.5, "percentile": 0.4}
    assert choice.methods == {"a": "percentile"} and choice.retention == 0.7
    rows = {r["tensor"]: r for r in choice.rows}
    assert rows["a"]["why"].startswith("percentile range [0, 2]: host retention 0.5000 -> 0.7000")
    assert rows["b"]["method"] == "minmax" and rows["b"]["why"].startswith("kept minmax")
    assert "c" not in rows, "methods that agree on a tensor cost no check"
    assert [list(c) for c in calls[2:]] == [["a"], ["a", "b"]], "the widest disagreement first"


def test_ranges_that_barely_move_the_score_skip_entropy_and_the_per_tensor_checks():
    """PP-OCRv4 det at 0.99: min-max 0.681, percentile 0.691 (3 % of the gap): the error is not in the activation
    ranges, so the costly entropy calibration and per-tensor checks are skipped; an outlier model is not."""
    from edgeopt.sweep.int8.repair_step import _hopeless, _share

    det = {"minmax": 0.681, "percentile": 0.691}.__getitem__
    assert _share(det, 0.99) == pytest.approx(0.0324, abs=1e-3) and _hopeless(det, 0.99)
    outlier = {"minmax": 0.58, "percentile": 0.90}.__getitem__
    assert not _hopeless(outlier, 0.95)
    passing = {"minmax": 0.995, "percentile": 0.99}.__getitem__  # no gap: nothing to repair, never "hopeless"
    assert not _hopeless(passing, 0.99)
