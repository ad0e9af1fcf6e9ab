"""Why a recommendation is off the printed Pareto frontier, in one line (issue 32: a CNN sweep printed a
recommendation that was not on its own frontier, the reason only in ``sweep.json``).

The frontier is drawn from each level's table values (``latency_ms``, the median of its confirmation rounds, and its
retention) over every level; the recommendation comes from the ranking rounds' decision (:mod:`.decide`), which
calls differences inside the noise a tie and lets a tie-break decide, and never recommends a no-change level or a
level that misses the threshold or the budget. So a level can sit on the frontier, faster by a hair and as accurate,
while the recommendation is another: :func:`off_frontier` names that level and the rule that set it aside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report import objective_value
from ..result import Level, Recommendation
from .negligible import pct

_UNITS = {"latency": ("p50", "ms"), "size": ("size", "MB"), "energy": ("energy", "mJ")}


def _name(lv: Level) -> str:
    return f"{lv.recipe}@{lv.runtime}"


def _why(by: Level, ranking: Mapping[str, Any] | None) -> str:
    """Why ``by``, which dominates the recommendation in the table, was not recommended."""
    if by.no_change:
        return "it changes nothing (= fp32) and is never recommended"
    if not by.passed:
        return "it misses the retention threshold or the budget"
    name = _name(by)
    r = ranking or {}
    if by.negligible_change and name in r.get("unbeaten", [name]):
        return (f"it changes a negligible share of the model ({pct(by.change_share_macs)} of the MACs) and never "
                "wins a tie within noise")
    if name in r.get("beaten_by", {}):
        return f"the ranking rounds measured it slower than {r['beaten_by'][name]} beyond noise"
    if name in r.get("dominated_by", {}):
        return f"the ranking rounds put it slower and less accurate than {r['dominated_by'][name]} (dominated)"
    if name in r.get("unbeaten", []):
        return f"the ranking rounds found no difference beyond noise, and the tie-break decided ({r.get('rule')})"
    if r and name not in r.get("candidates", []):
        return "it was not among the levels ranked in interleaved rounds"
    return "the recommendation was decided on other measurements than the table's"


def off_frontier(levels: Sequence[Level], frontier: Sequence[int], rec: Recommendation | None, objective: str,
                 ranking: Mapping[str, Any] | None = None) -> str | None:
    """One line saying why ``rec`` is not on the frontier (``frontier``: indices into ``levels``); None when it is
    (or there is no recommendation)."""
    if rec is None:
        return None
    key = (rec.recipe, rec.runtime, rec.artifact)
    mine = [i for i, lv in enumerate(levels) if (lv.recipe, lv.runtime, lv.artifact) == key]
    if not mine or any(i in frontier for i in mine):
        return None
    me = levels[mine[0]]
    x = objective_value(me, objective)
    better = [lv for lv in levels if lv is not me and objective_value(lv, objective) <= x
              and lv.retention >= me.retention and (objective_value(lv, objective) < x or lv.retention > me.retention)]
    if not better:
        return None
    by = min(better, key=lambda lv: (objective_value(lv, objective), -lv.retention))
    label, unit = _UNITS.get(objective, (objective, ""))
    return (f"{_name(me)} is off the Pareto frontier: {_name(by)} has a lower {label} "
            f"({objective_value(by, objective):.3f} vs {x:.3f} {unit}) at retention {by.retention:.4f} >= "
            f"{me.retention:.4f}, but {_why(by, ranking)}")
