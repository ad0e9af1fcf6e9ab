"""The INT8 search's cost gate (issue 32 item 4): a repair runs only where the runtime's INT8 ceiling can still beat
the fastest passing level, and the float-set search evaluates no float set whose per-layer cost already loses."""

from __future__ import annotations

from functools import partial

from edgeopt.sweep.int8.cost_gate import GATE_MIN_MS, headrooms, search_runtime
from edgeopt.sweep.int8.float_sets import choose_float_set, float_reasons
from edgeopt.sweep.int8.latency import hopeless_runtimes
from edgeopt.sweep.int8.paired import paired
from tests.unit.sweep.level_kit import level, level_in_rounds

_lv = partial(level, failed_retention=0.8)  # a failing level's retention


def test_a_ceiling_slower_than_a_passing_level_beyond_noise_cannot_beat_it() -> None:
    # the text-orientation classifier on the AVX2 VM: fp16@onnxruntime 4.06 ms passes, int8 8.39 / 7.97 ms fails
    levels = [_lv("fp32", "onnxruntime", 5.63, passed=True), _lv("fp16", "onnxruntime", 4.06, passed=True),
              _lv("int8", "onnxruntime", 8.39, passed=False), _lv("int8", "openvino", 7.97, passed=False)]
    heads = headrooms(levels, ["onnxruntime", "openvino"])
    assert set(heads) == {"onnxruntime", "openvino"}
    ov = heads["openvino"]
    assert not ov.can_beat and ov.ms < 0 and ov.best == "fp16@onnxruntime" and ov.ceiling == "int8@openvino"
    assert "even all-INT8 is slower beyond both intervals" in ov.reason() and "fp16@onnxruntime" in ov.reason()
    rec = ov.record()
    assert rec["can_beat"] is False and rec["headroom_ms"] == round(ov.ms, 4) and rec["decisions"] == {}


def test_a_ceiling_that_can_beat_or_tie_keeps_the_repairs() -> None:
    # PP-OCRv4 det at 0.99: int8@openvino 33.3 ms fails, fp32@openvino 41.6 ms passes
    levels = [_lv("fp32", "openvino", 41.6, passed=True), _lv("int8", "openvino", 33.3, passed=False),
              _lv("int8", "onnxruntime", 81.7, passed=False)]
    heads = headrooms(levels, ["onnxruntime", "openvino"])
    assert heads["openvino"].can_beat and heads["openvino"].cost_cap_ms is not None
    assert heads["openvino"].cost_cap_ms > 41.6 - 33.3  # optimistic ends: 43.68 - 31.64
    assert "may still beat it" in heads["openvino"].reason()
    assert not heads["onnxruntime"].can_beat
    tie = headrooms([_lv("fp16", "openvino", 10.0, passed=True), _lv("int8", "openvino", 10.4, passed=False)],
                    ["openvino"])
    assert tie["openvino"].can_beat, "overlapping intervals: a tied INT8 level may still win the ranking on size"


# PP-OCRv4 rec's first rounds on the 2-vCPU AMX VM (session 23): onnxruntime's INT8 (18.1 ms) is 1.8x slower than
# fp32@openvino (9.9 ms) in every round, but the machine's speed moved 2x over the 3 rounds, so each raw interval
# spans the drift and the old gate let onnxruntime's search run (its profile, 8 evaluations and a level: ~10 s)
DRIFT = [0.75, 1.0, 1.5]
OWN = {"fp32@onnxruntime": [1.0, 1.01, 0.99], "fp32@openvino": [0.99, 1.0, 1.01], "int8@onnxruntime": [1.02, 0.99, 1.0],
       "int8@openvino": [1.0, 1.02, 0.98]}  # each level's own noise per round


def _rec_levels(ids: dict[str, str | None]) -> list:
    ms = {"fp32@onnxruntime": 17.4, "fp32@openvino": 9.9, "int8@onnxruntime": 18.1, "int8@openvino": 6.5}
    return [level_in_rounds(*name.split("@"), [ms[name] * d * o for d, o in zip(DRIFT, OWN[name], strict=True)],
                            ids.get(name, "r1"), passed=name.startswith("fp32")) for name in ms]


