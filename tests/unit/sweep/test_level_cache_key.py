"""A sweep level is read back from the cache only when everything it depends on is the same: the metric's name and
every parameter in effect are in the key (the unit half of ``tests/integration/test_task_metrics.py``'s sweep test,
which used to check each case with a CLI sweep of its own)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edgeopt.evaluation import MetricSpec, resolve_metric
from edgeopt.sweep.cache import LevelCache, cache_key
from edgeopt.sweep.levels import LevelTable
from edgeopt.sweep.result import Level

CLASSES = "0,slice=[:,4:,:]"


def metric_key(**spec: Any) -> dict[str, Any]:
    return resolve_metric(MetricSpec(**spec)).key()


def parts(**metric: Any) -> dict[str, Any]:
    """What every level of one sweep shares (as ``sweep/api.py`` builds it), with the given metric request."""
    return {"model": "ab" * 32, "target": "local", "runner": "local", "eval": "e1", "metric": metric_key(**metric),
            "output": CLASSES, "fps": None, "threads": 2}


def test_the_metric_key_is_the_name_and_every_parameter_in_effect() -> None:
    assert metric_key(name="agreement", axis=1, score_threshold=0.25) == {
        "name": "agreement", "axis": 1, "score_threshold": 0.25}
    # the defaults are filled in: the CLI's `--metric detection` reports (and keys) axis, score and IoU thresholds
    assert metric_key(name="detection") == {"name": "detection", "axis": 1, "score_threshold": 0.25,
                                            "iou_threshold": 0.5}
    assert metric_key(name="mask_iou", mask_threshold=0.3) == {"name": "mask_iou", "mask_threshold": 0.3}


def test_another_metric_or_parameter_is_another_key_the_same_request_the_same_key() -> None:
    agree = cache_key(**parts(name="agreement", axis=1, score_threshold=0.25))
    det = cache_key(**parts(name="detection"))
    stricter = cache_key(**parts(name="detection", score_threshold=0.5))
    other_iou = cache_key(**parts(name="detection", iou_threshold=0.7))
    assert len({agree, det, stricter, other_iou}) == 4  # another metric, another threshold: measured again
    assert cache_key(**parts(name="detection")) == det  # the same request again: read back
    assert cache_key(**parts(name="detection", axis=1, score_threshold=0.25, iou_threshold=0.5)) == det  # = defaults
    assert cache_key(**{**parts(name="detection"), "output": "0"}) != det  # another output selection


def test_cache_key_is_stable_and_order_free() -> None:
    a = cache_key(model="m", metric={"name": "detection", "axis": 1}, recipe={"b": 2, "a": 1})
    assert a == cache_key(recipe={"a": 1, "b": 2}, metric={"axis": 1, "name": "detection"}, model="m")
    assert len(a) == 32 and a != cache_key(model="m", metric={"name": "detection", "axis": 0}, recipe={"b": 2, "a": 1})


@dataclass
class FakeContext:
    """What :class:`LevelTable` asks of its context: versions, options, the threshold, and a level on a miss."""

    min_retention: float = 0.99
    versions: dict[str, str] = field(default_factory=lambda: {"onnxruntime": "1.0"})
    measured: list[str] = field(default_factory=list)
    served: Any = None  # no served agent: every level timed when built

    def options(self, runtime: str, override: dict[str, Any] | None = None) -> dict[str, Any]:
        return dict(override or {})

    def level(self, artifact: Path, runtime: str, name: str, reference: Path, facts: Any, options: Any,
              defer: bool = False) -> Level:
        self.measured.append(name)
        return Level(recipe=name, runtime=runtime, runtime_version="1.0", artifact=str(artifact), size_bytes=1,
                     latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None, energy_mj=None, energy_source=None,
                     metric="detection", metric_value=1.0, retention=1.0, meets_retention=True, meets_budget=True,
                     passed=True, valid=True, cached=False, details=dict(facts or {}))


@pytest.mark.parametrize(("second", "cached"), [
    ({"name": "detection"}, True),
    ({"name": "detection", "score_threshold": 0.5}, False),
    ({"name": "agreement", "axis": 1, "score_threshold": 0.25}, False),
])
def test_a_level_is_read_back_only_under_the_same_metric_and_parameters(
        tmp_path: Path, second: dict[str, Any], cached: bool) -> None:
    model = tmp_path / "m.onnx"
    ctx = FakeContext()
    levels = []
    for metric in ({"name": "detection"}, second):  # two sweeps into one output directory
        table = LevelTable(ctx, LevelCache(tmp_path / "cache"), parts(**metric), model, lambda event: None)  # type: ignore[arg-type]
        levels.append(table("fp16", "fp16", "onnxruntime", lambda: model))
    assert [lv.cached for lv in levels] == [False, cached]
    assert ctx.measured == (["fp16"] if cached else ["fp16", "fp16"])


def test_a_search_trial_adopted_as_a_level_is_measured_once_even_without_the_cache(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"x")
    ctx = FakeContext()
    table = LevelTable(ctx, LevelCache(tmp_path / "cache", enabled=False), parts(name="detection"), model,  # type: ignore[arg-type]
                       lambda event: None)
    cfg = {"int8-search": {"nodes_to_exclude": ["a"]}, "base": "m.onnx"}
    trial = table(cfg, "int8-search", "onnxruntime", lambda: model, {"search": "trial 1"}, keep=False)
    adopted = table(cfg, "int8-search", "onnxruntime", lambda: model, {"searched_on": "onnxruntime"})
    other = table({**cfg, "base": "other"}, "int8-search", "onnxruntime", lambda: model)
    assert ctx.measured == ["int8-search", "int8-search"]  # the trial and the other config; not the adoption
    assert adopted.latency_ms == trial.latency_ms and not adopted.cached
    assert adopted.details == {"search": "trial 1", "searched_on": "onnxruntime"}
    assert table.levels == [adopted, other]
