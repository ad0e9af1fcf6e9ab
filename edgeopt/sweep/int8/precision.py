"""Precision-aware INT8: the float parts of an INT8 mix run at f32 or at the runtime's default low precision.

A runtime whose descriptor declares a :class:`~edgeopt.registry.runtime_sweep.LowPrecisionDefault` (OpenVINO: BF16
on CPUs with AVX512_BF16 or AMX) runs the float parts of a mixed INT8 model in that precision unless told f32, which
changes both speed and accuracy (issue 21: the 0.99 mix at bf16 beat both the 0.95 mix at f32 and plain bf16). So
the INT8 search gets a **low-precision branch** per such runtime (:func:`low_branches`): its own per-layer gains
(float parts at low precision vs INT8), its own float set judged with the runtime's default precision, and the
chosen mix kept as the level ``int8-search+<low>`` (e.g. ``int8-search+bf16``) next to ``int8-search`` (f32 float
parts) and the plain low-precision level, for the ranking to compare.

A runtime gets the branch only when its low precision applies here: the probe's CPU flags allow it
(:meth:`LowPrecisionDefault.expected`) and the table's plain low-precision level exists (the runtime reported
running in it) and meets the threshold (an INT8 mix is not more accurate than the float model at that precision). On
a CPU without BF16 the search space simply has no bf16 branch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...registry import find_runtime
from ...registry.runtime_sweep import LowPrecisionDefault
from ..levels import Details, LevelTable
from ..result import Level

MIX = "int8-search"
QUANTIZE_PASS = "quantize_int8"
NEUTRAL_PASSES = frozenset({"cleanup"})  # passes that change no weight or precision


def low_mix_name(low_level: str) -> str:
    """The level name of the INT8 search's mix with float parts at ``low_level`` (``int8-search+bf16``)."""
    return f"{MIX}+{low_level}"


def is_low_precision_mix(recipe: str) -> bool:
    """Whether a level's recipe column names an INT8 model with low-precision float parts (``int8-search+bf16``,
    ``int8+bf16``)."""
    return "+" in recipe


def quantizes_only(recipe_cfg: Mapping[str, Any]) -> bool:
    """Whether a recipe's passes quantize to INT8 and change nothing else (``int8``; not ``prune30-int8``)."""
    names = {str(p.get("pass_name")) for p in recipe_cfg.get("passes", [])}
    return QUANTIZE_PASS in names and names <= NEUTRAL_PASSES | {QUANTIZE_PASS}


def low_precision_int8_level(table: LevelTable, recipe_cfg: Mapping[str, Any], name: str, runtime: str,
                             make: Callable[[], Path], facts: Details, cpu_flags: Sequence[str] | None) -> None:
    """The plain INT8 recipe's artifact with its float parts at ``runtime``'s default low precision, as level
    ``<recipe>+<low>`` (``int8+bf16``), when the runtime has one this CPU runs and reports running in it.

    Why: on OpenVINO the non-quantized ops of an INT8 model (and the dequantized tensors between them) run in f32
    under the sweep's reference options; at the runtime's default they run in bf16, which is what a user loading
    the file gets, and often the fastest INT8 there is. Its retention is measured, like every level's."""
    desc = find_runtime(runtime)
    low = desc.low_precision_default if desc is not None else None
    if low is None or not low.expected(cpu_flags) or not quantizes_only(recipe_cfg):
        return
    lvl = table(dict(recipe_cfg), f"{name}+{low.level}", runtime, make, facts, keep=False, options={low.option: None})
    if low.ran_low(lvl.details):
        table.levels.append(lvl)


@dataclass(frozen=True)
class LowBranch:
    """The low-precision branch of the INT8 search on one runtime.

    Attributes:
        runtime: the runtime. low: its descriptor's low-precision default.
    """

    runtime: str
    low: LowPrecisionDefault

    @property
    def level(self) -> str:
        """The adopted level's name, e.g. ``int8-search+bf16``."""
        return low_mix_name(self.low.level)

    @property
    def precision(self) -> str:
        """What the runtime reports when it ran low, e.g. ``bf16``."""
        return self.low.reports

    @property
    def options(self) -> dict[str, Any]:
        """Runtime options over the sweep's: the precision option dropped (the runtime's default)."""
        return {self.low.option: None}

    def ran_low(self, details: Mapping[str, Any]) -> bool:
        """Whether a level's details say its float parts ran in the low precision."""
        return self.low.ran_low(details)


def low_branches(rts: Sequence[str], cpu_flags: Sequence[str] | None,
                 levels: Sequence[Level]) -> tuple[dict[str, LowBranch], list[str]]:
    """The runtimes among ``rts`` whose INT8 search gets a low-precision branch, and why others with a low-precision
    default do not (one line each).

    Args:
        rts: the sweep's runtimes. cpu_flags: the probe's ``environment.cpu_flags`` (None: unknown; the plain
            level's report decides). levels: the sweep's table so far (the plain low-precision levels).
    """
    out: dict[str, LowBranch] = {}
    notes: list[str] = []
    for rt in rts:
        desc = find_runtime(rt)
        low = desc.low_precision_default if desc is not None else None
        if low is None:
            continue
        plain = next((lv for lv in levels if lv.runtime == rt and lv.recipe == low.level), None)
        if not low.expected(cpu_flags) or plain is None:
            notes.append(f"int8 search on {rt}: no {low.level} branch (this CPU does not run {rt} in {low.level}: "
                         f"needs one of {', '.join(low.cpu_flags) or 'its support'})")
        elif not plain.meets_retention:
            notes.append(f"int8 search on {rt}: no {low.level} branch ({low.level} alone keeps {plain.retention:.4f}"
                         " < the threshold; an INT8 mix in it would not pass)")
        else:
            out[rt] = LowBranch(runtime=rt, low=low)
    return out, notes
