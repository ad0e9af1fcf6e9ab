"""Latency-aware float sets for mixed-precision INT8: keep in float what costs accuracy and little time.

The accuracy-aware INT8 search keeps some quantized nodes in float until the threshold holds. Which ones decides
the speed of the result: on OpenVINO with VNNI a 1x1 conv runs ~3.5x faster in INT8 while a depthwise conv gains
~1.3x, and a node whose INT8 kernel is no faster than float costs nothing to keep in float. So candidates are
ranked by **accuracy gained per millisecond lost** on the target runtime:

1. The gains: per node, what keeping it in float costs (ms), from per-layer profiles of the float and the
   INT8 model (:func:`.latency.gains`).
2. Sensitivity: the accuracy a node costs in INT8, from the caller.
3. :func:`rank_for_float`: free nodes first (INT8 no faster: float costs nothing), then by accuracy gain per ms.
4. :func:`narrow_float_set`: the smallest prefix of that ranking that passes (doubling, then bisection), then
   each float node put back in INT8 while the threshold holds, the most expensive first, so the float set
   costs as little time as possible.
5. :func:`grow_int8_set`: the other direction, for models whose error is spread over every layer (PP-OCRv4
   rec: a few nodes quantized already cost 1 % agreement, so the float set is most of the model and the
   prefix bisection is unreliable, since retention is far from monotone in the prefix). Start from the float
   model and quantize nodes one at a time, the most time saved per accuracy lost first, keeping each one only
   while the threshold holds. One evaluation per node tried; nodes that save little time are never tried, and
   growing ends once those left to try save less together than the sweep's ranking can tell apart
   (:func:`unmeasurable`).
6. :func:`choose_float_set`: the two together under one evaluation budget: narrowing while a float prefix of at
   most half the nodes passes (error concentrated in a few nodes), growing otherwise (error spread out). The
   half-size prefix is evaluated first: when it fails, no shorter prefix of the same ranking passes, so narrowing
   costs one evaluation instead of the doubling's five or six (PP-OCRv4 det: 31 convs in float reach mask IoU
   0.85 against 0.99, ``benchmarks/results/float_set_bound_s18_avx2.json``), and growing gets them (det's sweep
   at 0.95: 20 convs in INT8 where session 17's kept 17).

Plain inputs only (names, numbers, callables): no runner or sweep context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ...errors import InputError

FREE_MS = 0.005  # a node whose INT8 kernel saves less than this (ms per inference) is free to keep in float
TRIAL_LABEL = "latency-aware"  # how a float set's device trial is labelled (``latency-aware on <runtime>: ...``)


def rank_for_float(sensitivity: Mapping[str, float], gain_ms: Mapping[str, float], *,
                   free_ms: float = FREE_MS) -> list[str]:
    """Nodes in the order to keep them in float: free ones first, then most accuracy per ms lost.

    Args:
        sensitivity: accuracy gained by keeping the node in float (e.g. retention with it in float minus the
            fully quantized retention, or the drop in output error); higher = more important to keep float.
        gain_ms: latency lost by keeping it in float (:func:`.latency.gains`); missing nodes count as
            not free.
        free_ms: below this gain a node is free (its INT8 kernel is no faster).

    Raises:
        InputError: ``sensitivity`` is empty.
    """
    if not sensitivity:
        raise InputError("no node sensitivity to rank; measure the quantized nodes first")
    floor = max(free_ms, 1e-6)

    def key(name: str) -> tuple[int, float, str]:
        s = float(sensitivity[name])
        g = gain_ms.get(name)
        if g is not None and g < free_ms:
            return (0, -s, name)
        return (1, -s / max(float(g) if g is not None else floor, floor), name)

    return sorted(sensitivity, key=key)


def smallest_passing_prefix(ranking: Sequence[str], passes: Callable[[list[str]], bool],
                            budget: Callable[[], bool]) -> list[str] | None:
    """The shortest prefix of ``ranking`` that ``passes``: doubling until one passes, then bisection.

    Returns:
        That prefix; None when none passes before ``budget()`` turns False (or the whole ranking fails).
    """
    lo, k, found = 0, 1, False
    while ranking and budget():
        k = min(k, len(ranking))
        if passes(list(ranking[:k])):
            found = True
            break
        if k == len(ranking):
            break
        lo, k = k, k * 2
    if not found:
        return None
    while k - lo > 1 and budget():
        mid = (lo + k) // 2
        if passes(list(ranking[:mid])):
            k = mid
        else:
            lo = mid
    return list(ranking[:k])


def narrow_float_set(ranking: Sequence[str], passes: Callable[[list[str]], bool], *,
                     gain_ms: Mapping[str, float] | None = None, max_putbacks: int | None = None,
                     budget: Callable[[], bool] = lambda: True) -> list[list[str]]:
    """Candidate float sets, best first: the smallest passing prefix, then that prefix pruned by cost.

    Args:
        ranking: :func:`rank_for_float`'s order.
        passes: whether a float set meets the threshold (a host or device evaluation).
        gain_ms: latency lost per node; pruning tries to put the most expensive node back in INT8 first (in
            ranking order from the end when unknown). Free nodes are never put back.
        max_putbacks: try at most this many put-backs (the most expensive nodes): each costs one evaluation, and
            putting back a cheap node saves little time. None: every node of the prefix.
        budget: False once time or trials run out; the best found so far is returned.

    Returns:
        ``[pruned, prefix]`` (or ``[prefix]`` when pruning removed nothing); ``[]`` when no prefix passes.
    """
    prefix = smallest_passing_prefix(ranking, passes, budget)
    if prefix is None:
        return []
    cost = gain_ms or {}
    order = sorted(prefix, key=lambda n: (-cost.get(n, 0.0), -prefix.index(n)))
    tries = [n for n in order if cost.get(n, 1.0) >= FREE_MS]  # free nodes stay float
    return put_back(prefix, tries[:max_putbacks], passes, budget)


def put_back(prefix: list[str], tries: Sequence[str], passes: Callable[[list[str]], bool],
             budget: Callable[[], bool]) -> list[list[str]]:
    """Try each node of ``tries`` back in INT8 (out of the float set ``prefix``), keeping it there when the model
    still passes; the candidates to re-measure: the narrowed set and the prefix (one list when nothing moved)."""
    pruned = list(prefix)
    for name in tries:
        if not budget() or len(pruned) == 1:
            break
        trial = [n for n in pruned if n != name]
        if passes(trial):
            pruned = trial
    return [pruned, prefix] if pruned != prefix else [prefix]


def quantize_order(sensitivity: Mapping[str, float] | None, gain_ms: Mapping[str, float], *,
                   free_ms: float = FREE_MS, floor: float = 1e-4) -> list[str]:
    """Nodes in the order to try them in INT8: most time saved per accuracy lost first; free nodes left out.

    Args:
        sensitivity: accuracy the node costs when quantized (e.g. retention lost with only it quantized); None:
            order by time saved alone.
        gain_ms: time saved by quantizing it (:func:`.latency.gains`).
        free_ms: nodes saving less than this are not worth an evaluation (they stay float).
        floor: smallest sensitivity used in the ratio (a node that costs nothing is not infinitely good).
    """
    worth = [n for n, g in gain_ms.items() if g >= free_ms]
    if sensitivity is None:
        return sorted(worth, key=lambda n: (-gain_ms[n], n))
    return sorted(worth, key=lambda n: (-gain_ms[n] / max(float(sensitivity.get(n, 1.0)), floor), n))


def grow_int8_set(order: Sequence[str], all_nodes: Sequence[str], passes: Callable[[list[str]], bool], *,
                  max_tries: int | None = None, budget: Callable[[], bool] = lambda: True,
                  hopeless: Callable[[list[str]], bool] = lambda settled: False,
                  negligible: Callable[[list[str]], bool] = lambda rest: False,
                  refused: list[str] | None = None) -> list[str]:
    """The float set left after quantizing ``order``'s nodes one at a time while ``passes`` holds.

    Args:
        order: nodes to try in INT8, best first (:func:`quantize_order`).
        all_nodes: every quantizable node; those never tried or refused stay float.
        passes: whether a float set meets the threshold.
        max_tries: most nodes tried (one evaluation each); None: all of ``order``.
        budget: False once time or trials run out.
        hopeless: given the nodes that stay float whatever the remaining tries decide (refused or never tried),
            True stops growing (the float set can no longer be cheap enough to matter).
        negligible: given the nodes still to try, True stops growing (quantizing all of them would not change the
            latency by a measurable amount).
        refused: when given, each node tried in INT8 and refused (the threshold failed with it) is appended.

    Returns:
        The float set (sorted as ``all_nodes``); every node when nothing could be quantized.
    """
    quantized: set[str] = set()
    tries = list(order)[:max_tries]
    for i, name in enumerate(tries):
        if (not budget() or hopeless([n for n in all_nodes if n not in quantized and n not in tries[i:]])
                or negligible(tries[i:])):
            break
        trial = quantized | {name}
        if passes([n for n in all_nodes if n not in trial]):
            quantized = trial
        elif refused is not None:
            refused.append(name)
    return [n for n in all_nodes if n not in quantized]


def unmeasurable(gain_ms: Mapping[str, float], resolution_ms: float | None,
                 why: list[str]) -> Callable[[list[str]], bool]:
    """:func:`grow_int8_set`'s ``negligible``: True (with the reason appended to ``why``) once the nodes still to
    try save less than ``resolution_ms`` together by ``gain_ms``; never with ``resolution_ms`` None."""
    def negligible(rest: list[str]) -> bool:
        saved = sum(max(gain_ms.get(n, 0.0), 0.0) for n in rest)
        if resolution_ms is None or not rest or saved >= resolution_ms:
            return False
        why.append(f"the {len(rest)} nodes left to try save {saved:.3f} ms together, under the ranking's "
                   f"resolution ({resolution_ms:.3f} ms): quantizing them could not be measured")
        return True
    return negligible


@dataclass(frozen=True)
class FloatSetChoice:
    """The float set chosen, how (``narrow``, ``grow``, ``none`` when nothing passed, ``stopped`` when no float set
    under the cost cap was found), the evaluations, and why the search stopped early (empty: it did not)."""

    float_nodes: list[str]
    strategy: str
    evaluations: int
    candidates: list[list[str]]
    stopped: str = ""
    capped: int = 0  # candidates over the cost cap, counted as failing without an evaluation
    ended: str = ""  # why growing ended before its tries ran out: what was left could not be measured (empty: no)
    refused: tuple[str, ...] = ()  # growing: the nodes tried in INT8 that failed the threshold (the rest: untried)


def float_reasons(choice: FloatSetChoice, gain_ms: Mapping[str, float] | None) -> dict[str, str]:
    """Per float node of a grown set (strategy ``grow``, ``stopped`` or ``none``), why it stayed float: tried in
    INT8 and refused, free to keep (``gain_ms`` under :data:`FREE_MS`; only with a profile), or never tried and why.
    Empty for a narrowed set (its float nodes are a prefix that passed, pruned)."""
    if choice.strategy not in ("grow", "stopped", "none"):
        return {}
    refused, untried = set(choice.refused), choice.ended or choice.stopped or "the evaluations or the time ran out"
    out: dict[str, str] = {}
    for n in choice.float_nodes:
        if n in refused:
            out[n] = "tried in INT8 and refused: the threshold failed with it"
        elif gain_ms and gain_ms.get(n, 0.0) < FREE_MS:
            out[n] = f"not tried: its INT8 kernel saves under {FREE_MS:g} ms here, so float costs nothing"
        else:
            out[n] = f"not tried in INT8: {untried}"
    return out


def choose_float_set(nodes: Sequence[str], gain_ms: Mapping[str, float], passes: Callable[[list[str]], bool], *,
                     sensitivity: Mapping[str, float] | None = None, max_evaluations: int = 24,
                     budget: Callable[[], bool] = lambda: True, cost_cap_ms: float | None = None,
                     resolution_ms: float | None = None) -> FloatSetChoice:
    """The cheapest float set found that passes, within ``max_evaluations`` calls of ``passes``.

    ``sensitivity`` is the accuracy a node costs in INT8 (higher: keep it in float first), e.g. retention lost
    with only that node quantized; without one, both directions order nodes by cost alone. When
    no float prefix of at most half the nodes passes, the error is spread over the model and growing the INT8
    set from the float model (:func:`grow_int8_set`) finds more INT8 for the same evaluations.

    Args:
        nodes: the quantized nodes of the fully quantized model.
        gain_ms: latency lost per node kept in float (:func:`.latency.gains`).
        passes: whether a float set meets the threshold (one evaluation each).
        sensitivity: accuracy gained by keeping the node in float, or None.
        max_evaluations: most calls of ``passes``.
        budget: False once the search's time runs out.
        cost_cap_ms: a float set whose summed ``gain_ms`` exceeds this cannot beat the fastest passing level
            (:mod:`.cost_gate`): such a candidate is not evaluated (it counts as failing), growing stops once the
            nodes left in float for good cost more, and then the strategy is ``stopped``. None: no cap.
        resolution_ms: the smallest latency change the sweep's ranking can tell apart (its tolerance times the
            fastest passing level's latency): growing stops once the nodes still to try save less than this
            together, by ``gain_ms``, and keeps what it found (``ended`` says so). None: every try runs.
    """
    count, capped = [0], [0]
    seen: dict[frozenset[str], bool] = {}

    def over(fs: Sequence[str]) -> bool:
        return cost_cap_ms is not None and sum(gain_ms.get(n, 0.0) for n in fs) > cost_cap_ms

    def counted(fs: list[str]) -> bool:
        if over(fs):
            capped[0] += 1
            return False
        key = frozenset(fs)
        if key not in seen:
            count[0] += 1
            seen[key] = passes(fs)
        return seen[key]

    def left() -> bool:
        return count[0] < max_evaluations and budget()

    sens = dict(sensitivity) if sensitivity else {n: 1.0 for n in nodes}  # no sensitivity: cheapest first
    ranking = rank_for_float(sens, gain_ms)
    half = next((k for k in range(max(1, len(ranking) // 2), 1, -1) if not over(ranking[:k])), 1)
    # the longest prefix under the cap first: where it fails no shorter one passes (module docstring, step 6)
    cands = narrow_float_set(ranking[:half], counted, gain_ms=gain_ms, max_putbacks=8, budget=left) \
        if left() and counted(ranking[:half]) else []
    if cands:
        return FloatSetChoice(float_nodes=cands[0], strategy="narrow", evaluations=count[0], candidates=cands,
                              capped=capped[0])
    order = quantize_order(sensitivity, {n: gain_ms.get(n, 0.0) for n in nodes})
    settled: list[list[str]] = []  # the nodes left in float for good, once they cost more than the cap

    def hopeless(stay_float: list[str]) -> bool:
        if over(stay_float):
            settled.append(stay_float)
        return bool(settled)

    def evaluated(fs: list[str]) -> bool:  # growing passes through sets over the cap on its way down
        count[0] += 1
        return passes(fs)

    ended: list[str] = []
    refused: list[str] = []
    grown = grow_int8_set(order, list(nodes), evaluated, budget=left, hopeless=hopeless,
                          negligible=unmeasurable(gain_ms, resolution_ms, ended), refused=refused)
    if settled or over(grown):
        cost = sum(gain_ms.get(n, 0.0) for n in (settled[0] if settled else grown))
        why = (f"{len(settled[0])} nodes stay float whatever the remaining tries decide" if settled
               else f"the float set found ({len(grown)} nodes)")
        stop = (f"{why}, costing {cost:.2f} ms of per-layer gains > the cap {cost_cap_ms:.2f} ms: no float set "
                "can beat the fastest passing level")
        return FloatSetChoice(float_nodes=grown, strategy="stopped", evaluations=count[0], candidates=[],
                              capped=capped[0], refused=tuple(refused), stopped=stop)
    strategy = "grow" if len(grown) < len(nodes) else "none"
    return FloatSetChoice(float_nodes=grown, strategy=strategy, evaluations=count[0], candidates=[grown],
                          capped=capped[0], ended=ended[0] if ended else "", refused=tuple(refused))
