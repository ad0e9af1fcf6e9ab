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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..calib import ImagePreprocessing
from ..errors import InputError
from ..evaluation import MetricSpec, load_eval_data, parse_output, resolve_metric
from ..fsutil import atomic_write_text, sha256_file
from ..optimize import optimize
from ..passes.base import FORMAT_RUNTIMES, ArtifactFormat
from ..recipes import load_recipe
from ..runners import LocalRunner
from ..runners.select import choose_runner
from ..targets import load_registry
from .cache import LevelCache, cache_key
from .int8_search import search_int8
from .measure import Context
from .pareto import pareto_indices
from .report import objective_value, recommend, write_plot
from .result import Level, SweepResult

DEFAULT_RECIPES = ("fp16", "int8", "int4", "prune30-int8")
OBJECTIVES = ("latency", "size", "energy")
Progress = Callable[[dict[str, Any]], None]


def artifact_for(artifacts: Sequence[Any], runtime: str) -> Path:
    """The last artifact ``runtime`` loads (a recipe may deliver ONNX and OpenVINO IR side by side)."""
    for art in reversed(artifacts):
        if runtime in {r.value for r in FORMAT_RUNTIMES.get(art.format, frozenset())}:
            return Path(art.path)
    raise InputError(f"no artifact of the recipe loads on runtime {runtime}; pick another recipe or runtime")


def available_runtimes(runner: Any, wanted: Sequence[str]) -> dict[str, str]:
    """Runtimes among ``wanted`` that load where the runner runs, with their versions."""
    if isinstance(runner, LocalRunner):
        from edgeopt_agent import runtimes as agent_runtimes

        found: dict[str, str] = {}
        for name in wanted:
            try:
                found[name] = agent_runtimes.create(name).version()
            except (agent_runtimes.RuntimeMissing, ImportError, KeyError):
                continue
        return found
    facts = runner.probe() if hasattr(runner, "probe") else {"runtimes": {}}
    rts = facts.get("runtimes", {})
    return {n: str(rts[n].get("version", "")) for n in wanted if rts.get(n, {}).get("available")}


