"""Two levels of a sweep compared as the ranking compares them, when they ran in the same confirmation rounds.

The sweep confirms the levels it built in interleaved rounds (:mod:`..confirm`); each level keeps its round medians
under the id of those rounds (``Level.confirm_round_medians_ms``, ``confirm_rounds_id``). Two levels with the same
id ran once in each of the same rounds, so each round's machine speed, as every level of those rounds saw it, can
be divided out (:func:`..rank.decide.compared_stats`), and the ranking's rule 1 applies between them
(:func:`..rank.decide.faster_beyond_noise`). The raw intervals of three rounds span the machine's drift: on a 2-vCPU
VM that moved 2x over them, onnxruntime's INT8 ceiling on PP-OCRv4 rec (18.1 ms) "could still beat" fp16@openvino
(10.4 ms). The INT8 search's latency rules (the hopeless-runtime skip, :mod:`.latency`; the cost gate,
:mod:`.cost_gate`) read these intervals where they exist, the raw ones elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..rank.decide import compared_stats, faster_beyond_noise


@dataclass(frozen=True)
class Paired:
    """``slow`` and ``fast`` in their shared rounds, each round's machine speed divided out."""

    slow_low_ms: float  # the low end of ``slow``'s interval
    fast_high_ms: float  # the high end of ``fast``'s interval
    rounds: int
    beaten: bool  # the ranking's rule 1: ``fast`` is faster than ``slow`` beyond noise


def paired(levels: Sequence[Any], slow: Any, fast: Any) -> Paired | None:
    """``slow`` against ``fast`` (two of ``levels``) when both ran in the same confirmation rounds, with the
    machine factor of each round taken over every level of ``levels`` that ran in them; None when they did not (or
    the rounds are too few to pair)."""
    rid = slow.confirm_rounds_id
    if rid is None or rid != fast.confirm_rounds_id or slow is fast:
        return None
    rounds: dict[str, list[list[float]]] = {}
    first: dict[tuple[float, ...], str] = {}  # a no-change level's stand-in repeats its fp32 level's medians: once
    index: dict[int, str] = {}
    for i, lv in enumerate(levels):
        if lv.confirm_rounds_id == rid and lv.confirm_round_medians_ms:
            key = first.setdefault(tuple(lv.confirm_round_medians_ms), str(i))
            rounds[key] = [[v] for v in lv.confirm_round_medians_ms]
            index[id(lv)] = key
    s, f = index.get(id(slow)), index.get(id(fast))
    if s is None or f is None or s == f:
        return None
    compared, factors = compared_stats(rounds, list(rounds))
    if factors is None:
        return None
    return Paired(slow_low_ms=compared[s].low_ms, fast_high_ms=compared[f].high_ms, rounds=len(factors),
                  beaten=faster_beyond_noise(rounds, compared, s, f))
