"""Rankings that survive noise: equal latencies -> the smaller artifact, every time; a truly slower level loses."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt.errors import InputError
from edgeopt.sweep.rank.decide import Candidate, decide
from edgeopt.sweep.rank.round_stats import RoundRobin, level_stats, pair_ratio
from tests.unit.passes.builders import save


def conv_model(path: Path, *, channels: int, kernel: int, pad_bytes: int = 0) -> Path:
    """x[1, 16, 64, 64] -> Conv(16 -> channels, kernel): cost grows with channels x kernel^2. ``pad_bytes`` adds an
    initializer nobody reads (onnxruntime drops it): a bigger file computing exactly the same thing."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((channels, 16, kernel, kernel)) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    if pad_bytes:
        inits.append(numpy_helper.from_array(np.zeros(pad_bytes // 4, np.float32), "unused_pad"))
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[kernel // 2] * 4)
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 64, 64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save(model, path)


def ort_measure(paths: dict[str, Path]):  # type: ignore[no-untyped-def]
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    sessions = {n: ort.InferenceSession(str(p), so, providers=["CPUExecutionProvider"]) for n, p in paths.items()}
    x = np.random.default_rng(1).standard_normal((1, 16, 64, 64)).astype(np.float32)

    def measure(name: str, n: int) -> list[float]:
        sess = sessions[name]
        sess.run(None, {"x": x})
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            sess.run(None, {"x": x})
            out.append((time.perf_counter() - t0) * 1e3)
        return out

    return measure


def test_round_order_is_seeded_and_every_level_runs_first_once() -> None:
    rr = RoundRobin(rounds=3, samples_per_round=1, seed=4)
    orders = [rr.order(["a", "b", "c"], r) for r in range(3)]
    assert len({o[0] for o in orders}) == 3  # each level runs first once
    assert orders == [RoundRobin(rounds=3, samples_per_round=1, seed=4).order(["a", "b", "c"], r) for r in range(3)]


@pytest.mark.parametrize("count", [2, 3, 4, 5])
def test_every_level_runs_right_after_every_other_equally_often(count: int) -> None:
    """Issue 32: a rotated order kept each level's predecessor the same every round, so the FP32 ORT level ran
    right after another ORT level (its workers still spinning) in every ranking round and took that carry-over
    alone. A Williams square spreads it: each ordered pair of neighbours equally often, each position too."""
    names = ["fp32@onnxruntime", "fp32@openvino", "int4@onnxruntime", "fp16@onnxruntime", "int8@openvino"][:count]
    rounds = count if count % 2 == 0 else 2 * count
    for seed in (0, 1):
        orders = [RoundRobin(seed=seed).order(names, r) for r in range(rounds)]
        assert all(sorted(o) == sorted(names) for o in orders)
        after = Counter((o[i], o[i + 1]) for o in orders for i in range(count - 1))
        assert len(after) == count * (count - 1) and len(set(after.values())) == 1
        places = Counter((name, i) for o in orders for i, name in enumerate(o))
        assert len(places) == count * count and len(set(places.values())) == 1


def test_equal_latency_real_models_the_smaller_wins_every_time(tmp_path: Path) -> None:
    # ~0.5 ms per inference, not ~45 us: at a few tens of microseconds the padded file's memory layout alone moved
    # one model 3 % ahead on an AMX Xeon, in either direction from run to run
    small = conv_model(tmp_path / "small.onnx", channels=32, kernel=3)
    big = conv_model(tmp_path / "big.onnx", channels=32, kernel=3, pad_bytes=1 << 20)
    measure = ort_measure({"small": small, "padded": big})
    cands = [Candidate("padded", big.stat().st_size), Candidate("small", small.stat().st_size)]
    for seed in (0, 1):  # two sweeps of the same levels
        samples = RoundRobin(rounds=6, samples_per_round=8, seed=seed).run(["padded", "small"], measure)
        decision = decide(samples, cands, seed=seed)
        assert decision.winner == "small", (decision, level_stats(samples))
        assert set(decision.unbeaten) == {"small", "padded"}


def test_a_truly_slower_level_loses_even_when_smaller(tmp_path: Path) -> None:
    fast = conv_model(tmp_path / "fast.onnx", channels=16, kernel=1, pad_bytes=4 << 20)  # larger file, cheap conv
    slow = conv_model(tmp_path / "slow.onnx", channels=64, kernel=5)  # ~100x the MACs, smaller file
    assert slow.stat().st_size < fast.stat().st_size
    measure = ort_measure({"fast": fast, "slow": slow})
    samples = RoundRobin(rounds=5, samples_per_round=5, seed=0).run(["fast", "slow"], measure)
    ratio = pair_ratio(samples, "fast", "slow")
    assert ratio.paired and ratio.low > 3, ratio
    decision = decide(samples, [Candidate("slow", slow.stat().st_size), Candidate("fast", fast.stat().st_size)])
    assert decision.winner == "fast" and decision.beaten_by == {"slow": "fast"}, decision


def test_decision_is_deterministic_and_size_then_complexity_break_ties() -> None:
    rng = np.random.default_rng(0)
    base = 10 + rng.standard_normal((8, 20)) * 0.3
    samples = {"a": base.tolist(), "b": (base + rng.standard_normal((8, 20)) * 0.01).tolist(),
               "slow": (base * 1.5).tolist()}
    cands = [Candidate("a", 100, complexity=2), Candidate("b", 100, complexity=1), Candidate("slow", 10)]
    first, second = decide(samples, cands, seed=3), decide(samples, cands, seed=3)
    assert first == second
    assert first.winner == "b" and first.beaten_by.keys() == {"slow"}
    stats = level_stats(samples)
    assert stats["a"].low_ms <= stats["a"].median_ms <= stats["a"].high_ms and stats["a"].rounds == 8


def test_few_rounds_fall_back_to_unpaired_samples() -> None:
    samples = {"a": [[1.0, 1.1, 0.9, 1.0]], "b": [[2.0, 2.1, 1.9, 2.0]]}
    ratio = pair_ratio(samples, "a", "b")
    assert not ratio.paired and ratio.ratio == pytest.approx(2.0, rel=0.05)


def test_two_rounds_report_the_pooled_median_inside_its_interval() -> None:
    # profile --vs --rounds 2 showed B's p50 0.54 ms outside its own interval [0.37, 0.42]: the mean of two round
    # medians (one round slow) against the pooled samples' interval
    samples = {"b": [[0.38, 0.39, 0.40, 0.41, 0.37, 0.40, 0.39, 0.42], [0.70, 0.71, 0.69, 0.72, 0.70, 0.40, 0.39,
                                                                        0.38]]}
    (stats,) = level_stats(samples).values()
    assert stats.rounds == 2 and stats.low_ms <= stats.median_ms <= stats.high_ms, stats
    assert stats.median_ms == pytest.approx(0.40)  # the pooled median (the two round medians: 0.395, 0.70)


def test_bad_input_is_named() -> None:
    with pytest.raises(InputError, match="no candidate"):
        decide({"a": [[1.0]]}, [])
    with pytest.raises(InputError, match="have no latency samples"):
        decide({"a": [[1.0]]}, [Candidate("b", 1)])
    with pytest.raises(InputError, match="distinct names"):
        RoundRobin().run(["a", "a"], lambda n, k: [1.0])
