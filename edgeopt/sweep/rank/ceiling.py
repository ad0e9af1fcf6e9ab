"""The INT8 ceiling line (issue 32 item 2): what the recommendation gave up, in numbers the sweep already has.

For the recommended level's runtime: its FP32 level, its plain all-INT8 level (the **ceiling**: every quantizable
layer in INT8, whatever it keeps of the metric), the share of that possible speedup the recommendation captured,
and, for an INT8 mix, how many nodes it keeps in float and what they cost over all-INT8, e.g. ``captured 35 % of
the INT8 speedup on openvino (ceiling: int8 1.38x over fp32, retention 0.67 < 0.99); 31 nodes kept in float cost
8.10 ms``, split by the per-layer profile (when the mix is the float-set search's set) into their float kernels
and the rest (:func:`_float_cost`). Where the runtime's own default runs float models at a lower precision
(OpenVINO's bf16 on an AVX512_BF16/AMX CPU), the line also gives all-INT8 over that default, which is what a user
gets with no compression at all: on a Sapphire Rapids VM PP-OCRv4 det's all-INT8 ran 1.81x over fp32 but 1.03x
over bf16 (session 19).
Nothing is measured here: the levels' latencies are the table's (medians of interleaved rounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..int8.float_sets import TRIAL_LABEL
from ..result import Int8SearchResult, Level, Recommendation
from .recommend import runtime_defaults

FP32 = "fp32"
INT8 = "int8"
SEARCH = "int8-search"


def _level(levels: Sequence[Level], recipe: str, runtime: str) -> Level | None:
    return next((lv for lv in levels if lv.recipe == recipe and lv.runtime == runtime and lv.valid), None)


def _float_nodes(rec: Recommendation, search: Int8SearchResult | None) -> int | None:
    """Nodes the recommended INT8 mix keeps in float (None for a level that is not the search's)."""
    if search is None or not rec.recipe.startswith(SEARCH):
        return None
    chosen = search.chosen_by_runtime.get(rec.runtime)
    if chosen is not None and "nodes_to_exclude" in chosen.config:
        return len(chosen.config["nodes_to_exclude"])
    counted = search.float_sets.get(rec.runtime, {}).get("float_nodes")
    if isinstance(counted, int):
        return counted
    return len(search.float_nodes) if search.runtime == rec.runtime else None


def _profiled(rec: Recommendation, search: Int8SearchResult | None) -> dict[str, Any] | None:
    """The per-layer profile's cost of the recommended mix's float set (``float_sets.<runtime>.float_cost``), when
    the recommendation is that set's trial with f32 float parts (the profile timed f32 kernels)."""
    if search is None or rec.recipe != SEARCH:
        return None
    chosen, cost = search.chosen_by_runtime.get(rec.runtime), search.float_sets.get(rec.runtime, {}).get("float_cost")
    if chosen is None or not isinstance(cost, dict) or not chosen.label.startswith(TRIAL_LABEL):
        return None
    return cost if len(chosen.config.get("nodes_to_exclude") or []) == cost.get("nodes") else None


def _float_cost(measured: float, cost: dict[str, Any] | None) -> str:
    """The float nodes' measured cost over all-INT8, split by the per-layer profile into their float kernels and
    the rest: what no node's gain holds (the quantize steps and reorders where float and INT8 parts meet, layers
    the profile gave to no node) and the rounds' noise."""
    text = f"{measured:.3f} ms"
    if cost is None:
        return text
    kernels = float(cost.get("profiled_ms", 0.0))
    top = ", ".join(f"{n} {ms:.2f} ms" for n, ms in (cost.get("costliest") or {}).items())
    where = f"{kernels:.3f} ms in their float kernels by the per-layer profile"
    if top:
        where += f" (costliest: {top})"
    if measured >= kernels:
        return (f"{text}: {where}, {measured - kernels:.3f} ms in no node's gain (conversions where float and INT8 "
                "parts meet, layers given to no node, the rounds' noise)")
    return f"{text} ({where}, {kernels - measured:.3f} ms more than measured: the rounds' noise, or fused differently)"


def ceiling_line(levels: Sequence[Level], rec: Recommendation | None, search: Int8SearchResult | None,
                 min_retention: float) -> str | None:
    """One line for ``rec``: the all-INT8 ceiling on its runtime and the share of it captured; None when that
    runtime has no FP32 or plain INT8 level in the table, or INT8 is not faster than FP32 there (no ceiling)."""
    if rec is None:
        return None
    fp32, int8 = _level(levels, FP32, rec.runtime), _level(levels, INT8, rec.runtime)
    if fp32 is None or int8 is None:
        return None
    gap = fp32.latency_ms - int8.latency_ms
    if gap <= 0:
        return (f"no INT8 ceiling on {rec.runtime}: all-INT8 ({int8.latency_ms:.3f} ms) is not faster than fp32 "
                f"({fp32.latency_ms:.3f} ms) on this CPU")
    share = max(0.0, min(1.0, (fp32.latency_ms - rec.latency_ms) / gap))
    kept = "keeps" if int8.retention >= min_retention else "keeps only"
    text = (f"captured {share:.0%} of the INT8 speedup on {rec.runtime} (ceiling: all-INT8 "
            f"{fp32.latency_ms / int8.latency_ms:.2f}x over fp32 at {int8.latency_ms:.3f} ms, {kept} retention "
            f"{int8.retention:.4f}; recommended {fp32.latency_ms / rec.latency_ms:.2f}x)")
    nodes = _float_nodes(rec, search)
    if nodes is not None:
        cost = _float_cost(max(0.0, rec.latency_ms - int8.latency_ms), _profiled(rec, search))
        text += f"; {nodes} nodes kept in float cost {cost}"
    default = next((lv for lv in runtime_defaults(levels) if lv.runtime == rec.runtime), None)
    if default is not None and default.recipe != FP32:
        text += (f"; over {default.recipe}, {rec.runtime}'s default here ({default.latency_ms:.3f} ms), all-INT8 is "
                 f"{default.latency_ms / int8.latency_ms:.2f}x")
    return text