def test_a_ceiling_slower_in_every_paired_round_is_gated_through_the_machines_drift() -> None:
    heads = headrooms(_rec_levels({}), ["onnxruntime", "openvino"])
    ort = heads["onnxruntime"]
    assert ort.ms > 0, "the raw intervals overlap: the old gate let onnxruntime's search run"
    assert ort.paired is not None and ort.paired.rounds == 3 and ort.paired.beaten and ort.best == "fp32@openvino"
    assert ort.paired.slow_low_ms > ort.paired.fast_high_ms  # apart once each round's speed is divided out
    assert not ort.can_beat and "in the same 3 rounds" in ort.reason()
    assert "beyond noise, as the ranking judges" in ort.reason()
    rec = ort.record()
    assert rec["paired_rounds"] == 3 and rec["can_beat"] is False
    assert rec["paired_ceiling_ms_low"] > rec["paired_best_passing_ms_high"]
    ov = heads["openvino"]
    assert ov.paired is not None and ov.can_beat and ov.cost_cap_ms == ov.ms and ov.ms > 9.9 - 6.5
    assert search_runtime(["onnxruntime", "openvino"], heads) == "openvino"
    # the same intervals make onnxruntime hopeless (1.8x > HOPELESS_RATIO): no search there at all
    assert list(hopeless_runtimes(_rec_levels({}), ["onnxruntime", "openvino"])) == ["onnxruntime"]


def test_a_no_change_stand_in_counts_once_in_the_rounds() -> None:
    """A no-change level carries its fp32 level's round medians (it was never timed): the machine factors count
    them once, and a stand-in against its own fp32 level pairs nothing."""
    levels = _rec_levels({})
    stand_in = levels[1].model_copy(update={"recipe": "int4", "details": {"latency_of": "fp32@openvino"}})
    ort = headrooms([*levels, stand_in], ["onnxruntime", "openvino"])["onnxruntime"]
    assert ort.paired == headrooms(levels, ["onnxruntime", "openvino"])["onnxruntime"].paired
    assert paired([*levels, stand_in], stand_in, levels[1]) is None


def test_levels_from_other_rounds_keep_the_raw_intervals() -> None:
    """Not timed in the same rounds (or without a served agent: no rounds id): nothing pairs, as before."""
    for ids in ({"int8@onnxruntime": "r2"}, dict.fromkeys(OWN, None)):
        ort = headrooms(_rec_levels(ids), ["onnxruntime", "openvino"])["onnxruntime"]
        assert ort.paired is None and ort.can_beat and ort.ms > 0 and ort.cost_cap_ms == ort.ms, ids
        assert "same 3 rounds" not in ort.reason() and ort.record()["paired_rounds"] == 0
        assert hopeless_runtimes(_rec_levels(ids), ["onnxruntime", "openvino"]) == {}, ids


def test_pairing_only_adds_evidence_against_a_ceiling() -> None:
    """Within the ranking's 3 % tolerance the rounds call no verdict: the raw intervals decide, as before, both
    ways (a paired tie never reopens a runtime the raw intervals close, nor shrinks the float parts' cap)."""
    best = level_in_rounds("fp32", "openvino", [10.0 * d for d in DRIFT], "r", passed=True)
    tight = [10.2 * d * o for d, o in zip(DRIFT, [1.001, 0.999, 1.0], strict=True)]
    head = headrooms([best, level_in_rounds("int8", "openvino", tight, "r", passed=False)], ["openvino"])["openvino"]
    assert head.paired is not None and head.paired.slow_low_ms > head.paired.fast_high_ms and not head.paired.beaten
    assert head.ms > 0 and head.can_beat and head.cost_cap_ms == head.ms  # 2 % slower: it may still tie
    still = [1.0, 1.01, 0.99]  # a quiet machine: the raw intervals are apart too
    best = level_in_rounds("fp32", "openvino", [10.0 * d for d in still], "q", passed=True)
    ceiling = level_in_rounds("int8", "openvino", [10.25 * d for d in still], "q", passed=False)
    head = headrooms([best, ceiling], ["openvino"])["openvino"]
    assert head.paired is not None and not head.paired.beaten and head.ms < 0 and not head.can_beat
    assert "beyond both intervals" in head.reason()


