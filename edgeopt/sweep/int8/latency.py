"""The INT8 search on each runtime that executes INT8: float sets ranked by what they cost on *that* runtime.

For every INT8 runtime of the sweep (those it measures whose descriptor offers the ``qdq`` INT8 backend,
:func:`int8_runtimes`), the FP32 base model and the fully quantized QDQ model are profiled layer by layer with the
agent's ``profile`` command (:func:`edgeopt.profile.api.profile`, the sweep's runner, threads, shapes and runtime
options). Per quantized node,
``float time - INT8 time`` is what keeping it in float costs there (:func:`gains`; cached by model, runtime,
version, quantizer config, device and threads, so another threshold re-uses it). :func:`.float_sets.
choose_float_set` then finds the cheapest float set meeting the threshold, each candidate judged by one device
evaluation on that runtime (the agent's ``evaluate``: retention vs the FP32 reference there), within
:data:`MAX_EVALUATIONS`. Where the runtime cannot profile, every node counts as costing the same (the order is
then by position), and the device trial that follows measures the chosen set's real latency.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import onnx

from ...errors import EdgeoptError
from ...fsutil import sha256_file
from ...profile.api import profile
from ...registry import get_runtime
from ...registry.runtime_sweep import Int8Backend
from ..measure import Context
from .float_sets import FloatSetChoice, choose_float_set
from .node_gains import gains_between
from .paired import paired
from .qdq_surgery import keep_float
from .sensitivity_cache import LatencyEntry, LatencyKey, SensitivityCache

MAX_EVALUATIONS = 24
PROFILE_ITERATIONS = 30


def int8_runtimes(rts: Sequence[str], backend: Int8Backend = Int8Backend.QDQ) -> list[str]:
    """The sweep's runtimes whose descriptor offers ``backend`` to the INT8 search (``qdq``: they execute INT8 QDQ
    models with INT8 kernels), in the sweep's order."""
    return [rt for rt in rts if backend in get_runtime(rt).int8_backends]


def _node_ms(ctx: Context, model: Path, runtime: str, options: dict[str, Any] | None = None) -> dict[str, float]:
    res = profile(model, target=ctx.target, runtime=runtime, runtime_options=ctx.options(runtime, options),
                  iterations=PROFILE_ITERATIONS, warmup=5, threads=ctx.measure.threads, shapes=ctx.measure.shapes,
                  runner=ctx.warm_runner, targets_dirs=ctx.targets_dirs)
    return res.node_times_ms()


def gains(ctx: Context, cache: SensitivityCache, base: Path, qdq: Path, nodes: Sequence[str], runtime: str,
          quantizer: dict[str, Any], emit: Callable[[dict[str, Any]], None], options: dict[str, Any] | None = None,
          precision: str | None = None) -> dict[str, float]:
    """Per node: float time minus INT8 time on ``runtime`` (ms); cached. Empty when the runtime cannot profile.

    ``options``/``precision``: a low-precision branch's runtime options and its precision's name (part of the key).
    """
    qkey = {**quantizer, "float_precision": precision} if precision else quantizer
    key = LatencyKey(model_sha256=sha256_file(base), runtime=runtime, runtime_version=ctx.versions.get(runtime, ""),
                     quantizer=qkey, device=f"{ctx.target}@{ctx.runner.name}", threads=ctx.measure.threads)
    hit = cache.gains(key)
    if hit is not None:
        return dict(hit.gain_ms)
    try:
        fl, il = _node_ms(ctx, base, runtime, options), _node_ms(ctx, qdq, runtime, options)
    except EdgeoptError as exc:
        emit({"event": "info", "message": f"int8 search: no per-layer profile on {runtime} ({exc}); every node "
                                          "counts as costing the same"})
        return {}
    out = gains_between(fl, il, nodes)
    cache.put_gains(LatencyEntry(key=key, gain_ms=out, seconds=0.0))
    return out


def float_set(ctx: Context, reference: Path, qdq: onnx.ModelProto, base: onnx.ModelProto, nodes: Sequence[str],
              gain_ms: dict[str, float], runtime: str, work: Path, op_types: Sequence[str],
              budget: Callable[[], bool], options: dict[str, Any] | None = None,
              max_evaluations: int = MAX_EVALUATIONS, cost_cap_ms: float | None = None,
              resolution_ms: float | None = None) -> FloatSetChoice:
    """The cheapest float set meeting the threshold on ``runtime``, judged by device evaluations there
    (``options``: runtime options over the sweep's, e.g. a low-precision branch's; ``cost_cap_ms``: the cost
    gate's cap on the float parts' summed gains, :mod:`.cost_gate`; ``resolution_ms``: the least latency change
    the ranking resolves, below which growing stops, :func:`.float_sets.choose_float_set`; both applied only with
    profiled gains)."""
    work.mkdir(parents=True, exist_ok=True)
    count = [0]

    def passes(float_nodes: list[str]) -> bool:
        path = work / f"eval-{count[0]}.onnx"
        count[0] += 1
        path.write_bytes(keep_float(qdq, base, float_nodes, list(op_types)).SerializeToString())
        _, ret = ctx.accuracy(path, runtime, reference, options)
        return ret >= ctx.min_retention

    cost = gain_ms or {n: 1.0 for n in nodes}
    return choose_float_set(list(nodes), cost, passes, max_evaluations=max_evaluations, budget=budget,
                            cost_cap_ms=cost_cap_ms if gain_ms else None,
                            resolution_ms=resolution_ms if gain_ms else None)


