"""Frame-paced load: frames issued at t0 + i / fps, lateness counted against each frame's own deadline."""

from __future__ import annotations

from edgeopt_agent.harness import run
from edgeopt_agent.paced import paced_loop, validate
from edgeopt_agent.protocol import ERROR_INPUT, RawRun, Request

MS = 1_000_000


class SimClock:
    """A simulated clock: ``sleep`` and inferences advance it exactly, so frame accounting is checked exactly."""

    def __init__(self) -> None:
        self.now = 0

    def clock(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += int(round(seconds * 1e9))

    def infer_taking(self, durations_ms: list[float]):
        it = iter(durations_ms)

        def infer() -> None:
            self.now += int(next(it) * MS)
        return infer


def test_frames_that_fit_never_miss_and_are_issued_on_schedule():
    sim = SimClock()
    samples, truncated, frames = paced_loop(sim.infer_taking([5.0] * 10), 50.0, 10, 0, 10**12,
                                            clock=sim.clock, sleep=sim.sleep)
    assert not truncated and samples == [5 * MS] * 10
    assert (frames["scheduled"], frames["misses"], frames["late_starts"], frames["max_lateness_ns"]) == (10, 0, 0, 0)
    assert frames["period_ns"] == 20 * MS and frames["response_ns"] == [5 * MS] * 10
    assert sim.now == 9 * 20 * MS + 5 * MS  # the last frame started at its slot, 9 periods in


def test_an_overrun_makes_the_next_frames_start_late_and_miss():
    sim = SimClock()
    # 20 ms frames; frame 1 (due 20) takes 50 ms and ends at 70, past its 40 ms deadline; frame 2 (due 40) starts
    # late at 70 and ends at 75, past 60: a miss; frame 3 (due 60) starts late at 75 and ends at 80, on its deadline
    durations = [5.0, 50.0, 5.0, 5.0, 5.0, 5.0]
    samples, _, f = paced_loop(sim.infer_taking(durations), 50.0, 6, 0, 10**12, clock=sim.clock, sleep=sim.sleep)
    assert samples == [int(d * MS) for d in durations]
    assert f["misses"] == 2 and f["late_starts"] == 2
    assert f["response_ns"][:5] == [5 * MS, 50 * MS, 35 * MS, 20 * MS, 5 * MS]
    assert f["max_lateness_ns"] == 30 * MS


def test_minimum_duration_and_watchdog():
    sim = SimClock()
    _, truncated, f = paced_loop(sim.infer_taking([1.0] * 1000), 100.0, 3, 100 * MS, 10**12,
                                 clock=sim.clock, sleep=sim.sleep)
    assert not truncated and f["scheduled"] == 11  # 3 frames are not enough: run until 100 ms have passed
    sim = SimClock()
    _, truncated, f = paced_loop(sim.infer_taking([30.0] * 1000), 100.0, 1000, 0, 200 * MS,
                                 clock=sim.clock, sleep=sim.sleep)
    assert truncated and f["scheduled"] == 7 and f["misses"] == 7


def test_validation():
    assert validate(Request(model_path="m")) is None
    assert validate(Request(model_path="m", pacing_fps=30.0)) is None
    assert "positive" in validate(Request(model_path="m", pacing_fps=0.0))
    assert "streams to 1" in validate(Request(model_path="m", pacing_fps=30.0, streams=2))
    raw = run(Request(model_path="m", runtime="null", pacing_fps=-1.0), lambda e: None)
    assert raw.error_kind == ERROR_INPUT and "pacing_fps" in raw.error


def test_paced_run_through_the_harness_in_real_time(tiny_cnn):
    raw = run(Request(model_path=str(tiny_cnn), iterations=20, min_duration_s=0.0, warmup=2, pacing_fps=100.0),
              lambda e: None)
    assert raw.ok, raw.error
    f = raw.frames
    assert f["scheduled"] == f["completed"] == len(raw.samples_ns) == 20 and f["fps"] == 100.0
    assert raw.timed_wall_s >= 0.19  # 20 frames at 100 FPS take at least 19 periods
    assert 0 <= f["misses"] <= 20 and len(f["response_ns"]) == 20
    back = RawRun.from_dict(raw.to_dict())  # the frames travel in the result JSON
    assert back.frames["scheduled"] == 20 and back.request["pacing_fps"] == 100.0
    plain = run(Request(model_path=str(tiny_cnn), iterations=5, min_duration_s=0.0, warmup=0), lambda e: None)
    assert plain.frames == {}
