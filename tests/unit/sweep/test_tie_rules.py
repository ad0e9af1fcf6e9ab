"""Tie-breaks that mean something (issue 32 item 3), on synthetic round samples (no timing) and real ONNX files.

On an AVX2 CPU the text-orientation classifier's sweep recommended INT4 weight-only, which quantized only the final
fully-connected layer (6.69 MB against 6.78 MB): it won "tie within noise with fp32: smaller artifact" and ran
slower than FP32 in every interleaved round but one. Now a smaller artifact wins a speed tie only when it is at least
10 % smaller and not slower at the tail; a level that changes a negligible share of the model never wins a tie; a
"beyond noise" verdict needs the two levels' own intervals apart (the machine's drift between rounds divided out);
a recommendation off the printed Pareto frontier says why in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt.passes.fp16 import Fp16Config, Fp16Pass
from edgeopt.passes.quantize_int4 import QuantizeInt4Config, QuantizeInt4Pass
from edgeopt.sweep.rank.decide import Candidate, decide
from edgeopt.sweep.rank.frontier import off_frontier
from edgeopt.sweep.rank.negligible import NEGLIGIBLE_SHARE, changed_mac_share, mark_negligible
from edgeopt.sweep.rank.pareto import pareto_indices
from edgeopt.sweep.rank.ties import MIN_SIZE_GAIN
from edgeopt.sweep.result import Level, Recommendation
from tests.unit.passes.builders import artifact, context, save

TIED = [10.0, 10.4, 9.8, 10.1, 10.0]  # round medians of one level
TIED_TOO = [10.1, 9.9, 10.3, 10.0, 10.2]  # another level's, within noise of the first


def rounds(medians: Sequence[float], tail: float = 1.01) -> list[list[float]]:
    """One round per median: nine samples around it and one at ``tail`` x the median (the round's p99)."""
    return [[m * 0.99, m * 0.995, m, m, m, m, m * 1.005, m * 1.01, m * 1.01, m * tail] for m in medians]


def test_a_1pct_smaller_tied_level_does_not_win_but_a_15pct_smaller_one_does() -> None:
    """The issue's sizes: 6.69 MB against 6.78 MB is a coin toss, not a decision; fp32 (simpler) wins."""
    samples = {"fp32@ort": rounds(TIED), "int4@ort": rounds(TIED_TOO)}
    d = decide(samples, [Candidate("fp32@ort", 6_780_000, 0), Candidate("int4@ort", 6_690_000, 2)])
    assert 6_780_000 * (1 - MIN_SIZE_GAIN) < 6_690_000
    assert d.winner == "fp32@ort" and d.rule == "tie: simpler", d
    assert d.reason == "fp32@ort: tie within noise with int4@ort: simpler"
    d = decide(samples, [Candidate("fp32@ort", 6_780_000, 0), Candidate("int4@ort", 5_760_000, 2)])
    assert d.winner == "int4@ort" and d.rule == "tie: smaller artifact", d


def test_a_15pct_smaller_tied_level_slower_at_the_tail_does_not_win() -> None:
    """Same medians within noise, but every round's p99 of the smaller level is 1.4x the other's."""
    samples = {"fp32@ort": rounds(TIED), "fp16@ort": rounds(TIED_TOO, tail=1.4)}
    cands = [Candidate("fp32@ort", 1_000_000, 0), Candidate("fp16@ort", 850_000, 2)]
    d = decide(samples, cands)
    assert not d.beaten_by and set(d.unbeaten) == {"fp32@ort", "fp16@ort"}, d  # a tie on the median
    assert d.winner == "fp32@ort" and d.rule == "tie: simpler" and d.tail_refused == ("fp16@ort",), d
    assert d.reason == ("fp32@ort: tie within noise with fp16@ort: simpler; fp16@ort is smaller but slower at the "
                        "tail (p99) beyond noise")
    # a tail as good as the other's: the smaller one wins again
    samples["fp16@ort"] = rounds(TIED_TOO)
    assert decide(samples, cands).winner == "fp16@ort"


def test_a_negligible_change_level_never_wins_over_fp32() -> None:
    """Smaller, faster by its median (within noise), even a hair more accurate: it still is the original model."""
    samples = {"fp32@ort": rounds(TIED), "int4@ort": rounds([m * 0.99 for m in TIED])}
    cands = [Candidate("fp32@ort", 6_780_000, 0, retention=1.0),
             Candidate("int4@ort", 3_000_000, 2, retention=1.001, negligible=True)]
    d = decide(samples, cands)
    assert not d.beaten_by and not d.dominated_by, d  # it dominates nothing: its retention is fp32's
    assert d.winner == "fp32@ort" and d.unbeaten == ("fp32@ort", "int4@ort") and d.rule == "tie: negligible change"
    assert d.reason == "fp32@ort: tie within noise with int4@ort: negligible change"


def test_beyond_noise_needs_the_level_intervals_apart_after_the_machines_drift() -> None:
    """Noise of one level's own (b slower than a in two of five rounds) keeps the drift-out intervals together: a
    tie, though b's median is lower. A machine drifting +-25 % between rounds with b 5 % faster in every round is
    not such noise: the drift is common to both levels in a round, and with it divided out the intervals are apart."""
    own = {"a": rounds([10.0, 10.1, 9.9, 10.0, 10.2]), "b": rounds([9.5, 10.6, 9.4, 10.5, 9.5])}
    d = decide(own, [Candidate("a", 1_000, 0), Candidate("b", 1_000, 2)])
    assert d.compared["a"].low_ms <= d.compared["b"].high_ms
    assert not d.beaten_by and d.winner == "a" and d.rule == "tie: simpler", d
    drift = [10.0, 13.0, 8.0, 12.0, 9.0]
    samples = {"a": rounds(drift), "b": rounds([m * 0.95 for m in drift])}
    d = decide(samples, [Candidate("a", 1_000, 0), Candidate("b", 1_000, 2)])
    assert d.stats["a"].low_ms <= d.stats["b"].high_ms  # the raw intervals (the table's) span the drift
    assert d.beaten_by == {"a": "b"} and d.rule == "faster beyond noise", d
    assert d.machine_factors == pytest.approx((1.0, 1.3, 0.8, 1.2, 0.9), rel=0.01)


def level(recipe: str, ms: float, *, size: int = 1_000, retention: float = 1.0, artifact_path: str = "",
          no_change: bool = False, negligible: bool = False) -> Level:
    return Level(recipe=recipe, runtime="onnxruntime", runtime_version="", artifact=artifact_path or f"/x/{recipe}",
                 size_bytes=size, latency_ms=ms, latency_ms_p99=ms, memory_mb_peak=None, energy_mj=None,
                 energy_source=None, metric="agreement", metric_value=retention, retention=retention,
                 meets_retention=True, meets_budget=True, passed=True, valid=True, cached=False, no_change=no_change,
                 negligible_change=negligible, change_share_macs=0.002 if negligible else None)


def rec_of(lv: Level) -> Recommendation:
    return Recommendation(recipe=lv.recipe, runtime=lv.runtime, artifact=lv.artifact, retention=lv.retention,
                          latency_ms=lv.latency_ms, size_bytes=lv.size_bytes)


def test_a_recommendation_off_the_frontier_says_why_in_one_line() -> None:
    """int8 won a tie on size, but fp32's table p50 is lower at the same retention: fp32 alone is on the frontier."""
    levels = [level("fp32", 6.10, size=4_000), level("int8", 6.25, size=1_000)]
    frontier = pareto_indices([(lv.latency_ms, lv.retention) for lv in levels])
    assert frontier == [0]
    ranking = {"candidates": ["fp32@onnxruntime", "int8@onnxruntime"], "rule": "tie: smaller artifact",
               "unbeaten": ["int8@onnxruntime", "fp32@onnxruntime"], "beaten_by": {}, "dominated_by": {}}
    note = off_frontier(levels, frontier, rec_of(levels[1]), "latency", ranking)
    assert note == ("int8@onnxruntime is off the Pareto frontier: fp32@onnxruntime has a lower p50 (6.100 vs 6.250 "
                    "ms) at retention 1.0000 >= 1.0000, but the ranking rounds found no difference beyond noise, and "
                    "the tie-break decided (tie: smaller artifact)")
    assert "\n" not in note
    assert off_frontier(levels, frontier, rec_of(levels[0]), "latency", ranking) is None  # on the frontier


def test_off_frontier_names_a_no_change_or_negligible_level() -> None:
    levels = [level("fp32", 6.20), level("int4", 6.00, no_change=True)]
    frontier = pareto_indices([(lv.latency_ms, lv.retention) for lv in levels])
    note = off_frontier(levels, frontier, rec_of(levels[0]), "latency", None)
    assert note is not None and note.endswith("but it changes nothing (= fp32) and is never recommended")
    levels = [level("fp32", 6.20), level("int4", 6.00, negligible=True)]
    ranking = {"candidates": ["fp32@onnxruntime", "int4@onnxruntime"], "unbeaten": ["fp32@onnxruntime",
               "int4@onnxruntime"], "rule": "tie: negligible change", "beaten_by": {}, "dominated_by": {}}
    note = off_frontier(levels, pareto_indices([(lv.latency_ms, lv.retention) for lv in levels]), rec_of(levels[0]),
                        "latency", ranking)
    assert note is not None and "changes a negligible share of the model (0.2 % of the MACs)" in note


def cnn_with_fc(path: Path) -> Path:
    """x[1, 32, 32, 32] -> Conv(32 -> 64, 3x3) -> Relu -> GlobalAveragePool -> Flatten -> Gemm(64 -> 10): nearly
    all MACs and weights in the conv, a small final FC layer (the issue's classifier in miniature)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((64, 32, 3, 3)) * 0.05).astype(np.float32), "w")
    fc = numpy_helper.from_array((rng.standard_normal((64, 10)) * 0.1).astype(np.float32), "fc")
    fb = numpy_helper.from_array(np.zeros(10, np.float32), "fb")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], name="fc")]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], [w, fc, fb])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save(model, path)


def test_int4_on_a_cnn_is_a_negligible_change_and_fp16_is_not(tmp_path: Path) -> None:
    src = cnn_with_fc(tmp_path / "cnn.onnx")
    int4 = QuantizeInt4Pass(QuantizeInt4Config()).run(artifact(src), context(tmp_path, "int4.onnx")).path
    fp16 = Fp16Pass(Fp16Config()).run(artifact(src), context(tmp_path, "fp16.onnx")).path
    assert "MatMulNBits" in [n.op_type for n in onnx.load(str(int4)).graph.node]
    assert changed_mac_share(src) == 0.0
    share = changed_mac_share(int4)
    assert share is not None and 0 < share < 0.001  # 640 of ~4.7 M MACs
    assert changed_mac_share(fp16) == 1.0

    def lv(recipe: str, path: Path) -> Level:
        return level(recipe, 1.0, size=path.stat().st_size, artifact_path=str(path))

    marked = {m.recipe: m for m in mark_negligible([lv("fp32", src), lv("int4", int4), lv("fp16", fp16)])}
    assert marked["int4"].negligible_change and marked["int4"].change_share_size is not None
    assert marked["int4"].change_share_size < NEGLIGIBLE_SHARE and marked["int4"].change_share_macs == round(share, 6)
    assert not marked["fp16"].negligible_change and marked["fp16"].change_share_size > 0.4
    assert marked["fp16"].change_share_macs is None  # not counted: its size already changed by more
    assert not marked["fp32"].negligible_change and marked["fp32"].change_share_size is None
    # the same file run with other runtime options (OpenVINO's bf16) is not judged by its graph
    bf16 = lv("bf16", src).model_copy(update={"runtime_options": {"inference_precision": "bf16"}})
    (_, judged) = mark_negligible([lv("fp32", src).model_copy(update={"runtime_options": {}}), bf16])
    assert not judged.negligible_change and judged.change_share_size is None


def test_the_terminal_prints_the_frontier_note_and_the_negligible_mark(capsys) -> None:  # type: ignore[no-untyped-def]
    from edgeopt.cli.sweep_cmd import _render
    from edgeopt.sweep.result import SweepResult

    fp32, int4 = level("fp32", 6.10, size=4_000), level("int4", 6.00, size=3_990, negligible=True)
    note = "int8@onnxruntime is off the Pareto frontier: because"
    rec = rec_of(fp32).model_copy(update={"off_frontier": note})
    result = SweepResult(model="m", model_sha256="ab", target="local", runner="local", metric="agreement",
                         output="0", eval_samples=4, min_retention=0.99, fps=None, objective="latency",
                         runtimes=["onnxruntime"], levels=[fp32, int4], pareto=[int4], recommendation=rec, reason=None,
                         int8_search=None, plot=None, out_dir="o", seconds=0.0, warnings=[])
    _render(result)
    lines = capsys.readouterr().out.splitlines()
    assert any(ln.startswith("int4") and "pass, negligible change (~ fp32)" in ln for ln in lines), lines
    at = next(i for i, ln in enumerate(lines) if ln.startswith("recommendation: fp32 on onnxruntime"))
    assert lines[at + 1] == f"note: {note}"
    assert Recommendation.model_validate_json(rec.model_dump_json()).off_frontier == note  # in sweep.json too
