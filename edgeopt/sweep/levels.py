"""The sweep's level table: each (config, runtime) measured once, read back from the cache when it was before; at
the end every kept level's latency confirmed in interleaved rounds (:mod:`.confirm`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .cache import LevelCache, cache_key
from .confirm import confirm_levels
from .measure import INTERFERENCE_PCT, Context
from .result import Level

Progress = Callable[[dict[str, Any]], None]
# Cache-entry mark of a level evaluated but not timed yet (a served sweep times it in its first rounds, .confirm)
UNTIMED = "untimed"
# a level's extra facts, or a callable giving them once its artifact is made (e.g. whether the recipe changed it)
Details = dict[str, Any] | Callable[[], dict[str, Any]] | None


class LevelRunner(Protocol):
    """Measures (or reads from the cache) one configuration on one runtime."""

    def __call__(self, recipe_cfg: Any, name: str, runtime: str, make: Callable[[], Path],
                 details: Details = None, keep: bool = True, options: dict[str, Any] | None = None) -> Level:
        """The level of the artifact ``make()`` builds (only called on a cache miss).

        Args:
            recipe_cfg: what made the artifact (part of the cache key).
            name: the level's ``recipe`` column.
            runtime: where it runs.
            make: builds the artifact and returns its path.
            details: extra facts for the level's ``details`` (a callable: read after ``make()``).
            keep: add the level to the sweep's table (False: a search trial).
            options: runtime options over the sweep's for this runtime (part of the cache key).
        """
        ...


@dataclass
class LevelTable:
    """The levels kept so far and how to measure one more (a :class:`LevelRunner`).

    Attributes:
        ctx: how a level is measured.
        cache: the level cache (``--no-cache`` reads nothing but still writes).
        key_parts: what every cache key shares (model, target, runner, eval data, metric, output, fps).
        reference: the original model (retention is measured against it).
        emit: receives a ``level`` event after each level.
        levels: the table, in measurement order.
        warnings: every warning a recipe's passes raised and every level that changed nothing (deduplicated).
    """

    ctx: Context
    cache: LevelCache
    key_parts: dict[str, Any]
    reference: Path
    emit: Progress
    levels: list[Level] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    keys: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (recipe, runtime, artifact) -> cache key
    # cache key -> the level measured in this run: an INT8 search trial adopted as a level is not measured twice,
    # even under --no-cache (which reads nothing from the cache)
    measured: dict[str, Level] = field(default_factory=dict)
    # cache keys of kept levels built without a benchmark (served sweeps): timed in their first rounds (.confirm)
    deferred: set[str] = field(default_factory=set)

    def __call__(self, recipe_cfg: Any, name: str, runtime: str, make: Callable[[], Path],
                 details: Details = None, keep: bool = True, options: dict[str, Any] | None = None) -> Level:
        """See :class:`LevelRunner`; a cached level's pass/fail is judged again (the threshold is not in the key)."""
        k = cache_key(**self.key_parts, recipe=recipe_cfg, runtime=runtime, version=self.ctx.versions[runtime],
                      options=self.ctx.options(runtime, options))
        again = k in self.measured and Path(self.measured[k].artifact).is_file()
        hit = None if again else self.cache.get(k)
        if hit is not None and hit.get(UNTIMED) and (self.ctx.served is None or not Path(hit["artifact"]).is_file()):
            hit = None  # evaluated but never timed, and it cannot be timed in rounds here: measured again
        if again:
            lvl = self._again(self.measured[k], name, details)
            if k not in self.deferred:
                self.cache.put(k, lvl.model_dump(mode="json"))
        elif hit is not None:
            ok = hit["retention"] >= self.ctx.min_retention
            lvl = Level.model_validate({**{f: v for f, v in hit.items() if f != UNTIMED}, "cached": True,
                                        "meets_retention": ok, "passed": ok and hit["meets_budget"]})
            if hit.get(UNTIMED):  # a sweep stopped before its rounds: its evaluation is kept, its timing is not
                self.deferred.add(k)
        else:
            artifact = make()
            facts = details() if callable(details) else details
            defer = keep and self.ctx.served is not None  # timed in its first interleaved rounds (.confirm)
            lvl = self.ctx.level(artifact, runtime, name, self.reference, facts, options, defer=defer)
            if defer:  # cached now (its evaluation survives an interrupted sweep), marked untimed until its rounds
                self.deferred.add(k)
            self.cache.put(k, lvl.model_dump(mode="json") | ({UNTIMED: True} if defer else {}))
        self.measured.setdefault(k, lvl)
        self.keys[(lvl.recipe, lvl.runtime, lvl.artifact)] = k
        if keep:
            self.levels.append(lvl)
        self.emit({"event": "level", "recipe": lvl.recipe, "runtime": runtime, "cached": lvl.cached,
                   "retention": lvl.retention, "no_change": lvl.no_change,
                   "latency_ms": None if k in self.deferred else lvl.latency_ms})
        if keep:
            self._warn(lvl)
        return lvl

    @staticmethod
    def _again(lvl: Level, name: str, details: Details) -> Level:
        """A level measured earlier in this run under the same key, named ``name``, with ``details`` over its own."""
        facts = details() if callable(details) else details
        return lvl.model_copy(update={"recipe": name, "details": {**lvl.details, **(facts or {})}})

    def confirm(self) -> None:
        """Every kept level's latency measured (deferred levels: their first measurement) or confirmed in
        interleaved rounds (:mod:`.confirm`; once all artifacts are built, so no host work overlaps a measurement),
        written back to the cache; a warning per level measured under interference or left single-run."""
        todo = sum(lv.latency_confirm_rounds == 0 for lv in self.levels)
        if todo:
            self.emit({"event": "info", "message": f"timing {todo} levels in interleaved rounds"})
        before = list(self.levels)
        deferred = {i for i, lv in enumerate(self.levels)
                    if self.keys.get((lv.recipe, lv.runtime, lv.artifact)) in self.deferred}
        self.levels = confirm_levels(self.ctx, self.levels, deferred=deferred)
        for lvl in self.levels:
            k = self.keys.get((lvl.recipe, lvl.runtime, lvl.artifact))
            if k in self.deferred and lvl.latency_confirm_rounds > 0:
                self.deferred.discard(k)
                self.measured[k] = lvl
                self.emit({"event": "level_timed", "recipe": lvl.recipe, "runtime": lvl.runtime,
                           "latency_ms": lvl.latency_ms})
        gone = [lv for lv in self.levels if self.keys.get((lv.recipe, lv.runtime, lv.artifact)) in self.deferred]
        for lv in gone:  # never timed (its artifact vanished before its rounds): no latency to show or decide on
            self.warn(f"{lv.recipe} on {lv.runtime}: {lv.artifact} is gone before it was timed; level dropped")
        confirmed, self.levels = self.levels, [lv for lv in self.levels if lv not in gone]
        for old, lvl in zip(before, confirmed, strict=True):
            if lvl in gone:
                continue
            k = self.keys.get((lvl.recipe, lvl.runtime, lvl.artifact))
            if lvl is not old and k is not None:
                self.cache.put(k, lvl.model_dump(mode="json") | {"cached": False})
            name = f"{lvl.recipe} on {lvl.runtime}"
            if lvl.interference:
                self.warn(f"{name}: measured while other processes used {lvl.host_cpu_busy_pct:.0f} % of the CPUs "
                          f"(>= {INTERFERENCE_PCT:.0f} %); its latency may be inflated: stop other work and re-run "
                          "with --no-cache (on a shared machine: --threads 1)")
            if lvl.single_run:
                self.warn(f"{name}: latency is one short run (not confirmed in rounds), marked '1' in the table")

    def warn(self, message: str) -> None:
        """Record a warning once and show it in the progress output."""
        if message not in self.warnings:
            self.warnings.append(message)
            self.emit({"event": "warning", "message": message})

    def _warn(self, lvl: Level) -> None:
        for message in lvl.details.get("warnings", []):
            self.warn(f"recipe {lvl.recipe}: {message}")
        if lvl.no_change:
            why = str(lvl.details.get("change", "")).split(": ", 1)[-1] or "the same graph as the model"
            self.warn(f"recipe {lvl.recipe} on {lvl.runtime}: no change (= fp32): {why}; not a compression level, "
                      "never recommended under its name")
