"""The INT8 search's cost gate: a repair or a float set is tried only where it can still beat the best passing level.

Every repair the search knows (per-tensor ranges, :mod:`.repair_step`; NNCF's, :mod:`.nncf_trials`) builds a model
with every quantizable op in INT8, so its latency on a runtime is, at best, that runtime's plain INT8 level: the
**ceiling**. A float set keeps parts of that model in float, and each part costs its per-layer gain (float time
minus INT8 time, :func:`.latency.gains`) on top of the ceiling. The gate compares both with the fastest passing level
the sweep measured before the search, on confirmed intervals (:func:`headrooms`):

- **headroom** = the passing level's interval high end minus the ceiling's low end (ms): the most time an INT8
  model on that runtime can spend and still, at the optimistic ends of both intervals, be faster.
- **no headroom** (the ceiling is slower than the passing level beyond both intervals, or, where both ran in the
  same confirmation rounds, beyond noise as the ranking judges, :mod:`.paired`: the raw intervals of three rounds
  span the machine's drift between them): no repair on that runtime
  could even tie, so its repairs are skipped: the range repair's calibrations and host checks when no searched
  runtime has headroom, the range-repaired model's device trial and NNCF's repairs per runtime. A tie is not
  gated: an INT8 level of equal retention that ties on latency can still win the ranking on size
  (:mod:`..rank.ties`).
- **a float set costlier than the headroom** cannot beat the passing level either: the float-set search
  (:func:`.float_sets.choose_float_set`, ``cost_cap_ms``) evaluates no candidate whose summed gains exceed it and
  stops growing once the nodes it had to leave in float already cost more.

Levels without a confirmed interval, a sweep with no passing level, a runtime without a plain INT8 level and a
ceiling under :data:`GATE_MIN_MS` (QDQ overhead dominates there and trials are cheap) gate nothing. Every decision
is recorded with its reason in ``sweep.json``'s ``int8_search.cost_gate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..rank.decide import DEFAULT_TOLERANCE
from .latency import HOPELESS_MIN_MS, int8_ceilings
from .paired import Paired, paired

GATE_MIN_MS = HOPELESS_MIN_MS  # a ceiling under this (ms per inference) never gates (see the module docstring)


@dataclass(frozen=True)
class Headroom:
    """One runtime's INT8 ceiling against the fastest passing level, both by their confirmed intervals (ms), and,
    where both ran in the same confirmation rounds, the two compared as the ranking compares them (``paired``)."""

    runtime: str
    ceiling: str  # the plain INT8 level, recipe@runtime
    ceiling_ms: float
    ceiling_ms_low: float
    best: str  # the fastest passing level, recipe@runtime
    best_ms: float
    best_ms_high: float
    paired: Paired | None = None

    @property
    def ms(self) -> float:
        """The most an INT8 model on this runtime may cost over its ceiling and still possibly beat ``best``."""
        return self.best_ms_high - self.ceiling_ms_low

    @property
    def gates(self) -> bool:
        """Whether the gate applies at all (a ceiling under :data:`GATE_MIN_MS` never gates)."""
        return self.ceiling_ms_low >= GATE_MIN_MS

    @property
    def beaten_in_rounds(self) -> bool:
        """Whether the ranking's rule 1, in the rounds both ran in, calls even the ceiling slower beyond noise."""
        return self.paired is not None and self.paired.beaten

    @property
    def can_beat(self) -> bool:
        """Whether an all-INT8 model on this runtime can still beat (or tie) the fastest passing level."""
        return not self.gates or (self.ms > 0 and not self.beaten_in_rounds)

    def reason(self) -> str:
        """One line: why the repairs on this runtime run or are skipped."""
        p = self.paired
        where = "" if p is None else (f"; in the same {p.rounds} rounds, each round's machine speed divided out: "
                                      f"from {p.slow_low_ms:.2f} vs to {p.fast_high_ms:.2f}")
        numbers = (f"the INT8 ceiling {self.ceiling} ({self.ceiling_ms:.2f} ms, interval from "
                   f"{self.ceiling_ms_low:.2f}) vs {self.best} ({self.best_ms:.2f} ms, interval to "
                   f"{self.best_ms_high:.2f}{where}), which already passes")
        if not self.gates:
            return f"{numbers}: the ceiling is under {GATE_MIN_MS:g} ms, where the gate decides nothing"
        if self.can_beat:
            return f"{numbers}: an INT8 model may still beat it, with up to {self.ms:.2f} ms of float parts"
        beyond = "beyond noise, as the ranking judges" if self.beaten_in_rounds else "beyond both intervals"
        return f"{numbers}: even all-INT8 is slower {beyond}, so no repair on {self.runtime} can beat it"

    def record(self) -> dict[str, Any]:
        """``sweep.json``'s ``int8_search.cost_gate[<runtime>]`` before the search's decisions are added."""
        p = self.paired
        return {"ceiling": self.ceiling, "ceiling_ms": round(self.ceiling_ms, 4),
                "ceiling_ms_low": round(self.ceiling_ms_low, 4), "best_passing": self.best,
                "best_passing_ms": round(self.best_ms, 4), "best_passing_ms_high": round(self.best_ms_high, 4),
                "headroom_ms": round(self.ms, 4), "paired_rounds": 0 if p is None else p.rounds,
                **({} if p is None else {"paired_ceiling_ms_low": round(p.slow_low_ms, 4),
                                         "paired_best_passing_ms_high": round(p.fast_high_ms, 4)}),
                "can_beat": self.can_beat, "reason": self.reason(), "decisions": {}}

    @property
    def resolution_ms(self) -> float:
        """The least latency change the ranking tells apart near the fastest passing level (its tolerance of it):
        the float-set search stops growing once the nodes left to try save less (:func:`.float_sets.
        choose_float_set`)."""
        return DEFAULT_TOLERANCE * self.best_ms

    @property
    def cost_cap_ms(self) -> float | None:
        """The float-set search's cap on summed per-layer gains (None: no cap)."""
        return self.ms if self.gates else None


def headrooms(levels: Sequence[Any], rts: Sequence[str]) -> dict[str, Headroom]:
    """Per runtime of ``rts`` with a confirmed plain INT8 level (``int8`` or ``int8+<low>``, the fastest by its
    interval's low end): its headroom against the passing level with the lowest interval high end (a level that
    computes the same graph as the model, ``no_change``, included: the original model is a level to beat too).
    Empty when no confirmed level passes."""
    best, plain = int8_ceilings(levels, rts, with_no_change=True)
    out: dict[str, Headroom] = {}
    for rt, top in plain.items():
        out[rt] = Headroom(runtime=rt, ceiling=f"{top.recipe}@{rt}", ceiling_ms=top.latency_ms,
                           ceiling_ms_low=top.latency_ms_low, best=f"{best.recipe}@{best.runtime}",
                           best_ms=best.latency_ms, best_ms_high=best.latency_ms_high,
                           paired=paired(levels, top, best))
    return out


def search_runtime(hopeful: Sequence[str], heads: Mapping[str, Headroom]) -> str:
    """The runtime of the search's default trial and fallback path: the first of ``hopeful`` (the searched INT8
    runtimes, in the sweep's order) whose INT8 ceiling can still beat the fastest passing level (or that has no
    headroom to judge by), else the first of them: a trial measured where no INT8 model can win decides nothing
    (PP-OCRv4 det on an AVX2 CPU: onnxruntime's INT8 is slower than its FP32, OpenVINO's is 1.4x faster)."""
    return next((rt for rt in hopeful if rt not in heads or heads[rt].can_beat), hopeful[0])
