"""The sweep's run on one runner once its inputs are checked: the reference and the recipes' levels, the INT8
search, the confirmation and ranking rounds, the recommendation shipped and checked (``<out>/recommended``).

Flow: eval data -> reference outputs per runtime (the original model, on the device) -> for each recipe one
``optimize`` (shared by the runtimes) -> per runtime: benchmark + device outputs -> retention -> cache entry ->
accuracy-aware INT8 search when INT8 misses the threshold -> confirmation rounds -> Pareto frontier -> ranking
rounds -> recommendation -> shipped check. Evaluations and repeated rounds go to one served agent where the runner
can serve (:mod:`edgeopt.runners.served`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..calib import ImagePreprocessing
from ..errors import InputError, first_line
from ..evaluation import load_eval_data, parse_output, resolve_metric
from ..evaluation.degenerate import UNTESTED, cannot_tell
from ..metrics.result import BenchResult
from ..optimize import OptimizeResult, optimize_graph
from ..recipes import load_recipe
from ..runners import Runner
from ..runners.served import agent_session
from ..settings import MeasureSettings
from ..targets import Target, load_registry
from ..untrusted import for_json
from .cache import LevelCache
from .flow import Placement, device_name, measure_on
from .honest import GraphChange, pipeline_change, steps_of
from .int8.core import SearchPlan
from .int8.cost_gate import headrooms, search_runtime
from .int8.latency import hopeless_runtimes, int8_runtimes
from .int8.precision import LowBranch, low_branches, low_precision_int8_level
from .int8.search import search_int8
from .levels import LevelTable, Progress
from .measure import Context
from .memory_probe import needs_probe, probe_memory
from .options import DEFAULT_RECIPES, SweepOptions, check_inputs
from .rank.ceiling import ceiling_line
from .rank.frontier import off_frontier
from .rank.negligible import mark_negligible, negligible_note
from .rank.pareto import pareto_indices
from .rank.recommend import rank
from .report import objective_value, recommend, write_plot
from .result import Int8SearchResult, Level, Recommendation, SweepResult
from .runtimes import (
    artifact_for,
    float_options,
    low_precision_level,
    recipe_for,
    sweep_runtimes,
    sweep_threads,
    wanted_runtimes,
)
from .ship.check import ship
from .ship.deployment import SweepFacts
from .snapshot import snapshot_model

if TYPE_CHECKING:
    from ..history.sweep_runs import SweptLevel

__all__ = ["LevelRuns", "OnePassSweep", "Prebuilt", "device_name", "measure_sweep", "swept_levels"]

# A recipe built before the sweep (a fleet sweep's host side): its optimize result, or why it does not apply.
Prebuilt = Mapping[str, OptimizeResult | str]
# Every freshly measured level with its benchmark (what the history records).
LevelRuns = list[tuple[Level, BenchResult]]


@dataclass(frozen=True)
class _Measured:
    """The one-pass sweep between its steps: the run (levels, context), the INT8 search, the start time."""

    run: _SweepRun
    search: Int8SearchResult | None
    started: float


@dataclass(frozen=True)
class OnePassSweep:
    """The one-pass (tensor) kind's :class:`~.flow.SweepPlan`: the reference and the recipes' levels, the INT8
    search and the confirmation rounds measured in one served agent, the ranking rounds, the recommendation, the
    plot, ``recommended/`` and its shipped check.

    Attributes:
        prebuilt: recipes already optimized (a fleet sweep builds them once on the host, ``edgeopt.sweep.fleet``);
            a recipe not in it is optimized here on first use.
        gains_dir: the INT8 search's sensitivity/gains cache (None: its own, under the output directory).
        tgt: the target (None: the placed one, from the registry with ``targets_dirs``).
    """

    model: Path
    options: SweepOptions
    settings: MeasureSettings
    progress: Progress | None = None
    targets_dirs: tuple[Path, ...] = ()
    tgt: Target | None = None
    prebuilt: Prebuilt | None = None
    gains_dir: Path | None = None

    @property
    def history_db(self) -> str | Path | None:
        return self.options.history_db

    def prepare(self) -> None:
        check_inputs(self.model, self.options)

    def session(self, runner: Runner) -> AbstractContextManager[Runner]:
        """Evaluations and repeated rounds: one agent process (runners.served; locally and over SSH)."""
        return agent_session(runner, self.progress)

    def measure(self, placed: Placement) -> _Measured:
        started = time.perf_counter()
        tgt = self.tgt or load_registry(extra_dirs=self.targets_dirs).get(placed.target or "local")
        run = _SweepRun.start(self.model, self.options, self.settings, tgt, placed.runner, self.progress,
                              self.targets_dirs, placed.served if placed.served is not placed.runner else None)
        run.measure_recipes(self.prebuilt or {})
        search = run.int8_search(self.gains_dir)
        run.table.confirm()  # every kept latency re-measured in interleaved rounds, or marked single-run (.confirm)
        return _Measured(run, search, started)

    def recommend(self, measured: _Measured) -> SweepResult:
        return measured.run.result(measured.search, measured.started)  # the ranking rounds run on the runner

    def ship(self, measured: _Measured, result: SweepResult, placed: Placement) -> SweepResult:
        # <out>/recommended, checked as shipped in a fresh agent (ctx.runner), with only what the deployment carries
        run = measured.run
        return ship(result, run.ctx, run.model, run.facts(result, placed.device))

    def history(self, measured: _Measured, device: str | None) -> tuple[list[SweptLevel], str | None]:
        return swept_levels(list(measured.run.ctx.bench_results)), None  # labelled by each result's runner

    def dump(self, result: SweepResult) -> str:
        return for_json(result.model_dump_json(indent=2)) + "\n"


def swept_levels(runs: LevelRuns) -> list[SweptLevel]:
    """The fresh levels as the history keeps them (``recipe/runtime``, retention, verdict, bench)."""
    from ..history.sweep_runs import SweptLevel

    return [SweptLevel(f"{lvl.recipe}/{lvl.runtime}", lvl.retention, lvl.passed, bench) for lvl, bench in runs]


def measure_sweep(model: Path, options: SweepOptions, measure: MeasureSettings, tgt: Target, runner: Runner, *,
                  progress: Progress | None = None, targets_dirs: tuple[Path, ...] = (),
                  prebuilt: Prebuilt | None = None, gains_dir: Path | None = None,
                  device: str | None = None) -> tuple[SweepResult, LevelRuns]:
    """The sweep's work on ``runner`` once its inputs are checked (:func:`.flow.measure_on` of
    :class:`OnePassSweep`): every level, the INT8 search, the ranking, ``recommended/``; also every freshly
    measured level's benchmark. Writes the artifacts, cache and plot, not ``sweep.json``.

    Args: as :class:`OnePassSweep`'s; ``device``: the inventory device it runs on (None: local, or an address
        without an inventory name), recorded in the recommendation's deployment (``measured.device``).
    """
    plan = OnePassSweep(model, options, measure, progress, targets_dirs, tgt, prebuilt, gains_dir)
    swept = measure_on(plan, runner, tgt.name, device)
    return swept.result, list(swept.measured.run.ctx.bench_results)


class _Optimized:
    """One ``optimize`` per recipe, shared by the runtimes: run on first use; whether it changed the graph."""

    def __init__(self, model: Path, recipe: str, tgt: Target, calib: Path, out: Path,
                 preprocessing: ImagePreprocessing | None, targets_dirs: tuple[Path, ...], rts: Sequence[str],
                 prebuilt: OptimizeResult | str | None = None) -> None:
        self._args = (model, recipe, tgt, calib, out, preprocessing, targets_dirs)
        self._rts = tuple(rts)  # the runtimes that load its artifacts: the formats it delivers (recipe_for)
        self._result: OptimizeResult | None = prebuilt if isinstance(prebuilt, OptimizeResult) else None
        self._refused = prebuilt if isinstance(prebuilt, str) else None

    def artifact(self, runtime: str) -> Path:
        """The recipe's artifact ``runtime`` loads (optimizing first when not done yet).

        Raises:
            InputError: the recipe does not apply (also when its prebuilt build said so).
        """
        if self._refused is not None:
            raise InputError(self._refused)
        if self._result is None:
            model, recipe, tgt, calib, out, preprocessing, targets_dirs = self._args
            self._result = optimize_graph(model, target=tgt.name, recipe=recipe_for(recipe, self._rts), calib=calib,
                                          out_dir=out, fidelity=False, bench=False, preprocessing=preprocessing,
                                          targets_dirs=targets_dirs)
        return artifact_for(self._result.artifacts, runtime)

    def facts(self, runtime: str) -> dict[str, Any]:
        """The level's details once optimized: the passes' warnings, and whether the artifact ``runtime`` loads
        computes the model's graph again (``no_change``: :func:`.honest.pipeline_change`)."""
        res = self._result
        if res is None:
            return {}
        path = artifact_for(res.artifacts, runtime)
        upto = [a for a in res.artifacts]
        upto = upto[:max(i for i, a in enumerate(upto) if Path(a.path) == path) + 1]
        try:
            change = pipeline_change(steps_of(upto, self._args[0]))
        except InputError as exc:  # an intermediate file is gone: count it as a change
            change = GraphChange(changed=True, summary=f"not compared: {first_line(exc)}")
        out: dict[str, Any] = {"change": change.summary, "warnings": list(res.warnings)}
        if not change.changed:
            out["no_change"] = True
        return out


