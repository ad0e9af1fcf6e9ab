"""Memory and cold start of the levels that need them, each from a short fresh agent process.

A level's first pass runs in the sweep's served agent (:mod:`edgeopt.runners.served`), the process of the
confirmation and ranking rounds, so the first pass and the median that confirms it are measured alike (issue 21:
a fresh process's first pass read 15-50 % off the warm rounds). That process's peak RSS, though, holds every
model it keeps loaded and what its allocator kept from earlier requests, and its imports are warm: it cannot say
what one level needs to load and run. Here a fresh one-shot agent loads the level and runs
:data:`PROBE_ITERATIONS` inferences, no warm-up and no timed loop: its peak RSS and its load + first inference are
the level's own (``memory_source: fresh_probe``). Only for the levels a user picks from, the recommendation and
the passing levels on the Pareto frontier (its alternatives: nothing passing is both faster and more accurate); the
others keep ``memory_mb_peak`` None (each probe costs a process start, the imports and a load: ~1-1.5 s on the
PP-OCRv4 rec sweep's 2 cores). Without a served agent the first pass itself is a fresh process
(``memory_source: first_pass``) and nothing runs here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from ..errors import EdgeoptError, first_line
from ..metrics.result import BenchResult
from .measure import Context
from .result import Level, Recommendation

PROBE_ITERATIONS = 2  # inferences after the first one: enough for the runtime's first-run allocations to show
SOURCE = "fresh_probe"


def needs_probe(levels: Sequence[Level], frontier: Collection[int], recommended: Recommendation | None) -> list[int]:
    """Indices of the levels to probe: memory unknown, artifact on disk, and the recommended level or a passing
    level on the frontier (``frontier``: indices into ``levels``), except a no-change level whose latency is the fp32
    level's (``details.latency_of``, :mod:`.same_graph`): it shares that level's point on the frontier, and is no
    alternative to pick."""
    rec = (recommended.recipe, recommended.runtime, recommended.artifact) if recommended is not None else None
    return [i for i, lv in enumerate(levels)
            if lv.memory_mb_peak is None and Path(lv.artifact).is_file() and "latency_of" not in lv.details
            and ((lv.passed and i in frontier) or (lv.recipe, lv.runtime, lv.artifact) == rec)]


def probe_memory(ctx: Context, levels: Sequence[Level], todo: Sequence[int],
                 warn: Callable[[str], None]) -> list[Level]:
    """``levels`` with memory and cold start measured in a fresh agent for ``todo`` (:func:`needs_probe`; the
    history's benchmarks of those levels get the same numbers); a probe the agent cannot run is a warning and leaves
    the level's memory unknown."""
    out = list(levels)
    for i in todo:
        lv = levels[i]
        try:
            bench = ctx.latency(Path(lv.artifact), lv.runtime, lv.details.get("runtime_options"), fresh=True,
                                iterations=PROBE_ITERATIONS, warmup=0, warmup_s=0.0, min_duration_s=0.0,
                                keep_samples=False)
        except EdgeoptError as exc:
            warn(f"{lv.recipe} on {lv.runtime}: memory not measured ({first_line(exc)})")
            continue
        out[i] = lv.model_copy(update={"memory_mb_peak": bench.memory_mb.peak, "memory_source": SOURCE,
                                       "cold_start_ms": bench.cold_start_ms.total})
        _patch_history(ctx, lv, bench)
    return out


def _patch_history(ctx: Context, lv: Level, probe: BenchResult) -> None:
    """The probe's memory and cold start in the history's benchmarks of the same artifact, runtime and options."""
    for j, (old, bench) in enumerate(ctx.bench_results):
        if (old.artifact, old.runtime, old.runtime_options) == (lv.artifact, lv.runtime, lv.runtime_options):
            ctx.bench_results[j] = (old, bench.model_copy(update={"memory_mb": probe.memory_mb,
                                                                  "cold_start_ms": probe.cold_start_ms}))
