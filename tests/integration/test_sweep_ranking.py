"""Rankings that survive noise, through the real agent: two levels equal in speed by construction (the same graph,
one file padded with an initializer nobody reads) -> the smaller wins, in two runs of the ranking (issue 14)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from edgeopt.evaluation import parse_output, resolve_metric
from edgeopt.runners.local import LocalRunner
from edgeopt.sweep.api import level_settings
from edgeopt.sweep.measure import Context
from edgeopt.sweep.rank_levels import rank
from edgeopt.sweep.result import Level
from tests.unit.sweep.test_ranking import conv_model


def _level(recipe: str, path: Path) -> Level:
    return Level(recipe=recipe, runtime="onnxruntime", runtime_version="", artifact=str(path),
                 size_bytes=path.stat().st_size, latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None,
                 energy_mj=None, energy_source=None, metric="cosine", metric_value=1.0, retention=1.0,
                 meets_retention=True, meets_budget=True, passed=True, valid=True, cached=False)


def test_equal_latency_levels_the_smaller_wins_twice(tmp_path: Path) -> None:
    small = conv_model(tmp_path / "small.onnx", channels=16, kernel=3)
    big = conv_model(tmp_path / "big.onnx", channels=16, kernel=3, pad_bytes=4 << 20)
    np.savez(tmp_path / "eval.npz", x=np.zeros((1, 16, 64, 64), np.float32))
    ctx = Context(target="local", runner=LocalRunner(), eval_npz=tmp_path / "eval.npz", labels=None,
                  metric=resolve_metric("cosine", has_labels=False), selection=parse_output(None), min_retention=0.9,
                  measure=level_settings(threads=1), targets_dirs=(), versions={"onnxruntime": ""})
    # the big one listed first and "measured" faster by its single run: the rounds must not trust that
    levels = [_level("big", big), _level("small", small).model_copy(update={"latency_ms": 1.05})]
    for _ in range(2):
        ranked, rec, facts = rank(ctx, levels)
        assert rec is not None and facts is not None
        assert rec.recipe == "small", facts
        # equal retention (1.0 both): the tie goes to the smaller artifact, and the reason says so (issue 21)
        assert facts["dominated_by"] == {} and rec.reason == facts["reason"], facts
        if not facts["beaten_by"]:  # a loaded machine may still separate them, in small's favour
            assert facts["rule"] == "tie: smaller artifact", facts
            assert rec.reason == "small@onnxruntime: tie within noise with big@onnxruntime: smaller artifact"
        assert all(lv.latency_rounds == 5 and lv.latency_ms_low <= lv.latency_ms_round_median <= lv.latency_ms_high
                   for lv in ranked if lv.latency_ms_low is not None)
