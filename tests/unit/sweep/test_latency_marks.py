"""How a level's latency is marked in the sweep's table, and when a share counts as interference."""

from __future__ import annotations

from edgeopt.cli.sweep_cmd import INTERFERENCE_MARK, SINGLE_RUN_MARK, _latency_mark
from edgeopt.sweep.measure import INTERFERENCE_PCT, interfered
from edgeopt.sweep.result import Level


def _level(**update: object) -> Level:
    base = Level(recipe="fp32", runtime="onnxruntime", runtime_version="", artifact="m.onnx", size_bytes=1,
                 latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None, energy_mj=None, energy_source=None,
                 metric="cosine", metric_value=1.0, retention=1.0, meets_retention=True, meets_budget=True,
                 passed=True, valid=True, cached=False)
    return base.model_copy(update=update)


def test_marks() -> None:
    assert _latency_mark(_level(latency_confirm_rounds=3)) == " "
    assert _latency_mark(_level(single_run=True)) == SINGLE_RUN_MARK
    assert _latency_mark(_level(single_run=True, interference=True, host_cpu_busy_pct=60.0)) == INTERFERENCE_MARK


def test_threshold_is_a_share_and_unknown_is_not_flagged() -> None:
    assert not interfered(None)
    assert not interfered(INTERFERENCE_PCT - 0.1)
    assert interfered(INTERFERENCE_PCT) and interfered(100.0)


def test_old_levels_read_back_unconfirmed() -> None:
    """A cache entry written before the confirmation existed reads back with 0 rounds: it is confirmed again."""
    old = {k: v for k, v in _level().model_dump(mode="json").items()
           if k not in {"latency_ms_first_pass", "latency_confirm_rounds", "single_run", "host_cpu_busy_pct",
                        "interference"}}
    lv = Level.model_validate(old)
    assert lv.latency_confirm_rounds == 0 and not lv.interference and lv.host_cpu_busy_pct is None
