"""``edgeopt.sweep``: compression levels x runtimes on the target, retention measured there, one recommendation.

Flow: eval data -> reference outputs per runtime (the original model, on the device) -> for each recipe one
``optimize`` (shared by the runtimes) -> per runtime: benchmark + device outputs -> retention -> cache entry ->
accuracy-aware INT8 search when INT8 misses the threshold -> Pareto frontier -> recommendation -> sweep.json +
pareto.svg (written atomically). Cached levels (same model, recipe config, target, runtime version, eval data,
metric) are read back, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._version import __version__
from ..calib import ImagePreprocessing
from ..errors import InputError, first_line
from ..evaluation import MetricSpec, load_eval_data, parse_output, resolve_metric
from ..evaluation.degenerate import UNTESTED, cannot_tell
from ..fsutil import atomic_write_text
from ..metrics.result import BenchResult
from ..optimize import OptimizeResult, optimize
from ..passes.base import ArtifactFormat
from ..recipes import load_recipe
from ..registry import get_runtime, loaders
from ..runners import Runner, RunnerKind
from ..runners.select import use_runner
from ..runners.served import agent_session
from ..settings import MeasureSettings, RemoteSpec, build
from ..targets import Target, load_registry
from .cache import LevelCache
from .honest import GraphChange, pipeline_change, steps_of
from .int8_precision import LowBranch, low_branches, low_precision_int8_level
from .int8_search import SearchPlan, search_int8
from .levels import LevelTable, Progress
from .measure import Context
from .pareto import pareto_indices
from .rank_levels import rank
from .report import objective_value, recommend, write_plot
from .result import Int8SearchResult, Level, SweepResult
from .ship import SweepFacts
from .shipped import ship
from .snapshot import snapshot_model

DEFAULT_RECIPES = ("fp16", "int8", "int4", "prune30-int8")
# A recipe built before the sweep (a fleet sweep's host side): its optimize result, or why it does not apply.
Prebuilt = Mapping[str, OptimizeResult | str]
# Every freshly measured level with its benchmark (what the history records).
LevelRuns = list[tuple[Level, BenchResult]]
OBJECTIVES = ("latency", "size", "energy")
# The benchmark warm-up of every level (inferences).
LEVEL_WARMUP = 5


class SweepOptions(BaseModel):
    """What a sweep tries and how it judges (the measurement settings are a :class:`MeasureSettings`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eval_data: Path = Field(description=".npz keyed by input name (+ labels) or a class-per-subfolder image folder.")
    recipes: list[str] | None = Field(default=None, description="Recipe names (None: the defaults valid here).")
    min_retention: float = Field(default=0.99, description="Retention threshold, a ratio (0.99: 99 %).")
    metric: str | MetricSpec | None = Field(
        default=None, description="Metric name or package.module:function, or a MetricSpec with its parameters.")
    output: str | int | None = Field(default=None, description="Output the metric reads: index or name[,slice].")
    objective: str = Field(default="latency", description="What the recommendation minimizes.")
    runtimes: list[str] | None = Field(default=None, description="Runtimes to try (None: all installed ones).")
    calib: Path | None = Field(default=None, description="Calibration data for INT8 recipes (None: the eval data).")
    out_dir: Path | None = Field(default=None, description="Output directory (None: out/<model stem>.sweep).")
    preprocessing: ImagePreprocessing | None = Field(default=None, description="Image preprocessing.")
    eval_limit: int | None = Field(default=None, description="Use at most this many eval samples.")
    no_cache: bool = Field(default=False, description="Ignore cached levels (still rewritten).")
    int8_search: bool = Field(default=True, description="Search INT8 configs when INT8 misses the threshold.")
    max_trials: int = Field(default=12, description="Most INT8 search device trials.")
    max_search_s: float = Field(default=600.0, description="Time bound of the INT8 search, s.")
    nncf_budget_s: float = Field(default=0.0, ge=0, description=(
        "Try NNCF's accuracy-controlled quantization in the INT8 search, on the runtimes that offer it (OpenVINO), "
        "when this much search time is left, s (0: off)."))
    history_db: Path | None = Field(default=None, description="History store recording each measured level.")


def artifact_for(artifacts: Sequence[Any], runtime: str) -> Path:
    """The last artifact ``runtime`` loads (a recipe may deliver ONNX and OpenVINO IR side by side)."""
    for art in reversed(artifacts):
        if runtime in {r.name for r in loaders(art.format)}:
            return Path(art.path)
    raise InputError(f"no artifact of the recipe loads on runtime {runtime}; pick another recipe or runtime")


def level_settings(*, iterations: int = 100, min_duration_s: float = 1.0, threads: int = 0,
                   fps: float | None = None) -> MeasureSettings:
    """The benchmark settings of every level: a short warm-up, raw samples kept, the sweep's budget (never the
    target's default FPS)."""
    return MeasureSettings.from_kwargs(iterations=iterations, min_duration_s=min_duration_s, threads=threads,
                                       warmup=LEVEL_WARMUP, fps=fps, use_target_fps=False, keep_samples=True)


def available_runtimes(runner: Runner, wanted: Sequence[str], probe: Mapping[str, Any] | None = None
                       ) -> dict[str, str]:
    """Runtimes among ``wanted`` that load where the runner runs, with their versions (the agent's probe; ``probe``:
    one already taken)."""
    rts = (probe if probe is not None else runner.probe()).get("runtimes", {})
    return {n: str(rts[n].get("version", "")) for n in wanted if rts.get(n, {}).get("available")}


def sweep(
    model: str | Path, *, eval: str | Path, target: str | None = None,  # noqa: A002 - the documented option name
    recipes: Sequence[str] | None = None, min_retention: float = 0.99, metric: str | MetricSpec | None = None,
    output: str | int | None = None, fps: float | None = None, objective: str = "latency",
    runtimes: Sequence[str] | None = None, calib: str | Path | None = None, out_dir: str | Path | None = None,
    preprocessing: ImagePreprocessing | None = None, eval_limit: int | None = None, host: str | None = None,
    device: str | None = None, key: str | Path | None = None, python: str | None = None,
    inventory: str | Path | None = None, known_hosts: str | Path | None = None, accept_new_host_key: bool = False,
    runner: Runner | None = None, no_cache: bool = False, progress: Progress | None = None, int8_search: bool = True,
    max_trials: int = 12, max_search_s: float = 600.0, iterations: int = 100, min_duration_s: float = 1.0,
    threads: int = 0, targets_dirs: Sequence[Path] = (), history_db: str | Path | None = None,
    nncf_budget_s: float = 0.0,
) -> SweepResult:
    """Sweep compression levels x runtimes of ``model`` on ``target``; recommend the best passing config.

    Args:
        model: an ONNX model (the reference for retention).
        eval: evaluation data: ``.npz`` keyed by input name (+ optional ``labels``) or a class-per-subfolder
            image folder.
        target: target name (default: the device's, else ``local``).
        recipes: recipe names (default: fp16, int8, int4, prune30-int8, those valid for the target).
        min_retention: the accuracy-retention threshold (retention = metric(optimized) / metric(reference)).
        metric: top1, top5, agreement, cosine, snr_db, max_abs_err or ``package.module:function`` (default:
            top1 with labels, else agreement).
        output: output the metric reads: index or name, optionally with ``,slice=[...,4:]``.
        fps: real-time budget (p99 latency <= 1000/fps); None: no latency budget.
        objective: what the recommendation minimizes: latency, size or energy.
        runtimes: runtimes to try (default: each the target supports that is installed where it runs).
        calib: calibration data for INT8 recipes (default: the eval data).
        out_dir: output directory (default ``out/<model stem>.sweep``); holds artifacts, cache, json, plot.
        preprocessing: image preprocessing (image folders). eval_limit: use at most this many eval samples.
        host, device, key, python, inventory, known_hosts, accept_new_host_key: run on an SSH device
            (docs/devices.md). runner: an explicit runner (tests).
        no_cache: ignore cached levels (fresh runs; the cache is rewritten).
        progress: receives ``{"event": ...}`` dicts (``level`` after each config).
        int8_search: run the accuracy-aware INT8 search when INT8 misses ``min_retention``.
        max_trials: most INT8 search trials. max_search_s: time bound of the search.
        nncf_budget_s: with a runtime offering the NNCF INT8 backend among the runtimes (OpenVINO), also try
            NNCF's accuracy-controlled quantization in the INT8 search when this much search time is left (0: off;
            it can take minutes).
        iterations, min_duration_s, threads: benchmark settings per level.
        targets_dirs: extra target directories.
        history_db: record every measured level in this history store (kind ``sweep``); None: not recorded.

    Returns:
        The result, also written to ``<out_dir>/sweep.json``.

    Raises:
        InputError: bad model, eval data, metric, recipe or option (exit 2). RunnerError: device failure (exit 3).
    """
    options = build(SweepOptions, {
        "eval_data": eval, "recipes": recipes, "min_retention": min_retention, "metric": metric, "output": output,
        "objective": objective, "runtimes": runtimes, "calib": calib, "out_dir": out_dir,
        "preprocessing": preprocessing, "eval_limit": eval_limit, "no_cache": no_cache, "int8_search": int8_search,
        "max_trials": max_trials, "max_search_s": max_search_s, "history_db": history_db,
        "nncf_budget_s": nncf_budget_s})
    measure = level_settings(iterations=iterations, min_duration_s=min_duration_s, threads=threads, fps=fps)
    remote = build(RemoteSpec, {"host": host, "device": device, "key": key, "python": python, "inventory": inventory,
                                "known_hosts": known_hosts, "accept_new_host_key": accept_new_host_key})
    return run_sweep(model, options, measure, target=target, runner=runner, remote=remote, progress=progress,
                     targets_dirs=targets_dirs)


def run_sweep(
    model: str | Path,
    options: SweepOptions,
    measure: MeasureSettings,
    *,
    target: str | None = None,
    runner: Runner | None = None,
    remote: RemoteSpec | None = None,
    progress: Progress | None = None,
    targets_dirs: Sequence[Path] = (),
) -> SweepResult:
    """:func:`sweep` with typed settings; ``measure`` is every level's benchmark (its ``fps`` the budget).

    Raises:
        InputError: bad model, eval data, metric, recipe or option (exit 2). RunnerError: device failure (exit 3).
    """
    model_path = Path(model)
    check_inputs(model_path, options)
    with use_runner(runner, remote, target) as placed:
        tgt = load_registry(extra_dirs=targets_dirs).get(placed.target or "local")
        result, runs = measure_sweep(model_path, options, measure, tgt, placed.runner, progress=progress,
                                     targets_dirs=tuple(targets_dirs), device=device_name(remote, placed.runner))
    atomic_write_text(Path(result.out_dir) / "sweep.json", result.model_dump_json(indent=2) + "\n")
    if options.history_db is not None:
        record_levels(options.history_db, runs, result)
    return result


def measure_sweep(model: Path, options: SweepOptions, measure: MeasureSettings, tgt: Target, runner: Runner, *,
                  progress: Progress | None = None, targets_dirs: tuple[Path, ...] = (),
                  prebuilt: Prebuilt | None = None, gains_dir: Path | None = None,
                  device: str | None = None) -> tuple[SweepResult, LevelRuns]:
    """The sweep's work on ``runner`` once its inputs are checked: every level, the INT8 search, the ranking;
    also every freshly measured level's benchmark. Writes the artifacts, cache and plot, not ``sweep.json``.

    Args:
        prebuilt: recipes already optimized (a fleet sweep builds them once on the host, ``edgeopt.sweep.fleet``);
            a recipe not in it is optimized here on first use.
        gains_dir: the INT8 search's sensitivity/gains cache (None: its own, under the output directory).
        device: the inventory device it runs on (None: local, or an address without an inventory name), recorded
            in the recommendation's deployment (``measured.device``).
    """
    started = time.perf_counter()
    with agent_session(runner) as served:  # evaluations and repeated rounds: one agent process (runners.served)
        run = _SweepRun.start(model, options, measure, tgt, runner, progress, targets_dirs)
        run.ctx.served = served
        run.measure_recipes(prebuilt or {})
        search = run.int8_search(gains_dir)
        run.table.confirm()  # every kept latency re-measured in interleaved rounds, or marked single-run (.confirm)
        result = run.result(search, started)  # the ranking rounds run on the runner
    # <out>/recommended, checked as shipped in a fresh agent (ctx.runner), with only what the deployment carries
    result = ship(result, run.ctx, run.model, run.facts(result, device))
    return result, list(run.ctx.bench_results)


def device_name(remote: RemoteSpec | None, runner: Runner) -> str | None:
    """The inventory name of the device a sweep runs on, else its address (``user@host:port``); None: local."""
    if remote is not None and remote.device:
        return remote.device
    info = runner.describe()
    return info.address if info.kind == RunnerKind.REMOTE else None


def sweep_threads(runner: Runner, threads: int, probe: Mapping[str, Any] | None = None) -> int:
    """The thread count of every runtime in the sweep: ``threads``, or (0) the logical cores where the agent runs
    (its probe's ``environment.cores``; ``probe``: one already taken), so every runtime gets the same explicit count
    instead of its own default."""
    if threads > 0:
        return threads
    cores = ((probe if probe is not None else runner.probe()).get("environment") or {}).get("cores")
    return int(cores) if isinstance(cores, int) and cores > 0 else 1


def float_options(rts: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Runtime options that make "fp32" FP32, per runtime: each descriptor's ``reference_options`` (OpenVINO runs
    float parts in BF16 by default on CPUs with AVX512_BF16/AMX, so its reference and its fp32 level ask for
    ``inference_precision: f32``)."""
    return {rt: dict(get_runtime(rt).reference_options) for rt in rts if get_runtime(rt).reference_options}


def low_precision_level(table: LevelTable, model: Path, runtime: str, cpu_flags: Sequence[str] | None) -> None:
    """The model at ``runtime``'s default precision when its descriptor declares a lower one that this CPU may run
    (``low_precision_default``: OpenVINO's BF16), kept as that level (``bf16``) when the runtime reports it ran in
    it; its retention is against the full-precision reference."""
    low = get_runtime(runtime).low_precision_default
    if low is None or not low.expected(cpu_flags):
        return
    lvl = table("fp32-default-precision", low.level, runtime, lambda: model, keep=False, options={low.option: None})
    if low.ran_low(lvl.details):
        table.levels.append(lvl)


def check_inputs(model_path: Path, options: SweepOptions) -> None:
    """Host-side checks before anything runs.

    Raises:
        InputError: not an ONNX file, an unknown objective, a retention threshold out of range.
    """
    if not model_path.is_file() or model_path.suffix != ".onnx":
        raise InputError(f"model {model_path}: not an .onnx file; sweep takes an ONNX model")
    if options.objective not in OBJECTIVES:
        raise InputError(f"--objective {options.objective!r}: use one of {', '.join(OBJECTIVES)}")
    if not 0 < options.min_retention <= 1.5:
        raise InputError(f"--min-retention {options.min_retention}: use a ratio such as 0.99")


def _runtimes(tgt: Target, runner: Runner, runtimes: Sequence[str] | None,
              probe: Mapping[str, Any] | None = None) -> tuple[list[str], dict[str, str], list[str]]:
    """(runtimes to sweep, their versions where the runner runs, warnings for the ones missing there).

    Raises:
        InputError: a runtime the target cannot run ONNX on, or none of them installed.
    """
    onnx_ok = {r.name for r in loaders(ArtifactFormat.ONNX)}
    supported = [r.value for r in tgt.runtimes if r.value in onnx_ok]
    wanted = list(runtimes) if runtimes else supported
    bad = [r for r in wanted if r not in supported]
    if bad:
        raise InputError(f"--runtimes {', '.join(bad)}: target '{tgt.name}' runs ONNX on {', '.join(supported)} only")
    versions = available_runtimes(runner, wanted, probe)
    if not versions:
        raise InputError(f"none of the runtimes {', '.join(wanted)} is installed where the sweep runs; install one")
    warnings = [f"runtime {r} is not installed where the sweep runs; skipped" for r in wanted if r not in versions]
    return [r for r in wanted if r in versions], versions, warnings


class _Optimized:
    """One ``optimize`` per recipe, shared by the runtimes: run on first use; whether it changed the graph."""

    def __init__(self, model: Path, recipe: str, tgt: Target, calib: Path, out: Path,
                 preprocessing: ImagePreprocessing | None, targets_dirs: tuple[Path, ...],
                 prebuilt: OptimizeResult | str | None = None) -> None:
        self._args = (model, recipe, tgt, calib, out, preprocessing, targets_dirs)
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
            self._result = optimize(model, target=tgt.name, recipe=recipe, calib=calib, out_dir=out, fidelity=False,
                                    bench=False, preprocessing=preprocessing, targets_dirs=targets_dirs)
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
              progress: Progress | None, targets_dirs: tuple[Path, ...]) -> _SweepRun:
        """Copy the model, load the eval data and metric, find the runtimes, and measure the original model (the
        baseline)."""
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
        probe = runner.probe()  # one probe: runtimes, cores and CPU flags
        rts, versions, warnings = _runtimes(tgt, runner, options.runtimes, probe)
        shapes = {k: [1, *v.shape[1:]] for k, v in data.inputs.items()}  # dynamic dims: the eval's
        ctx = Context(target=tgt.name, runner=runner, eval_npz=eval_npz, labels=data.labels, metric=met,
                      selection=selection, min_retention=options.min_retention,
                      measure=measure.replace(shapes=shapes, threads=sweep_threads(runner, measure.threads, probe)),
                      targets_dirs=targets_dirs, versions=versions, runtime_options=float_options(rts))
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
                              opts.preprocessing, self.targets_dirs, prebuilt.get(name))
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
        self.emit({"event": "info", "message": f"int8 retention {int8_fails[0].retention:.4f} < {opts.min_retention}: "
                                               "searching for an accuracy-aware INT8 config"})
        plan = SearchPlan(runtime=int8_fails[0].runtime, rts=tuple(self.rts), out=self.out / "int8-search",
                          calib=opts.calib or self.eval_npz, max_trials=opts.max_trials,
                          max_seconds=opts.max_search_s, targets_dirs=self.targets_dirs,
                          nncf_budget_s=opts.nncf_budget_s, gains_dir=gains_dir,
                          low_precision=self.low_precision_branches())
        return search_int8(self.model, ctx=self.ctx, plan=plan, run_level=self.table, emit=self.emit)

    def low_precision_branches(self) -> dict[str, LowBranch]:
        """The INT8 search's low-precision branches (:mod:`.int8_precision`: bf16 float parts on OpenVINO where this
        CPU runs BF16); why a runtime with a low-precision default gets none, as info events."""
        branches, notes = low_branches(self.rts, self.cpu_flags, self.table.levels)
        for note in notes:
            self.emit({"event": "info", "message": note})
        return dict(branches)

    def result(self, search: Int8SearchResult | None, started: float) -> SweepResult:
        """The table, the latency ranking of the candidates (:mod:`.rank_levels`), the Pareto frontier, the
        recommendation and the plot (written here); ``started``: the sweep's ``perf_counter`` start."""
        levels, opts, fps = self.table.levels, self.options, self.ctx.measure.fps
        untested = self.data_cannot_tell()
        if untested:
            self.table.warn(untested)
        rec, reason = recommend(levels, opts.objective, opts.min_retention, fps)
        ranking = None
        if rec is not None and opts.objective == "latency":
            levels, ranked, ranking = rank(self.ctx, levels)
            rec = ranked or rec
        if rec is not None and untested:  # the recommendation says its retention was never put to the test
            rec = rec.model_copy(update={"reason": "; ".join(filter(None, [f"retention {UNTESTED}", rec.reason]))})
        points = [(objective_value(lv, opts.objective), lv.retention) for lv in levels]
        front = [levels[i] for i in pareto_indices(points)]
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


def record_levels(history_db: str | Path, runs: LevelRuns, result: SweepResult, *, device: str | None = None,
                  group_id: str | None = None) -> list[int]:
    """History hook: every freshly measured level as a ``sweep`` run, grouped by this sweep (or ``group_id``: a
    fleet sweep's id); the run ids."""
    from ..history import open_store

    store = open_store(history_db)
    group = group_id or f"sweep-{int(time.time())}-{result.model_sha256[:8]}"
    return [store.record(bench, kind="sweep", device=device, verdict="pass" if lvl.passed else "fail",
                         group_id=group,
                         label=f"{lvl.recipe}/{lvl.runtime} retention={lvl.retention:.4f} (edgeopt {__version__})").id
            for lvl, bench in runs]
