"""Numbers an agent sent that cannot be true: such a run is invalid with the reason, never a PASS.

A board is untrusted (docs/reliability.md, "Untrusted device"). The schema at the boundary
(:mod:`edgeopt.runners.agent_schema`) checked the types; this checks the values against the request and physics:
latencies finite and positive, the sample count what the request asked for and what the wall time allows, the
wall time, load time and memory non-negative. :func:`check_numbers` returns the reasons and the samples that can
be used for statistics (the finite, positive ones), so the report shows numbers, never ``nan``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from edgeopt_agent.protocol import MAX_SAMPLES, RawRun

from ..registry.kinds.tensor import DESCRIPTOR as TENSOR_KIND

# The fastest a stream of the agent's harness can time one inference (timer included): ~70 ns measured for a
# no-op on a 2-core Xeon; 50 ns is beyond any board. Also the rate the read limits assume
# (edgeopt.runners.limits.MAX_SAMPLES_PER_S).
MIN_SAMPLE_NS = 50
# The timed phase's wall time may exceed the sum of one stream's samples by the harness's own work, never the
# other way round; slack for clock granularity.
WALL_SLACK = 1.01
WALL_SLACK_NS = 1_000_000
# How much shorter than min_duration_s a (not truncated) timed phase may report.
DURATION_SLACK_S = 0.01


@dataclass(frozen=True)
class NumberCheck:
    """What :func:`check_numbers` found.

    Attributes:
        reasons: why the run is invalid (empty when every number is possible).
        samples_ns: the samples usable for statistics (finite and positive; all of them when none is bad).
    """

    reasons: list[str]
    samples_ns: list[int]


# The bounds come from the kind's metrics (edgeopt/registry/kinds/tensor.py): one declaration per metric.
LATENCY = TENSOR_KIND.metric("latency_ms")
LOAD = TENSOR_KIND.metric("load_ms")
MEMORY = TENSOR_KIND.metric("memory_mb")
POWER = TENSOR_KIND.metric("power_w")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_numbers(raw: RawRun) -> NumberCheck:
    """Why the numbers of a successful run cannot be true (the request is ``raw.request``, echoed back)."""
    samples = raw.samples_ns
    usable = _usable(samples)
    reasons: list[str] = []
    bad = len(samples) - len(usable)
    if bad:
        reasons.append(f"the device reported {bad} latency sample(s) that are not {LATENCY.bound_text} (NaN, "
                       "infinite, zero or negative): its timings cannot be trusted")
    reasons += _wall_and_counts(raw, usable)
    reasons += _other_numbers(raw)
    return NumberCheck(reasons=reasons, samples_ns=usable)


def _usable(samples: list[int]) -> list[int]:
    """The samples a latency admits, as ints. An honest run's are all ints within the bounds, which ``min`` and
    ``max`` show in C (a per-sample check cost ~1.5 s per million samples, and a run keeps up to 2 million);
    anything else is checked one by one."""
    if samples and set(map(type, samples)) == {int} and LATENCY.admits(min(samples)) and LATENCY.admits(max(samples)):
        return list(samples)  # the bounds are an interval: every int between two admitted ones is admitted
    admits = LATENCY.admits
    return [int(s) for s in samples if admits(s)]


def _wall_and_counts(raw: RawRun, usable: list[int]) -> list[str]:
    """The sample count against the request and the wall time, the wall time against the samples."""
    req = raw.request or {}
    streams = max(1, int(req.get("streams", 1) or 1))
    wall, n = raw.timed_wall_s, len(raw.samples_ns)
    if not _finite(wall) or wall < 0:
        return [f"the device reported a timed phase of {wall} s: a wall time must be a finite number >= 0"]
    reasons: list[str] = []
    wall_ns = wall * 1e9
    if n > streams * (wall_ns / MIN_SAMPLE_NS) + streams:
        reasons.append(f"the device reported {n:,} samples in {wall:.3g} s on {streams} stream(s): more than one "
                       f"inference every {MIN_SAMPLE_NS} ns per stream is impossible")
    if usable and sum(usable) > streams * wall_ns * WALL_SLACK + WALL_SLACK_NS:
        reasons.append(f"the device's samples add up to {sum(usable) / 1e9:.3g} s but its timed phase took "
                       f"{wall:.3g} s on {streams} stream(s): the latencies or the wall time are wrong")
    if raw.timed_inferences != n:
        reasons.append(f"the device reported {raw.timed_inferences} timed inferences but {n} samples")
    if n > MAX_SAMPLES:
        reasons.append(f"the device reported {n:,} samples: the agent keeps at most {MAX_SAMPLES:,}")
    if not raw.truncated and req.get("pacing_fps") is None and not reached_ceiling(n, streams):
        iterations, min_s = int(req.get("iterations", 0) or 0), float(req.get("min_duration_s", 0.0) or 0.0)
        if n < streams * iterations:
            reasons.append(f"the device reported {n} samples for {iterations} iterations on {streams} stream(s) "
                           "without being stopped: samples are missing")
        if wall < min_s - DURATION_SLACK_S:
            reasons.append(f"the device reported a timed phase of {wall:.3g} s, shorter than the {min_s:g} s "
                           "minimum it was asked for, without being stopped")
    return reasons


def reached_ceiling(samples: int, streams: int) -> bool:
    """True when a timed phase ended because it kept :data:`MAX_SAMPLES` samples (each stream its share), which
    may come before its iterations and minimum duration."""
    return samples >= max(1, streams) * max(1, MAX_SAMPLES // max(1, streams))


def _other_numbers(raw: RawRun) -> list[str]:
    """Load and first-inference times, warm-up and memory: within their metrics' bounds when given."""
    named = {"load_ms": (raw.load_ms, LOAD), "first_inference_ms": (raw.first_inference_ms, LOAD),
             "warm-up duration_s": (raw.warmup_done.get("duration_s"), LOAD),
             "warm-up iterations": (raw.warmup_done.get("iterations"), LOAD)}
    named.update({f"memory {k} (KiB)": (v, MEMORY) for k, v in raw.memory_kb.items()})
    for window in ("idle", "active"):  # the power the energy figures come from
        named[f"{window} power (W)"] = ((raw.power.get(window) or {}).get("avg_w"), POWER)
    return [f"the device reported {name} = {value}: it must be {spec.bound_text}"
            for name, (value, spec) in named.items() if value is not None and not spec.admits(value)]
