"""A no-change level's latency: the rounds of the fp32 level whose graph its artifact computes again.

A recipe that changes nothing (``int4`` on a conv-only model, :mod:`.honest`) leaves an artifact with the model's
graph signature: the same ops on the same weights, only the semantics-preserving cleanup (constant folding, Conv+BN
fusion, opset upgrade) in between, which both runtimes also do when they load the model. Such a level is never a
candidate and never recommended; its row says "no change (= fp32)". Timing it in the confirmation rounds measured
the model a second time per runtime: on PP-OCRv4 det (480x640, ``int4`` on both runtimes) 6 of the 36 runs of the
first rounds, ~19 % of their inferences (issue 32). So in a served sweep a no-change level whose first measurement
is its rounds (:mod:`.confirm`, deferred) is not run: its row shows the latency fields of the fp32 level on the same
runtime with the same options and threads, once that level's rounds are done (the same rounds, the same interval,
the same CPU-share verdict), names it in ``details.latency_of`` and keeps its own size. The history records no
benchmark for it (none ran). Without such an fp32 level (or without a served agent) it is timed as before.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..registry.lookup import detect_format, model_files
from .result import Level

REFERENCE = "fp32"  # the recipe of the level that times the model itself on each runtime
# what a level's benchmark adds to its details (.measure.complete): the same runtime and options report the same
_RUNTIME_FACTS = ("static_shapes", "inference_precision", "runtime_reported")
_LATENCY_FIELDS = ("runtime_version", "latency_ms", "latency_ms_p99", "latency_ms_low", "latency_ms_high",
                   "latency_confirm_rounds", "latency_ms_first_pass", "single_run", "valid", "host_cpu_busy_pct",
                   "confirm_round_medians_ms", "confirm_rounds_id",
                   "interference", "first_pass_agent", "energy_mj", "energy_source", "meets_budget")


def _setup(lv: Level) -> tuple[str, str, int | None]:
    return lv.runtime, json.dumps(lv.runtime_options or {}, sort_keys=True, default=str), lv.threads


def stand_ins(levels: Sequence[Level], todo: Mapping[str, int], deferred: Collection[str]) -> dict[str, int]:
    """Of the levels to time (``todo``: name -> index), each deferred no-change level that another level's rounds
    stand in for: name -> the index of the fp32 level on its runtime with its options and threads, where that level
    is timed in these rounds (in ``todo``) or was confirmed in rounds before."""
    fp32 = {_setup(lv): i for i, lv in enumerate(levels) if lv.recipe == REFERENCE and not lv.no_change}
    timing = set(todo.values())
    out: dict[str, int] = {}
    for name, i in todo.items():
        lv = levels[i]
        j = fp32.get(_setup(lv)) if lv.no_change and name in deferred else None
        if j is None or j == i:
            continue
        src = levels[j]
        if j in timing or (src.latency_confirm_rounds > 0 and not src.single_run):
            out[name] = j
    return out


def shown_as(lv: Level, src: Level) -> Level:
    """``lv`` (a no-change level, never timed) with the latency fields of ``src`` (the fp32 level it computes again,
    confirmed in rounds), its own size, and ``details.latency_of`` naming ``src``."""
    update: dict[str, Any] = {f: getattr(src, f) for f in _LATENCY_FIELDS}
    facts = {k: src.details[k] for k in _RUNTIME_FACTS if k in src.details}
    update.update(passed=lv.meets_retention and src.meets_budget, size_bytes=lv.size_bytes or _size(lv.artifact),
                  details={**lv.details, **facts, "latency_of": f"{src.recipe}@{src.runtime}"})
    return lv.model_copy(update=update)


def _size(artifact: str) -> int:
    """Bytes of every file of the model at ``artifact`` (an IR's .bin, ONNX external data)."""
    path = Path(artifact)
    return sum(f.stat().st_size for f in model_files(path, detect_format(path)))
