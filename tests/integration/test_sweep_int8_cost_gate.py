"""The INT8 search's cost gate end to end (local agent, onnxruntime, the outlier conv net whose min-max INT8 the
range repair fixes): where the INT8 ceiling cannot beat the fastest passing level the repair is skipped and says
why; where it can, the repair runs and says so. The headroom is the search plan's input, as the sweep passes it
(:func:`edgeopt.sweep.int8.cost_gate.headrooms` of the measured levels, tested in tests/unit/sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnxruntime as ort

from edgeopt.evaluation import parse_output, resolve_metric
from edgeopt.optimize import optimize_graph
from edgeopt.runners.local import LocalRunner
from edgeopt.sweep.cache import LevelCache
from edgeopt.sweep.int8.core import SearchPlan
from edgeopt.sweep.int8.cost_gate import Headroom
from edgeopt.sweep.int8.search import search_int8
from edgeopt.sweep.int8.steps import QUANT_OPS, search_recipe
from edgeopt.sweep.levels import LevelTable
from edgeopt.sweep.measure import Context
from edgeopt.sweep.options import level_settings
from edgeopt.sweep.result import Int8SearchResult
from edgeopt.sweep.runtimes import float_options
from tests.unit.sweep.outlier_model import outlier_convnet, outlier_data

RT = "onnxruntime"


def _search(tmp_path: Path, headroom: Headroom, threshold: float = 0.95, skip: dict[str, str] | None = None
            ) -> tuple[Int8SearchResult, list[dict[str, Any]]]:
    """``skip``: runtimes of the sweep besides onnxruntime whose search the sweep skipped (hopeless), with why."""
    rts = (RT, *(skip or {}))
    model = tmp_path / "outlier.onnx"
    if not model.exists():  # another threshold reads the same files (the calibration caches' key has their mtime)
        outlier_convnet(model)
        outlier_data(tmp_path)
    calib, data = tmp_path / "calib.npz", tmp_path / "eval.npz"
    ctx = Context(target="local", runner=LocalRunner(), eval_npz=data, labels=None,
                  metric=resolve_metric("snr_db", has_labels=False), selection=parse_output(None),
                  min_retention=threshold, measure=level_settings(iterations=20, min_duration_s=0.1, threads=1),
                  targets_dirs=(), versions={RT: ort.__version__, **{rt: "any" for rt in rts[1:]}},
                  runtime_options=float_options(list(rts)))
    events: list[dict[str, Any]] = []
    table = LevelTable(ctx, LevelCache(tmp_path / "cache"), {"model": "outlier"}, model, events.append)
    table("fp32", "fp32", RT, lambda: model)
    plan = SearchPlan(runtime=RT, rts=rts, out=tmp_path / "int8-search", calib=calib, max_trials=6,
                      max_seconds=300, headroom={RT: headroom}, skip=dict(skip or {}))
    return search_int8(model, ctx=ctx, plan=plan, run_level=table, emit=events.append), events


def _headroom(ceiling_ms: float, best_ms: float) -> Headroom:
    return Headroom(runtime=RT, ceiling=f"int8@{RT}", ceiling_ms=ceiling_ms, ceiling_ms_low=ceiling_ms * 0.95,
                    best=f"fp16@{RT}", best_ms=best_ms, best_ms_high=best_ms * 1.05)


def test_the_range_repair_is_skipped_when_the_ceiling_cannot_beat_the_best_passing_level(tmp_path: Path) -> None:
    search, events = _search(tmp_path, _headroom(ceiling_ms=8.0, best_ms=4.0))
    gate = search.cost_gate[RT]
    assert gate["can_beat"] is False and gate["best_passing"] == f"fp16@{RT}"
    assert gate["decisions"]["range_repair"].startswith("skipped: the INT8 ceiling int8@onnxruntime")
    assert search.range_repair is not None and search.range_repair["skipped"].startswith("cost gate:")
    assert not any(t.label.startswith("range repair") for t in search.trials)
    assert not (tmp_path / "int8-search" / "range-repair").exists(), "no calibration ran for the repair"
    assert "calibration" not in search.phase_seconds and search.phase_seconds["variants"] > 0
    assert any("no range repair on onnxruntime" in str(e.get("message")) for e in events)
    assert gate["decisions"]["variants_and_refine"].startswith("skipped:"), "all-INT8 variants cannot beat it either"
    assert [t.label for t in search.trials] == ["default"] and search.sensitivity == []
    # no mix there can beat it either: no per-layer profile is taken for a float set that would evaluate nothing
    assert gate["decisions"]["float_set"].startswith("skipped: the INT8 ceiling")
    assert search.float_sets[RT]["strategy"] == "skipped" and search.float_sets[RT]["profiled"] is False
    assert "gains_profile" not in search.phase_seconds and not (tmp_path / "int8-search" / "gains").exists()
    assert search.work == {"quantize_builds": 1, "calibrations": 1, "gain_profiles": 0, "device_evaluations": 0,
                           "device_trials": 1, "host_checks": 0}
    assert any("no float set on onnxruntime" in str(e.get("message")) for e in events)
    # nor is the search's choice timed as a level there: a mix keeps parts in float, it cannot beat the ceiling
    assert gate["decisions"]["level"].startswith("skipped: the INT8 ceiling")
    searched = [e for e in events if e.get("event") == "level" and e.get("recipe") == "int8-search"]
    assert len(searched) == search.work["device_trials"], searched  # the trial's own run, no adopted level after it


def test_the_range_repair_runs_and_is_recorded_when_the_ceiling_can_beat_it(tmp_path: Path) -> None:
    search, _ = _search(tmp_path, _headroom(ceiling_ms=2.0, best_ms=4.0))
    gate = search.cost_gate[RT]
    assert gate["can_beat"] is True and gate["headroom_ms"] > 0
    assert gate["decisions"]["range_repair"] == "ran"
    assert search.range_repair is not None and "skipped" not in search.range_repair
    assert search.chosen is not None and search.chosen.label.startswith("range repair on onnxruntime")
    assert search.float_nodes == [] and search.phase_seconds["calibration"] > 0
    assert search.range_repair["host_checks_reused"] == 0
    # each calibration method ran once; the min-max model is the default trial's, not quantized again
    methods = set(search.range_repair["calibration_seconds"])
    assert "minmax" in methods and not (tmp_path / "int8-search" / "range-repair" / "minmax").exists()
    assert search.work["calibrations"] == len(methods)
    assert search.work["quantize_builds"] == len(methods) + 1, "the other methods' builds and the repaired model"
    _same_as_a_minmax_build(tmp_path, search)
    again, _ = _search(tmp_path, _headroom(ceiling_ms=2.0, best_ms=4.0), threshold=0.9)  # another threshold
    assert again.range_repair is not None and again.range_repair["host_checks_reused"] >= 1
    assert again.phase_seconds.get("host_checks_within", 0.0) < search.phase_seconds["host_checks_within"]


def test_a_runtime_whose_search_was_skipped_gets_no_search_level(tmp_path: Path) -> None:
    """A runtime the sweep found hopeless (its full INT8 clearly slower than a passing level) cannot win with a mix
    of it: the search's choice is timed on the searched runtime only (issue 32: ~17 s of a detector's sweep)."""
    why = "int8 search on openvino skipped: its full INT8 model (int8, 9.00 ms) is 2.25x slower than fp16"
    search, events = _search(tmp_path, _headroom(ceiling_ms=2.0, best_ms=4.0), skip={"openvino": why})
    assert search.chosen is not None and search.skipped_runtimes == {"openvino": why}
    timed = {(e["recipe"], e["runtime"]) for e in events if e.get("event") == "level"}
    assert ("int8-search", RT) in timed, timed
    assert not any(rt == "openvino" for _, rt in timed), timed
    assert "openvino" not in search.float_sets and "openvino" not in search.cost_gate


def _same_as_a_minmax_build(tmp_path: Path, search: Int8SearchResult) -> None:
    """The default trial's model is byte for byte the range repair's min-max build (same base, cached ranges)."""
    cfg = {"op_types_to_quantize": QUANT_OPS, "calibration_method": "minmax",
           "advanced": {"calibration_cache": str(next((tmp_path / "int8-search" / "calib").glob("minmax-*.json")))}}
    res = optimize_graph(tmp_path / "int8-search" / "base" / "named.onnx", target="local", calib=tmp_path / "calib.npz",
                         recipe=search_recipe("minmax", [{"pass": "quantize_int8", "config": cfg}]),
                         out_dir=tmp_path / "minmax-build", fidelity=False, bench=False)
    default = next(t for t in search.trials if t.label == "default")
    assert Path(res.final.path).read_bytes() == Path(default.artifact).read_bytes()
