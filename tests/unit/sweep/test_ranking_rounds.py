"""More interleaved rounds while a tie-break overrules a level its rounds put faster (issue 21: on PP-OCRv4 det,
fp16@openvino (26 ms, more accurate) and int8-search@openvino (18.7 ms) were called a tie in one sweep, noisy
rounds leaving the 1.4x inside the interval, and int8-search won the next sweep beyond noise)."""

from __future__ import annotations

from edgeopt.sweep.rank.decide import MAX_EXTRA_ROUNDS, Candidate, decide_in_rounds, leaning

ACCURATE = Candidate(name="fp16", size_bytes=2, retention=0.998)
FAST = Candidate(name="int8-search", size_bytes=4, retention=0.990)




def _measure(noisy: dict[int, float]):
    """fp16 at 26 ms, int8-search at 18.7 ms (paired ratio 0.72); in the rounds of ``noisy`` the machine slows
    down during int8-search's run by that factor, so those rounds' paired ratios land near or above 1."""
    calls: dict[str, int] = {}

    def measure(name: str, n: int) -> list[float]:
        k = calls.get(name, 0)
        calls[name] = k + 1
        base = 26.0 if name == "fp16" else 18.7 * noisy.get(k, 1.0)
        return [base] * n

    return measure, calls


NOISY = {3: 1.45, 4: 1.55}  # two of the first five rounds disturbed


def test_a_leaning_tie_gets_more_rounds_and_the_faster_level_wins() -> None:
    measure, calls = _measure(NOISY)
    samples, decision = decide_in_rounds(["fp16", "int8-search"], measure, [ACCURATE, FAST], rounds=5,
                                         samples_per_round=3)
    assert decision.winner == "int8-search" and decision.rule == "faster beyond noise", decision
    assert 5 < len(samples["fp16"]) <= 5 + MAX_EXTRA_ROUNDS and calls["fp16"] == calls["int8-search"]


def test_noise_only_in_the_first_rounds_is_what_the_plain_decision_would_have_called_a_tie() -> None:
    measure, _ = _measure(NOISY)
    samples, decision = decide_in_rounds(["fp16", "int8-search"], measure, [ACCURATE, FAST], rounds=5,
                                         samples_per_round=3, max_extra_rounds=0)
    assert decision.winner == "fp16" and decision.rule == "tie: higher retention"  # the flip the issue saw
    assert leaning(samples, decision) == ["int8-search"]


def test_a_true_tie_gets_no_extra_rounds() -> None:
    def measure(name: str, n: int) -> list[float]:
        return [10.0] * n

    samples, decision = decide_in_rounds(["fp16", "int8-search"], measure, [ACCURATE, FAST], rounds=5,
                                         samples_per_round=3)
    assert decision.winner == "fp16" and len(samples["fp16"]) == 5 and leaning(samples, decision) == []
