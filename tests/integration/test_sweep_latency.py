"""Every latency of the sweep's table confirmed in interleaved rounds, and a level measured beside other work flagged
(issue 21 item 6), through the real local agent."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from edgeopt.evaluation import parse_output, resolve_metric
from edgeopt.runners.base import Runner
from edgeopt.runners.local import LocalRunner
from edgeopt.runners.served import agent_session
from edgeopt.sweep.api import level_settings
from edgeopt.sweep.confirm import ROUNDS, confirm_levels
from edgeopt.sweep.measure import INTERFERENCE_PCT, Context, interfered
from edgeopt.sweep.result import Level
from tests.unit.sweep.test_ranking import conv_model

linux_only = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="the agent reads /proc/stat (Linux only)")
BURN = "import time\nend = time.time() + {s}\nwhile time.time() < end:\n    pass\n"


def _ctx(tmp_path: Path, served: Runner | None = None) -> Context:
    np.savez(tmp_path / "eval.npz", x=np.zeros((1, 16, 64, 64), np.float32))
    return Context(target="local", runner=LocalRunner(), eval_npz=tmp_path / "eval.npz", labels=None,
                   metric=resolve_metric("cosine", has_labels=False), selection=parse_output(None),
                   min_retention=0.9, measure=level_settings(threads=1), targets_dirs=(),
                   versions={"onnxruntime": ""}, served=served)


def _level(recipe: str, path: Path, latency_ms: float) -> Level:
    return Level(recipe=recipe, runtime="onnxruntime", runtime_version="", artifact=str(path),
                 size_bytes=path.stat().st_size, latency_ms=latency_ms, latency_ms_p99=latency_ms,
                 memory_mb_peak=None, energy_mj=None, energy_source=None, metric="cosine", metric_value=1.0,
                 retention=1.0, meets_retention=True, meets_budget=True, passed=True, valid=True, cached=False,
                 latency_ms_first_pass=latency_ms, single_run=True)


def test_confirmation_replaces_a_wrong_first_pass(tmp_path: Path) -> None:
    """A first pass 1000x off (as a disturbed run would be, only more so) is replaced by the rounds' median; the
    first pass is kept beside it, and a confirmed level is not measured again."""
    model = conv_model(tmp_path / "m.onnx", channels=16, kernel=3)
    levels = [_level("slow-first", model, 1000.0), _level("fine", model, 1.0)]
    with agent_session(LocalRunner()) as served:  # the rounds in one served agent, as the sweep runs them
        ctx = _ctx(tmp_path, served)
        out = confirm_levels(ctx, levels)
    for lv in out:
        assert lv.latency_confirm_rounds == ROUNDS + 1 and not lv.single_run  # + the first pass
        assert lv.latency_ms_low is not None and lv.latency_ms_high is not None
        assert lv.latency_ms_low <= lv.latency_ms <= lv.latency_ms_high
        assert lv.host_cpu_busy_pct is None or 0 <= lv.host_cpu_busy_pct <= 100
    assert out[0].latency_ms_first_pass == 1000.0 and out[0].latency_ms < 100
    assert out[0].latency_ms / out[1].latency_ms == pytest.approx(1.0, rel=1.0)  # the same model, the same order
    assert confirm_levels(ctx, out) == out  # nothing left to confirm: no run
    assert confirm_levels(ctx, levels, rounds=0) == levels  # off: every level stays single-run


def _others_now(seconds: float = 1.0) -> float:
    """Other processes' share of the machine right now (the agent's measure, taken here)."""
    from edgeopt_agent.cpu_share import CpuShare

    share = CpuShare()
    time.sleep(seconds)
    return float(share.stop().get("others_cpu_pct", 0.0))


@linux_only
def test_burner_beside_a_measurement_is_flagged(tmp_path: Path) -> None:
    """One busy-looping process per core (bounded: 60 s) beside a 1-thread measurement: the other processes hold
    at least the share of the cores the runtime does not use, far above the threshold on any core count."""
    model = conv_model(tmp_path / "m.onnx", channels=16, kernel=3)
    ctx = _ctx(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", BURN.format(s=60)]) for _ in range(min(os.cpu_count() or 1, 16))]
    try:
        time.sleep(0.3)
        out = confirm_levels(ctx, [_level("burned", model, 1.0)], rounds=1)[0]
        bench = ctx.latency(model, "onnxruntime")
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert out.interference and out.host_cpu_busy_pct is not None and out.host_cpu_busy_pct >= INTERFERENCE_PCT
    share = bench.environment["cpu_during_timed"]
    assert share["others_cpu_pct"] >= INTERFERENCE_PCT and share["cores"] == os.cpu_count()


@linux_only
def test_quiet_measurement_is_not_flagged(tmp_path: Path) -> None:
    """Without a burner, the flag follows what else runs: not flagged on a quiet machine (skipped on a busy one,
    where the other processes' share is the truth the flag reports)."""
    if _others_now() >= INTERFERENCE_PCT / 2:
        pytest.skip("the machine is busy with other work: a quiet measurement cannot be taken here")
    model = conv_model(tmp_path / "m.onnx", channels=16, kernel=3)
    out = confirm_levels(_ctx(tmp_path), [_level("quiet", model, 1.0)], rounds=1)[0]
    if _others_now() >= INTERFERENCE_PCT / 2:
        pytest.skip("other work started during the measurement")
    assert out.host_cpu_busy_pct is not None and not out.interference
    assert not interfered(out.host_cpu_busy_pct)
