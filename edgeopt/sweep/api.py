"""``edgeopt.sweep``: compression levels x runtimes on the target, retention measured there, one recommendation.

The public entry points (:func:`sweep`, :func:`run_sweep`) and the history hook; the options are in
:mod:`.options`, the flow every kind's sweep runs in :mod:`.flow`, the one-pass kind's steps in :mod:`.run`.
``sweep.json`` and ``pareto.svg`` are written atomically. Cached levels (same model, recipe config, target,
runtime version, eval data, metric) are read back, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..calib import ImagePreprocessing
from ..dispatch import entry, kind_of
from ..errors import InputError
from ..evaluation import MetricSpec
from ..registry import KindDescriptor
from ..runners import Runner
from ..settings import MeasureSettings, RemoteSpec, build, refuse_shadowed
from .flow import run_sweep_flow
from .levels import Progress
from .options import (  # noqa: F401 - re-exported: the sweep's public names stay importable from here
    DEFAULT_RECIPES,
    LEVEL_WARMUP,
    OBJECTIVES,
    SweepOptions,
    check_inputs,
    level_settings,
)
from .request import SweepRequest
from .result import SweepResult
from .run import (  # noqa: F401 - re-exported
    LevelRuns,
    OnePassSweep,
    Prebuilt,
    device_name,
    measure_sweep,
    swept_levels,
)
from .runtimes import artifact_for, available_runtimes, float_options, sweep_threads  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from ..llm.sweep_result import LlmSweepResult


def sweep(
    model: str | Path, *, eval: str | Path | None = None, target: str | None = None,  # noqa: A002 - documented name
    recipes: Sequence[str] | None = None, min_retention: float = 0.99, metric: str | MetricSpec | None = None,
    output: str | int | None = None, fps: float | None = None, objective: str = "latency",
    runtimes: Sequence[str] | None = None, calib: str | Path | None = None, out_dir: str | Path | None = None,
    preprocessing: ImagePreprocessing | None = None, eval_limit: int | None = None, host: str | None = None,
    device: str | None = None, key: str | Path | None = None, python: str | None = None,
    inventory: str | Path | None = None, known_hosts: str | Path | None = None, accept_new_host_key: bool = False,
    runner: Runner | None = None, no_cache: bool = False, progress: Progress | None = None, int8_search: bool = True,
    max_trials: int = 12, max_search_s: float = 600.0, iterations: int = 100, min_duration_s: float = 1.0,
    threads: int = 0, targets_dirs: Sequence[Path] = (), history_db: str | Path | None = None,
    nncf_budget_s: float = 0.0, options: SweepOptions | None = None, measure: MeasureSettings | None = None,
) -> SweepResult | LlmSweepResult:
    """Sweep compression levels x runtimes of ``model`` on ``target``; recommend the best passing config.

    Args:
        model: an ONNX model (the reference for retention), or an LLM folder (a Hugging Face decoder, or the zoo's):
            the LLM sweep of its generative levels (docs/llm.md), with ``eval`` a held-out text file, ``recipes``
            its level names, ``threads`` and ``eval_limit`` its scoring settings, ``calib`` its calibration text;
            the image-only keywords (``output``, ``preprocessing``, ``objective``, ``fps``, the INT8 search's)
            do not apply to it. Dispatched on the model's kind (``KindDescriptor.sweep_api``).
        eval: evaluation data: ``.npz`` keyed by input name (+ optional ``labels``) or a class-per-subfolder
            image folder (an LLM: a text file). Required unless ``options`` is given.
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
        options, measure: the typed settings the CLI builds (:class:`SweepOptions`, the levels'
            :class:`~edgeopt.settings.MeasureSettings`, e.g. from :func:`level_settings`): when given they replace
            what the keywords above would build.

    Returns:
        The result (an LLM folder's: :class:`~edgeopt.llm.sweep_result.LlmSweepResult`), also written to
        ``<out_dir>/sweep.json``.

    Raises:
        InputError: bad model, eval data, metric, recipe or option (exit 2). RunnerError: device failure (exit 3).
    """
    given = locals()
    refuse_shadowed(sweep, given, options, _OPTION_KEYWORDS, "options")
    refuse_shadowed(sweep, given, measure, ("iterations", "min_duration_s", "threads", "fps"), "measure")
    if options is None and eval is None:
        raise InputError("sweep: give eval= (evaluation data, or an LLM's held-out text) or options=SweepOptions(...)")
    options = options or build(SweepOptions, {
        "eval_data": eval, "recipes": recipes, "min_retention": min_retention, "metric": metric, "output": output,
        "objective": objective, "runtimes": runtimes, "calib": calib, "out_dir": out_dir,
        "preprocessing": preprocessing, "eval_limit": eval_limit, "no_cache": no_cache, "int8_search": int8_search,
        "max_trials": max_trials, "max_search_s": max_search_s, "history_db": history_db,
        "nncf_budget_s": nncf_budget_s})
    measure = measure or level_settings(iterations=iterations, min_duration_s=min_duration_s, threads=threads, fps=fps)
    remote = build(RemoteSpec, {"host": host, "device": device, "key": key, "python": python, "inventory": inventory,
                                "known_hosts": known_hosts, "accept_new_host_key": accept_new_host_key})
    request = SweepRequest(options=options, measure=measure, remote=remote, target=target, runner=runner,
                           progress=progress, targets_dirs=tuple(targets_dirs))
    kind = kind_of(model)  # the registry's answer; its sweep_api entry runs it
    result: SweepResult | LlmSweepResult = entry(kind, "sweep_api")(Path(model), kind, request)
    return result


_OPTION_KEYWORDS = ("eval", "recipes", "min_retention", "metric", "output", "objective", "runtimes", "calib", "out_dir",
                    "preprocessing", "eval_limit", "no_cache", "int8_search", "max_trials", "max_search_s",
                    "history_db", "nncf_budget_s")


def sweep_tensor(model: Path, kind: KindDescriptor, r: SweepRequest) -> SweepResult:
    """The tensor kind's ``sweep_api`` entry: :func:`run_sweep` with the request's typed settings."""
    return run_sweep(model, r.options, r.measure, target=r.target, runner=r.runner, remote=r.remote,
                     progress=r.progress, targets_dirs=r.targets_dirs)


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
    plan = OnePassSweep(Path(model), options, measure, progress, tuple(targets_dirs))
    return run_sweep_flow(plan, runner=runner, remote=remote, target=target)


def record_levels(history_db: str | Path, runs: LevelRuns, result: SweepResult, *, device: str | None = None,
                  group_id: str | None = None) -> list[int]:
    """History hook: every freshly measured level as a ``sweep`` run, grouped by this sweep (or ``group_id``: a
    fleet sweep's id); the run ids (:mod:`edgeopt.history.sweep_runs`, shared with the LLM sweep).

    Raises:
        HistoryError: the history cannot be opened or written.
    """
    from ..history.sweep_runs import record_sweep_levels

    return record_sweep_levels(history_db, swept_levels(runs), model_sha256=result.model_sha256, device=device,
                               group_id=group_id)