def sweep(
    model: str | Path,
    *,
    eval: str | Path,  # noqa: A002 - the documented option name
    target: str | None = None,
    recipes: Sequence[str] | None = None,
    min_retention: float = 0.99,
    metric: str | MetricSpec | None = None,
    output: str | int | None = None,
    fps: float | None = None,
    objective: str = "latency",
    runtimes: Sequence[str] | None = None,
    calib: str | Path | None = None,
    out_dir: str | Path | None = None,
    preprocessing: ImagePreprocessing | None = None,
    eval_limit: int | None = None,
    host: str | None = None,
    device: str | None = None,
    key: str | Path | None = None,
    python: str | None = None,
    inventory: str | Path | None = None,
    known_hosts: str | Path | None = None,
    accept_new_host_key: bool = False,
    runner: Any = None,
    no_cache: bool = False,
    progress: Progress | None = None,
    int8_search: bool = True,
    max_trials: int = 12,
    max_search_s: float = 600.0,
    iterations: int = 100,
    min_duration_s: float = 1.0,
    threads: int = 0,
    targets_dirs: Sequence[Path] = (),
    history_db: str | Path | None = None,
) -> SweepResult:
    """Sweep compression levels x runtimes of ``model`` on ``target``; recommend the best passing config.

    Args:
        model: an ONNX model (the reference for retention).
        eval: evaluation data: ``.npz`` keyed by input name (+ optional ``labels``) or a class-per-subfolder
            image folder.
        target: target name (default: the device's, else ``local``).
        recipes: recipe names (default: fp16, int8, int4, prune30-int8, those valid for the target).
        min_retention: the accuracy-retention threshold (retention = metric(optimized) / metric(reference)).
        metric: top1, top5, agreement, cosine, snr_db, max_abs_err, mask_iou, detection or
            ``package.module:function`` (default: top1 with labels, else agreement), or a :class:`MetricSpec` with
            its parameters (``MetricSpec(name="agreement", axis=1, score_threshold=0.25)``; docs/sweep.md).
        output: output the metric reads: index or name, optionally with ``,slice=[:,4:,:]`` (docs/sweep.md lists
            the common layouts).
        fps: real-time budget (p99 latency <= 1000/fps); None: no latency budget.
        objective: what the recommendation minimizes: latency, size or energy.
        runtimes: runtimes to try (default: each the target supports that is installed where it runs).
        calib: calibration data for INT8 recipes (default: the eval data).
        out_dir: output directory (default ``out/<model stem>.sweep``); holds artifacts, cache, json, plot.
        preprocessing: image preprocessing (image folders).
        eval_limit: use at most this many eval samples.
        host, device, key, python, inventory, known_hosts, accept_new_host_key: run on an SSH device
            (docs/devices.md). runner: an explicit runner (tests).
        no_cache: ignore cached levels (fresh runs; the cache is rewritten).
        progress: receives ``{"event": ...}`` dicts (``level`` after each config).
        int8_search: run the accuracy-aware INT8 search when INT8 misses ``min_retention``.
        max_trials: most INT8 search trials. max_search_s: time bound of the search.
        iterations, min_duration_s, threads: benchmark settings per level.
        targets_dirs: extra target directories.
        history_db: record every measured level in this history store (kind ``sweep``); None: not recorded.

    Returns:
        The result, also written to ``<out_dir>/sweep.json``.

    Raises:
        InputError: bad model, eval data, metric, recipe or option (exit 2). RunnerError: device failure (exit 3).
    """
    started = time.perf_counter()
    emit: Progress = progress or (lambda event: None)
    model_path = Path(model)
    if not model_path.is_file() or model_path.suffix != ".onnx":
        raise InputError(f"model {model_path}: not an .onnx file; sweep takes an ONNX model")
    if objective not in OBJECTIVES:
        raise InputError(f"--objective {objective!r}: use one of {', '.join(OBJECTIVES)}")
    if not 0 < min_retention <= 1.5:
        raise InputError(f"--min-retention {min_retention}: use a ratio such as 0.99")
    if runner is None:
        choice = choose_runner(host=host, device=device, key=key, python=python, inventory=inventory,
                               known_hosts=known_hosts, accept_new_host_key=accept_new_host_key)
        runner, target = choice.runner or LocalRunner(), target or choice.target
    tgt = load_registry(extra_dirs=targets_dirs).get(target or "local")
    out = Path(out_dir) if out_dir else Path("out") / f"{model_path.stem}.sweep"
    out.mkdir(parents=True, exist_ok=True)
    data = load_eval_data(eval, model_path, preprocessing=preprocessing, limit=eval_limit)
    eval_npz = data.save(out / "eval_inputs.npz")
    met = resolve_metric(metric, has_labels=data.labels is not None)  # name + parameters, checked once
    if met.needs_labels and data.labels is None:
        raise InputError(f"metric {met.name} needs labels: add 'labels' to {eval}, or use --metric agreement")
    selection = parse_output(output)
    onnx_ok = {r.value for r in FORMAT_RUNTIMES[ArtifactFormat.ONNX]}
    supported = [r.value for r in tgt.runtimes if r.value in onnx_ok]
    wanted = list(runtimes) if runtimes else supported
    bad = [r for r in wanted if r not in supported]
    if bad:
        raise InputError(f"--runtimes {', '.join(bad)}: target '{tgt.name}' runs ONNX on {', '.join(supported)} only")
    versions = available_runtimes(runner, wanted)
    if not versions:
        raise InputError(f"none of the runtimes {', '.join(wanted)} is installed where the sweep runs; install one")
    warnings = [f"runtime {r} is not installed where the sweep runs; skipped" for r in wanted if r not in versions]
    rts = [r for r in wanted if r in versions]
    ctx = Context(target=tgt.name, runner=runner, eval_npz=eval_npz, labels=data.labels, metric=met,
                  selection=selection, min_retention=min_retention, fps=fps, iterations=iterations,
                  min_duration_s=min_duration_s, threads=threads, targets_dirs=targets_dirs, versions=versions,
                  shapes={k: [1, *v.shape[1:]] for k, v in data.inputs.items()})  # dynamic dims: the eval's
    cache = LevelCache(out / "cache", enabled=not no_cache)
    model_sha = sha256_file(model_path)
    common = {"model": model_sha, "target": tgt.name, "runner": getattr(runner, "name", "?"), "eval": data.digest(),
              "metric": met.key(), "output": selection.spec, "fps": fps}
    levels: list[Level] = []

    def run_level(recipe_cfg: Any, name: str, runtime: str, make: Callable[[], Path],
                  details: dict[str, Any] | None = None, keep: bool = True) -> Level:
        k = cache_key(**common, recipe=recipe_cfg, runtime=runtime, version=versions[runtime])
        hit = cache.get(k)
        if hit is not None:
            ok = hit["retention"] >= min_retention  # the threshold is not part of the key: re-judged here
            lvl = Level.model_validate({**hit, "cached": True, "meets_retention": ok,
                                        "passed": ok and hit["meets_budget"]})
        else:
            lvl = ctx.level(make(), runtime, name, model_path, details)
            cache.put(k, lvl.model_dump(mode="json"))
        if keep:
            levels.append(lvl)
        emit({"event": "level", "recipe": lvl.recipe, "runtime": runtime, "cached": lvl.cached,
              "retention": lvl.retention, "latency_ms": lvl.latency_ms})
        return lvl

    for rt in rts:  # the original model: retention 1 by definition, its latency is the baseline
        run_level("fp32", "fp32", rt, lambda: model_path)
    chosen = list(recipes) if recipes else list(DEFAULT_RECIPES)
    for name in chosen:
        loaded = load_recipe(name)
        cfg = loaded.recipe.model_dump(mode="json")
        made: dict[str, Any] = {}

        def make(name: str = name, made: dict[str, Any] = made, rt: str = "") -> Path:
            if "result" not in made:  # one optimize per recipe, shared by the runtimes
                made["result"] = optimize(model_path, target=tgt.name, recipe=name, calib=calib or eval_npz,
                                          out_dir=out / "artifacts" / name, fidelity=False, bench=False,
                                          preprocessing=preprocessing, targets_dirs=targets_dirs)
            return artifact_for(made["result"].artifacts, rt)

        try:
            for rt in rts:
                run_level(cfg, name, rt, functools.partial(make, rt=rt))
        except InputError as exc:
            if recipes:
                raise
            warnings.append(f"recipe {name} skipped: {exc}")
    search_info = None
    int8_fails = [lv for lv in levels if lv.recipe == "int8" and not lv.meets_retention]
    if int8_search and int8_fails:
        emit({"event": "info", "message": f"int8 retention {int8_fails[0].retention:.4f} < {min_retention}: "
                                          "searching for an accuracy-aware INT8 config"})
        search_info = search_int8(model_path, ctx=ctx, runtime=int8_fails[0].runtime, rts=rts, out=out / "int8-search",
                                  calib=calib or eval_npz, max_trials=max_trials, max_seconds=max_search_s,
                                  run_level=run_level, emit=emit, targets_dirs=targets_dirs)
    points = [(objective_value(lv, objective), lv.retention) for lv in levels]
    front = [levels[i] for i in pareto_indices(points)]
    rec, reason = recommend(levels, objective, min_retention, fps)
    plot = write_plot(levels, objective, out / "pareto.svg")
    result = SweepResult(
        model=str(model_path), model_sha256=model_sha, target=tgt.name, runner=getattr(runner, "name", "?"),
        metric=met.name, output=selection.spec, eval_samples=data.count, min_retention=min_retention, fps=fps,
        objective=objective, runtimes=rts, levels=levels, pareto=front, recommendation=rec, reason=reason,
        int8_search=search_info, plot=str(plot), out_dir=str(out), seconds=round(time.perf_counter() - started, 3),
        warnings=warnings, metric_params=met.spec.given(),
    )
    atomic_write_text(out / "sweep.json", result.model_dump_json(indent=2) + "\n")
    if history_db is not None:
        _record(history_db, ctx, result)
    return result


def _record(history_db: str | Path, ctx: Context, result: SweepResult) -> None:
    """History hook: every freshly measured level as a ``sweep`` run, grouped by this sweep."""
    from ..history import open_store

    store = open_store(history_db)
    group = f"sweep-{int(time.time())}-{result.model_sha256[:8]}"
    for lvl, bench in ctx.bench_results:
        store.record(bench, kind="sweep", verdict="pass" if lvl.passed else "fail", group_id=group,
                     label=f"{lvl.recipe}/{lvl.runtime} retention={lvl.retention:.4f} (edgeopt {__version__})")
