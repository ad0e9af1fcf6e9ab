"""The tie-break among levels no other level beat on speed or dominated: what a tie within noise is decided by.

Stage by stage, each stage keeping only the levels it cannot tell apart (:func:`tie_order`):

1. **negligible change**: a level that changes a negligible share of the model (:mod:`.negligible`) is out while
   any other level is tied: it is the original model again for all that matters, so it never wins a tie over it;
2. **higher retention**: the levels within ``retention_tie`` of the best retention stay;
3. **smaller artifact**: a level is out when another one left is *meaningfully* smaller (by at least
   :data:`MIN_SIZE_GAIN`) and not slower at the tail (``tail_worse``: its per-round p99 is not higher beyond
   noise). A 1 % smaller file is a coin toss presented as a decision (issue 32: INT4 weight-only touching one FC
   layer, 6.69 MB against 6.78 MB, won "smaller artifact" over FP32 and ran slower in every round but one);
4. **simpler**: the lowest complexity stays (what the caller ranks: fp32 before a recipe);
5. **name**: the first name.

The "smaller" relation is strict in size, so some level always survives stage 3. The order of all tied levels is
the winner, then the winner of the rest, and so on. Plain inputs only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

MIN_SIZE_GAIN = 0.10  # a smaller artifact wins a speed tie only when it is at least 10 % smaller
TIE_RULES = ("tie: negligible change", "tie: higher retention", "tie: smaller artifact", "tie: simpler", "tie: name")


@dataclass(frozen=True)
class TieFacts:
    """What the tie-break reads of each level (by name).

    Attributes:
        tail_worse: ``tail_worse(a, b)``: whether ``a`` is slower than ``b`` at the tail beyond noise.
    """

    retention: Mapping[str, float]
    size_bytes: Mapping[str, int]
    complexity: Mapping[str, int]
    negligible: Mapping[str, bool]
    tail_worse: Callable[[str, str], bool]
    retention_tie: float
    min_size_gain: float = MIN_SIZE_GAIN

    def meaningfully_smaller(self, a: str, b: str) -> bool:
        """Whether ``a``'s artifact is smaller than ``b``'s by at least :attr:`min_size_gain`."""
        return self.size_bytes[a] <= self.size_bytes[b] * (1 - self.min_size_gain)

    def smaller_wins(self, a: str, b: str) -> bool:
        """Whether ``a`` wins the size tie-break over ``b``: meaningfully smaller and not slower at the tail."""
        return self.meaningfully_smaller(a, b) and not self.tail_worse(a, b)


def pick(names: Sequence[str], facts: TieFacts) -> tuple[str, dict[str, str]]:
    """The winner of a tie among ``names`` and, for each other level, the rule (:data:`TIE_RULES`) that put it out."""
    left = list(names)
    out: dict[str, str] = {}

    def keep(kept: list[str], rule: str) -> None:
        nonlocal left
        out.update({n: rule for n in left if n not in kept})
        left = kept

    keep([n for n in left if not facts.negligible.get(n, False)] or left, TIE_RULES[0])
    top = max(facts.retention[n] for n in left)
    keep([n for n in left if facts.retention[n] >= top - facts.retention_tie], TIE_RULES[1])
    keep([n for n in left if not any(facts.smaller_wins(m, n) for m in left if m != n)], TIE_RULES[2])
    simplest = min(facts.complexity[n] for n in left)
    keep([n for n in left if facts.complexity[n] == simplest], TIE_RULES[3])
    keep([min(left)], TIE_RULES[4])
    return left[0], out


def tie_order(names: Sequence[str], facts: TieFacts) -> tuple[tuple[str, ...], dict[str, str]]:
    """The tied levels in tie-break order (winner first), and the rule that put each other level behind the
    winner (the first :func:`pick`'s)."""
    rest = list(names)
    order: list[str] = []
    why: dict[str, str] | None = None
    while rest:
        winner, out = pick(rest, facts)
        why = out if why is None else why
        order.append(winner)
        rest.remove(winner)
    return tuple(order), why or {}


def tail_refusals(winner: str, tied: Sequence[str], facts: TieFacts) -> list[str]:
    """The tied levels meaningfully smaller than ``winner`` that lost the size tie-break only by their tail."""
    return [o for o in tied if facts.meaningfully_smaller(o, winner) and facts.tail_worse(o, winner)
            and facts.retention[o] >= facts.retention[winner] - facts.retention_tie
            and not facts.negligible.get(o, False)]
