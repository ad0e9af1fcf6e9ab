"""Bounded by design, not by request (docs/reliability.md, "Untrusted device: transport"): the result budget is
fixed whatever the requested duration, the agent keeps at most MAX_SAMPLES samples (so an honest run always fits
it), a run that ended at that ceiling is valid, and progress events pass a rate gate with the rest counted."""

from __future__ import annotations

import pytest

from edgeopt.metrics.physics import LATENCY, check_numbers
from edgeopt.runners.event_gate import EVENT_BURST, EVENTS_PER_S, EventGate
from edgeopt.runners.limits import RESULT_BYTES_PER_SAMPLE, RESULT_MAX_BYTES, RESULT_REST_BYTES, ReadLimits
from edgeopt_agent import harness
from edgeopt_agent.protocol import MAX_SAMPLES, RawRun, Request


def test_the_result_budget_does_not_grow_with_the_request():
    short = ReadLimits.for_request(Request(model_path="m", min_duration_s=0.1, iterations=10))
    long = ReadLimits.for_request(Request(model_path="m", min_duration_s=600.0, iterations=10**9, streams=64))
    assert short.result_bytes == long.result_bytes == RESULT_MAX_BYTES  # was 64 MiB + 64 MiB per second: 38 GiB
    assert MAX_SAMPLES * RESULT_BYTES_PER_SAMPLE + RESULT_REST_BYTES <= RESULT_MAX_BYTES  # the kept samples fit


def test_the_timed_loop_ends_at_the_sample_ceiling_not_at_min_duration():
    now = harness.time.perf_counter_ns()
    samples, truncated = harness._timed_loop(lambda: None, 10, now + 3600 * 10**9, now + 7200 * 10**9, None, 0,
                                             most=5000)
    assert len(samples) == 5000 and not truncated


def _raw(n: int, *, min_s: float, wall_s: float, streams: int = 1) -> RawRun:
    req = Request(model_path="m.onnx", iterations=100, min_duration_s=min_s, streams=streams)
    return RawRun(status="ok", request=req.to_dict(), runtime={"name": "null", "version": "1"},
                  samples_ns=[200] * n, timed_wall_s=wall_s, timed_inferences=n)


def test_a_run_that_reached_the_ceiling_early_is_valid_and_more_samples_than_it_are_not():
    assert check_numbers(_raw(MAX_SAMPLES, min_s=10.0, wall_s=0.5)).reasons == []
    short = check_numbers(_raw(MAX_SAMPLES - 10, min_s=10.0, wall_s=0.5)).reasons
    assert any("shorter than the 10 s minimum" in r for r in short)
    over = check_numbers(_raw(MAX_SAMPLES + 1, min_s=0.1, wall_s=1.0)).reasons
    assert any(f"at most {MAX_SAMPLES:,}" in r for r in over)
    three = MAX_SAMPLES // 3 * 3  # each of three streams keeps its share
    assert check_numbers(_raw(three, min_s=10.0, wall_s=0.5, streams=3)).reasons == []


@pytest.mark.parametrize("samples", [[200, 0, 300], [200, -5, 300], [200, float("nan"), 300], [200, True, 300],
                                     [200, 250.0, 300], [200, 300, 400]])
def test_each_sample_a_latency_cannot_be_is_dropped_and_named(samples: list) -> None:
    """The all-ints-in-bounds shortcut (min and max) and the per-sample check agree."""
    raw = RawRun(status="ok", request=Request(model_path="m.onnx", iterations=3).to_dict(),
                 runtime={"name": "null", "version": "1"}, samples_ns=samples, timed_wall_s=1.0, timed_inferences=3)
    check = check_numbers(raw)
    expected = [int(s) for s in samples if LATENCY.admits(s)]
    assert check.samples_ns == expected and all(type(s) is int for s in check.samples_ns)
    assert any("latency sample(s)" in r for r in check.reasons) == (len(expected) < len(samples)), check.reasons


def test_a_flood_of_events_is_passed_at_a_bounded_rate_and_summarised():
    t = [0.0]
    seen: list[dict] = []
    gate = EventGate(seen.append, "ssh:pi@board:22", clock=lambda: t[0])
    for i in range(200_000):
        t[0] = i * 1e-5  # 200,000 events in 2 s
        gate({"event": "progress", "done": i})
    gate.close()
    shown = [e for e in seen if e["event"] == "progress"]
    notes = [e for e in seen if e["event"] == "notice"]
    assert len(shown) <= EVENT_BURST + EVENTS_PER_S * 2 + 1
    assert len(notes) == 1 and f"{200_000 - len(shown):,} more progress events" in notes[0]["message"]
    assert "ssh:pi@board:22" in notes[0]["message"]


def test_an_honest_agents_events_all_pass():
    t = [0.0]
    seen: list[dict] = []
    gate = EventGate(seen.append, "local", clock=lambda: t[0])
    for kind in ("start", "phase", "phase", "phase"):
        gate({"event": kind})
    for i in range(600):  # one progress event a second for 10 minutes
        t[0] = float(i)
        gate({"event": "progress", "done": i})
    gate.close()
    assert len(seen) == 604 and gate.dropped == 0