# How much slower (beyond both intervals) a runtime's fastest full-INT8 level must be than the fastest passing level
# before its latency-aware search is skipped: a mix keeps parts in float, so it is rarely faster than full INT8, and
# never by this much (the nodes whose INT8 kernel is slower than float are a small share of the time).
HOPELESS_RATIO = 1.3
# Below this (ms per inference) a runtime is always searched: on a model that small the per-op overhead of the QDQ
# pairs dominates, so a mix with fewer of them can beat full INT8, and its trials cost little anyway.
HOPELESS_MIN_MS = 1.0


def is_full_int8(recipe: str) -> bool:
    """Whether a level of ``recipe`` is the full INT8 model (``int8`` or ``int8+<low>``: every quantizable op in
    INT8, the lower bound of any mix's latency on its runtime)."""
    return recipe == "int8" or recipe.startswith("int8+")


def int8_ceilings(levels: Sequence[Any], rts: Sequence[str], *, with_no_change: bool) -> tuple[Any, dict[str, Any]]:
    """``(best, {runtime: plain})`` among the levels with a confirmed interval: the passing level with the lowest
    interval high end (``with_no_change``: a level computing the model's own graph counts too), and per runtime of
    ``rts`` its fastest plain INT8 level (``int8`` or ``int8+<low>``: the full INT8 model, the lower bound of any
    mix) by its interval's low end. ``(None, {})`` when no confirmed level passes."""
    confirmed = [lv for lv in levels if lv.latency_ms_low is not None and lv.latency_ms_high is not None
                 and not lv.single_run]
    passing = [lv for lv in confirmed if lv.passed and (with_no_change or not lv.no_change)]
    if not passing:
        return None, {}
    best = min(passing, key=lambda lv: lv.latency_ms_high)
    plain: dict[str, Any] = {}
    for rt in rts:
        full = [lv for lv in confirmed if lv.runtime == rt and is_full_int8(lv.recipe)]
        if full:
            plain[rt] = min(full, key=lambda lv: lv.latency_ms_low)
    return best, plain


def _hopeless(levels: Sequence[Any], fastest: Any, best: Any) -> bool:
    """Whether ``fastest`` (a full INT8 level) is more than :data:`HOPELESS_RATIO` x slower than ``best`` by their
    raw intervals, or, where the two ran in the same rounds, by the ranking's intervals with each round's machine
    speed divided out and its rule 1 (:mod:`.paired`): the rounds only add evidence against a runtime."""
    if fastest.latency_ms_low < HOPELESS_MIN_MS:
        return False
    if fastest.latency_ms_low > HOPELESS_RATIO * best.latency_ms_high:
        return True
    p = paired(levels, fastest, best)
    return p is not None and p.beaten and p.slow_low_ms > HOPELESS_RATIO * p.fast_high_ms


def hopeless_runtimes(levels: Sequence[Any], rts: Sequence[str]) -> dict[str, str]:
    """INT8 runtimes among ``rts`` whose search cannot produce the recommendation, each with the one-line reason.

    A runtime is hopeless when its fastest plain INT8 level (``int8``, or ``int8+<low>``: the full INT8 model, the
    lower bound of any mix) is, by its confirmed interval's low end, more than :data:`HOPELESS_RATIO` x slower than
    the confirmed interval's high end of the fastest passing level (:func:`_hopeless`): no INT8 mix there would
    beat a level that already passes, and its device trials (the slowest part of a sweep on a detector) are
    skipped. Levels without a confirmed interval decide nothing (a single run can be 2x off); a full INT8 model
    under :data:`HOPELESS_MIN_MS` never makes its runtime hopeless."""
    best, plain = int8_ceilings(levels, rts, with_no_change=False)
    out: dict[str, str] = {}
    for rt, fastest in plain.items():
        if _hopeless(levels, fastest, best):
            ratio = fastest.latency_ms / best.latency_ms
            out[rt] = (f"int8 search on {rt} skipped: its full INT8 model ({fastest.recipe}, "
                       f"{fastest.latency_ms:.2f} ms) is {ratio:.2f}x slower than {best.recipe}@{best.runtime} "
                       f"({best.latency_ms:.2f} ms), which already passes; an INT8 mix keeps parts in float and is "
                       "not faster than full INT8 by that much, so the search's choice is not measured there "
                       "either")
    return out