def test_a_paired_ceiling_with_noise_of_its_own_may_still_beat() -> None:
    """Faster than the passing level in one round of three (its own noise, not the machine's): no verdict."""
    best = level_in_rounds("fp32", "openvino", [10.0 * d for d in DRIFT], "r", passed=True)
    ceiling = level_in_rounds("int8", "openvino", [11.0 * d * o for d, o in zip(DRIFT, [1.0, 0.8, 1.1], strict=True)],
                              "r", passed=False)
    head = headrooms([best, ceiling], ["openvino"])["openvino"]
    assert head.paired is not None and not head.paired.beaten and head.can_beat and head.ms > 0


def test_the_default_trial_runs_on_the_first_runtime_whose_ceiling_can_beat_the_best_level() -> None:
    # PP-OCRv4 det on the AVX2 VM: int8@onnxruntime 89 ms (slower than its fp32), int8@openvino 32 ms, fp32@openvino
    # 47 ms passes; onnxruntime comes first in the sweep, so the old search measured its default trial there
    levels = [_lv("fp32", "onnxruntime", 84.7, passed=True), _lv("fp32", "openvino", 47.2, passed=True),
              _lv("int8", "onnxruntime", 89.0, passed=False), _lv("int8", "openvino", 32.3, passed=False)]
    rts = ["onnxruntime", "openvino"]
    heads = headrooms(levels, rts)
    assert search_runtime(rts, heads) == "openvino"
    assert search_runtime(rts, {}) == "onnxruntime", "no headroom to judge by: the sweep's order"
    slow = headrooms([lv for lv in levels if lv.recipe == "fp32"] + [_lv("int8", "onnxruntime", 89.0, passed=False),
                                                                      _lv("int8", "openvino", 80.0, passed=False)], rts)
    assert not any(h.can_beat for h in slow.values()) and search_runtime(rts, slow) == "onnxruntime"


def test_unconfirmed_levels_sub_ms_ceilings_and_no_passing_level_gate_nothing() -> None:
    single = [_lv("fp32", "onnxruntime", 1.0, passed=True), _lv("int8", "onnxruntime", 5.0, passed=False,
                                                                   confirmed=False)]
    assert headrooms(single, ["onnxruntime"]) == {}
    assert headrooms([_lv("int8", "onnxruntime", 5.0, passed=False)], ["onnxruntime"]) == {}
    tiny = headrooms([_lv("fp32", "onnxruntime", 0.05, passed=True),
                      _lv("int8", "onnxruntime", GATE_MIN_MS * 0.5, passed=False)], ["onnxruntime"])
    assert tiny["onnxruntime"].can_beat and tiny["onnxruntime"].cost_cap_ms is None
    assert "decides nothing" in tiny["onnxruntime"].reason()


def test_float_sets_costlier_than_the_cap_are_not_evaluated() -> None:
    nodes = [f"n{i}" for i in range(8)]
    gain = {n: 1.0 for n in nodes}
    gain["n7"] = 5.0
    sens = {n: 0.01 for n in nodes}
    sens["n7"] = 1.0  # the error is in n7, which costs 5 ms to keep in float
    seen: list[list[str]] = []

    def passes(fs: list[str]) -> bool:
        seen.append(fs)
        return "n7" in fs

    free = choose_float_set(nodes, gain, passes, sensitivity=sens)
    assert free.float_nodes == ["n7"] and free.strategy == "narrow" and free.capped == 0
    seen.clear()
    capped = choose_float_set(nodes, gain, passes, sensitivity=sens, cost_cap_ms=4.0)
    assert capped.strategy == "stopped" and capped.float_nodes == ["n7"] and capped.candidates == []
    assert "> the cap 4.00 ms" in capped.stopped
    assert capped.capped == 1 and len(seen[0]) == len(nodes) - 1, "[n7] alone costs over 4 ms: no narrowing"


def test_growing_stops_once_the_nodes_left_in_float_cost_more_than_the_cap() -> None:
    nodes = [f"n{i}" for i in range(10)]
    gain = {n: 1.0 + i for i, n in enumerate(nodes)}  # n9 saves the most time, so it is tried in INT8 first

    def refuses_all(fs: list[str]) -> bool:
        return len(fs) == len(nodes)  # only the float model passes: every node refused in turn

    uncapped = choose_float_set(nodes, gain, refuses_all, max_evaluations=40)
    capped = choose_float_set(nodes, gain, refuses_all, max_evaluations=40, cost_cap_ms=25.0)
    assert uncapped.strategy == "none" and capped.strategy == "stopped"
    assert capped.evaluations < uncapped.evaluations
    assert "stay float whatever the remaining tries decide" in capped.stopped


