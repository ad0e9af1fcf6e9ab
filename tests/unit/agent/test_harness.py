"""The agent's measurement loop, run in-process on real onnxruntime sessions."""

import numpy as np

from edgeopt_agent.harness import run
from edgeopt_agent.protocol import ERROR_INPUT, ERROR_RUNTIME, Request


def _events():
    seen = []
    return seen, seen.append


def test_timed_phase_meets_both_minimum_count_and_duration(tiny_cnn):
    seen, emit = _events()
    raw = run(Request(model_path=str(tiny_cnn), iterations=50, min_duration_s=0.3, warmup=5,
                      progress_interval_s=0.05), emit)
    assert raw.ok, raw.error
    assert len(raw.samples_ns) >= 50 and raw.timed_wall_s >= 0.3
    assert raw.timed_inferences == len(raw.samples_ns)
    assert raw.warmup_done["iterations"] == 5
    assert raw.load_ms > 0 and raw.first_inference_ms > 0
    assert all(s > 0 for s in raw.samples_ns)
    assert sum(raw.samples_ns) / 1e9 <= raw.timed_wall_s  # samples are inside the timed phase
    assert raw.inputs == [{"name": "input", "shape": [1, 3, 32, 32], "dtype": "float32"}]
    assert raw.outputs[0]["shape"] == [1, 10]
    assert raw.memory_kb["peak"] >= raw.memory_kb["baseline"] > 0
    assert raw.runtime["providers_used"] == ["CPUExecutionProvider"]
    phases = [e["phase"] for e in seen if e["event"] == "phase"]
    assert phases == ["load", "warmup", "timed"]
    assert any(e["event"] == "progress" for e in seen)


def test_count_minimum_dominates_when_duration_is_zero(tiny_cnn):
    raw = run(Request(model_path=str(tiny_cnn), iterations=37, min_duration_s=0.0, warmup=0), lambda e: None)
    assert raw.ok and len(raw.samples_ns) == 37 and not raw.truncated


def test_watchdog_truncates_and_says_so(tiny_cnn):
    raw = run(Request(model_path=str(tiny_cnn), iterations=10**9, min_duration_s=0.0, max_duration_s=0.2,
                      warmup=0), lambda e: None)
    assert raw.ok and raw.truncated and 0 < len(raw.samples_ns) < 10**9


def test_streams_run_concurrently_and_collect_every_sample(tiny_cnn):
    raw = run(Request(model_path=str(tiny_cnn), iterations=40, min_duration_s=0.0, streams=3, warmup=1,
                      threads=1), lambda e: None)
    assert raw.ok and len(raw.samples_ns) >= 120


def test_batch_and_user_inputs(tiny_cnn, tmp_path):
    raw = run(Request(model_path=str(tiny_cnn), iterations=3, min_duration_s=0, batch=4), lambda e: None)
    assert raw.inputs[0]["shape"] == [4, 3, 32, 32] and raw.outputs[0]["shape"] == [4, 10]
    npz = tmp_path / "x.npz"
    np.savez(npz, input=np.ones((2, 3, 32, 32), np.float32))
    raw = run(Request(model_path=str(tiny_cnn), iterations=3, min_duration_s=0, inputs_npz=str(npz)), lambda e: None)
    assert raw.ok and raw.inputs[0]["shape"] == [2, 3, 32, 32]


def test_faults_come_back_as_data(tmp_path, tiny_cnn):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    raw = run(Request(model_path=str(bad)), lambda e: None)
    assert not raw.ok and raw.error_kind == ERROR_RUNTIME and "could not load" in raw.error
    raw = run(Request(model_path=str(tiny_cnn), runtime="tensorrtx"), lambda e: None)
    assert raw.error_kind == ERROR_INPUT and "known runtimes" in raw.error
    raw = run(Request(model_path=str(tiny_cnn), iterations=0), lambda e: None)
    assert raw.error_kind == ERROR_INPUT and "iterations" in raw.error
    raw = run(Request(model_path=str(tiny_cnn), runtime_options={"providers": ["NopeExecutionProvider"]}),
              lambda e: None)
    assert raw.error_kind == ERROR_INPUT and "not available" in raw.error


def test_null_runtime_measures_only_the_harness(tiny_cnn):
    raw = run(Request(model_path=str(tiny_cnn), runtime="null", iterations=1000, min_duration_s=0), lambda e: None)
    assert raw.ok and raw.runtime["name"] == "null" and len(raw.samples_ns) == 1000
    assert sorted(raw.samples_ns)[500] < 50_000  # a no-op call is far below 50 us