@dataclass
class _SweepRun:
    """One sweep after its inputs are checked: the eval data, the runtimes, the level table."""

    model: Path  # the sweep's own copy of the model (:mod:`.snapshot`): every step reads this one
    source: Path  # the user's model path (reported)
    options: SweepOptions
    tgt: Target
    out: Path
    eval_npz: Path
    eval_samples: int
    rts: list[str]
    ctx: Context
    table: LevelTable
    emit: Progress
    targets_dirs: tuple[Path, ...]
    environment: dict[str, Any] = field(default_factory=dict)  # the agent's probe: cpu, cpu_flags
    cpu_flags: tuple[str, ...] | None = None  # the probe's (None: unknown): which low-precision branches apply

    @classmethod
    def start(cls, source: Path, options: SweepOptions, measure: MeasureSettings, tgt: Target, runner: Runner,
              progress: Progress | None, targets_dirs: tuple[Path, ...], served: Runner | None = None) -> _SweepRun:
        """Copy the model, load the eval data and metric, find the runtimes, and measure the original model (the
        baseline); ``served``: the sweep's served agent (:attr:`.measure.Context.served`), if any."""
        emit: Progress = progress or (lambda event: None)
        out = options.out_dir or Path("out") / f"{source.stem}.sweep"
        out.mkdir(parents=True, exist_ok=True)
        model, model_sha = snapshot_model(source, out / "cache")
        data = load_eval_data(options.eval_data, model, preprocessing=options.preprocessing, limit=options.eval_limit)
        eval_npz = data.save(out / "eval_inputs.npz")
        met = resolve_metric(options.metric, has_labels=data.labels is not None)  # name + parameters, checked once
        if met.needs_labels and data.labels is None:
            raise InputError(f"metric {met.name} needs labels: add 'labels' to {options.eval_data}, "
                             "or use --metric agreement")
        selection = parse_output(options.output)
        probe = runner.probe(wanted_runtimes(tgt, options.runtimes))  # one probe: runtimes, cores and CPU flags
        rts, versions, warnings = sweep_runtimes(tgt, runner, options.runtimes, probe)
        shapes = {k: [1, *v.shape[1:]] for k, v in data.inputs.items()}  # dynamic dims: the eval's
        ctx = Context(target=tgt.name, runner=runner, eval_npz=eval_npz, labels=data.labels, metric=met,
                      selection=selection, min_retention=options.min_retention,
                      measure=measure.replace(shapes=shapes, threads=sweep_threads(runner, measure.threads, probe)),
                      targets_dirs=targets_dirs, versions=versions, runtime_options=float_options(rts), served=served)
        key_parts = {"model": model_sha, "target": tgt.name, "runner": runner.name, "eval": data.digest(),
                     "metric": met.key(), "output": selection.spec, "fps": measure.fps,
                     "threads": ctx.measure.threads}
        table = LevelTable(ctx, LevelCache(out / "cache", enabled=not options.no_cache), key_parts, model, emit)
        for w in warnings:
            table.warn(w)
        for rt in rts:  # the original model: retention 1 by definition, its latency is the baseline
            table("fp32", "fp32", rt, lambda: model)
        cpu_flags = (probe.get("environment") or {}).get("cpu_flags")
        for rt in rts:  # a runtime's default lower precision (OpenVINO's BF16) as a level of its own
            low_precision_level(table, model, rt, cpu_flags)
        return cls(model, source, options, tgt, out, eval_npz, data.count, rts, ctx, table, emit, targets_dirs,
                   environment=dict(probe.get("environment") or {}),
                   cpu_flags=tuple(cpu_flags) if cpu_flags is not None else None)

    def facts(self, result: SweepResult, device: str | None = None) -> SweepFacts:
        """What every level of this sweep shares, for its deployment record (``device``: where it ran)."""
        m = self.ctx.measure
        return SweepFacts(target=self.tgt.name, metric=result.metric, min_retention=self.options.min_retention,
                          eval_samples=self.eval_samples, threads=m.threads, streams=m.streams, batch=m.batch,
                          shapes=dict(m.shapes or {}), environment=self.environment,
                          model_sha256=result.model_sha256, device=device)

    def measure_recipes(self, prebuilt: Prebuilt) -> None:
        """Each recipe once (shared by the runtimes, or ``prebuilt``), measured on every runtime; a default recipe
        that does not apply is skipped with a warning, one the user named is an error."""
        opts = self.options
        for name in opts.recipes or list(DEFAULT_RECIPES):
            cfg = load_recipe(name).recipe.model_dump(mode="json")
            made = _Optimized(self.model, name, self.tgt, opts.calib or self.eval_npz, self.out / "artifacts" / name,
                              opts.preprocessing, self.targets_dirs, self.rts, prebuilt.get(name))
            try:
                for rt in self.rts:
                    make, facts = functools.partial(made.artifact, rt), functools.partial(made.facts, rt)
                    self.table(cfg, name, rt, make, facts)
                    low_precision_int8_level(self.table, cfg, name, rt, make, facts, self.cpu_flags)  # int8+bf16
            except InputError as exc:
                if opts.recipes:
                    raise
                self.table.warn(f"recipe {name} skipped: {exc}")

    def int8_search(self, gains_dir: Path | None = None) -> Int8SearchResult | None:
        """The accuracy-aware INT8 search, when enabled and INT8 missed the threshold."""
        opts = self.options
        int8_fails = [lv for lv in self.table.levels if lv.recipe == "int8" and not lv.meets_retention]
        if not (opts.int8_search and int8_fails):
            return None
        self.table.confirm()  # the levels so far confirmed in rounds: what decides which runtimes are worth a search
        skip = hopeless_runtimes(self.table.levels, int8_runtimes(self.rts))
        hopeful = [lv.runtime for lv in int8_fails if lv.runtime not in skip]
        for reason in skip.values():  # in sweep.json: int8_search.skipped_runtimes, or a warning when none is left
            if hopeful:
                self.emit({"event": "info", "message": reason})
            else:
                self.table.warn(reason)
        if not hopeful:
            return None
        self.emit({"event": "info", "message": f"int8 retention {int8_fails[0].retention:.4f} < {opts.min_retention}: "
                                               "searching for an accuracy-aware INT8 config"})
        heads = headrooms(self.table.levels, int8_runtimes(self.rts))
        plan = SearchPlan(runtime=search_runtime(hopeful, heads), rts=tuple(self.rts), out=self.out / "int8-search",
                          skip=skip,
                          calib=opts.calib or self.eval_npz, max_trials=opts.max_trials,
                          max_seconds=opts.max_search_s, targets_dirs=self.targets_dirs,
                          nncf_budget_s=opts.nncf_budget_s, gains_dir=gains_dir,
                          low_precision=self.low_precision_branches(), headroom=heads)
        return search_int8(self.model, ctx=self.ctx, plan=plan, run_level=self.table, emit=self.emit)

    def low_precision_branches(self) -> dict[str, LowBranch]:
        """The INT8 search's low-precision branches (:mod:`.int8.precision`: bf16 float parts on OpenVINO where this
        CPU runs BF16); why a runtime with a low-precision default gets none, as info events."""
        branches, notes = low_branches(self.rts, self.cpu_flags, self.table.levels)
        for note in notes:
            self.emit({"event": "info", "message": note})
        return dict(branches)

    def result(self, search: Int8SearchResult | None, started: float) -> SweepResult:
        """The table, the latency ranking of the candidates (:mod:`.rank.recommend`), the Pareto frontier, the
        recommendation and the plot (written here); ``started``: the sweep's ``perf_counter`` start."""
        levels, opts, fps = self.table.levels, self.options, self.ctx.measure.fps
        untested = self.data_cannot_tell()
        if untested:
            self.table.warn(untested)
        levels = mark_negligible(levels, self.ctx.measure.shapes)
        for lv in (lv for lv in levels if lv.negligible_change):
            self.table.warn(negligible_note(lv))
        rec, reason = recommend(levels, opts.objective, opts.min_retention, fps)
        ranking = None
        if rec is not None and opts.objective == "latency":
            levels, ranked, ranking = rank(self.ctx, levels)
            rec = ranked or rec
        if rec is not None and untested:  # the recommendation says its retention was never put to the test
            rec = rec.model_copy(update={"reason": "; ".join(filter(None, [f"retention {UNTESTED}", rec.reason]))})
        points = [(objective_value(lv, opts.objective), lv.retention) for lv in levels]
        frontier = pareto_indices(points)
        levels = self.memory(levels, frontier, rec)
        front = [levels[i] for i in frontier]
        note = off_frontier(levels, frontier, rec, opts.objective, ranking)
        rec = rec.model_copy(update={"off_frontier": note}) if rec is not None and note else rec
        line = ceiling_line(levels, rec, search, opts.min_retention)
        rec = rec.model_copy(update={"ceiling": line}) if rec is not None and line else rec
        plot = write_plot(levels, opts.objective, self.out / "pareto.svg", min_retention=opts.min_retention, fps=fps,
                          recommendation=rec)
        return SweepResult(
            model=str(self.source), model_sha256=self.table.key_parts["model"], target=self.tgt.name,
            runner=self.ctx.runner.name, metric=self.ctx.metric.name, output=self.ctx.selection.spec,
            eval_samples=self.eval_samples, min_retention=opts.min_retention, fps=fps, objective=opts.objective,
            runtimes=self.rts, levels=levels, pareto=front, recommendation=rec, reason=reason, int8_search=search,
            plot=str(plot), out_dir=str(self.out), seconds=round(time.perf_counter() - started, 3),
            warnings=list(self.table.warnings),
            metric_params=self.ctx.metric.spec.given(), threads=self.ctx.measure.threads,
            streams=self.ctx.measure.streams, batch=self.ctx.measure.batch, ranking=ranking,
            eval_cannot_tell=untested,
        )

    def memory(self, levels: list[Level], frontier: Sequence[int], rec: Recommendation | None) -> list[Level]:
        """Memory and cold start of the recommended level and the passing frontier levels from short fresh agents
        (:mod:`.memory_probe`), where the first passes ran in the served agent."""
        todo = needs_probe(levels, set(frontier), rec)
        if not todo:
            return levels
        self.emit({"event": "info", "message": f"memory and cold start of {len(todo)} levels, each in a fresh agent"})
        return probe_memory(self.ctx, levels, todo, self.table.warn)

    def data_cannot_tell(self) -> str | None:
        """Why the eval data cannot tell levels apart (the reference decides alike on every sample), or None.

        Reads the reference outputs the levels were scored against (measured once more when every level came
        from the cache)."""
        if not self.ctx.refs and self.rts:
            self.ctx.reference(self.model, self.rts[0])
        for outs, names in self.ctx.refs.values():
            why = cannot_tell(self.ctx.metric, self.ctx.selection.pick(outs, names))
            if why:
                return why
        return None