def test_a_later_nncf_repair_starts_only_when_its_expected_time_fits_the_allowance(tmp_path) -> None:
    import onnx

    from edgeopt.sweep.int8.nncf_repair import repairs_for, try_repairs
    from tests.unit.sweep.outlier_model import outlier_convnet

    repairs, _ = repairs_for(onnx.load(str(outlier_convnet(tmp_path / "m.onnx"))))
    built: list[str] = []

    def build(seconds: float):
        def run(rep):
            built.append(rep.name)
            return tmp_path / f"{rep.name}.xml", seconds * rep.relative_cost, 0.5  # never keeps the threshold
        return run

    rows, winner = try_repairs(repairs, build(7.75), 0.99, allowance_s=20.0)  # the orientation classifier's
    assert winner is None and built == ["fast_bias_correction", "bias_correction"]
    skipped = {r["name"]: r["not_tried"] for r in rows if "not_tried" in r}
    assert "3.3x NNCF's defaults' 7.75 CPU-s" in skipped["range_mean_quantile"]
    built.clear()
    try_repairs(repairs, build(1.0), 0.99, allowance_s=20.0)  # a small model: every repair fits
    assert built == ["fast_bias_correction", "range_mean_quantile", "bias_correction"]


def test_growing_ends_once_the_nodes_left_to_try_save_less_than_the_ranking_resolves() -> None:
    nodes = [f"n{i}" for i in range(12)]
    big = {"n0": 2.0, "n1": 1.5, "n2": 1.0}  # PP-OCRv4 rec's shape: a few nodes carry most of the INT8 gain
    gain = {n: big.get(n, 0.02) for n in nodes}  # nine more save 0.18 ms together
    tried: list[list[str]] = []

    def passes(fs: list[str]) -> bool:  # the error is spread out: any two nodes in INT8 pass, three do not
        tried.append(fs)
        return len(nodes) - len(fs) <= 2

    every = choose_float_set(nodes, gain, passes, max_evaluations=24)
    runs = len(tried)
    ended = choose_float_set(nodes, gain, passes, max_evaluations=24, resolution_ms=0.3)
    assert every.strategy == ended.strategy == "grow" and every.ended == ""
    assert set(nodes) - set(ended.float_nodes) == {"n0", "n1"} == set(nodes) - set(every.float_nodes)
    assert ended.evaluations < every.evaluations and len(tried) - runs == ended.evaluations
    assert "9 nodes left to try save 0.180 ms together" in ended.ended and "(0.300 ms)" in ended.ended
    assert ended.evaluations == 4, "the half-size float prefix, then n0, n1 and n2 in INT8; none of the nine"
    wide = choose_float_set(nodes, gain, passes, max_evaluations=24, resolution_ms=0.1)
    assert ended.evaluations < wide.evaluations < every.evaluations, "a finer resolution tries more of the nine"
    assert "4 nodes left to try save 0.080 ms" in wide.ended
    assert ended.refused == ("n2",), "n0 and n1 passed in INT8; n2 made three and failed"
    assert len(every.refused) == every.evaluations - 3, "every try after n0 and n1 failed (narrowing's one aside)"
    reasons = float_reasons(ended, {**gain, "n11": 0.001})
    assert set(reasons) == set(ended.float_nodes)
    assert reasons["n2"].startswith("tried in INT8 and refused")
    assert reasons["n11"].startswith("not tried: its INT8 kernel saves under 0.005 ms")
    assert reasons["n5"] == f"not tried in INT8: {ended.ended}"
    assert float_reasons(ended, None)["n11"] == reasons["n5"], "without a profile no node counts as free"
    narrowed = choose_float_set(nodes, gain, lambda fs: "n0" in fs, sensitivity={n: float(n == "n0") for n in nodes})
    assert narrowed.strategy == "narrow" and float_reasons(narrowed, gain) == {}
