"""``edgeopt bench MODEL`` for a one-pass model (the tensor kind's ``bench_cli`` entry): one run, a trade-off of
--threads/--batch lists, a manifest's artifacts, many devices, or a deployment with exactly its settings."""

from __future__ import annotations

import click

from ..bench import run_benchmark
from ..deploy import is_deployment
from ..metrics.result import BenchResult
from ..registry import KindDescriptor
from ..settings import MeasureSettings, RemoteSpec
from .bench_call import BenchCall, check_deployment_run
from .bench_emit import emit_result
from .bench_many import bench_many, check_combination
from .bench_tradeoff_cmd import is_tradeoff, run_tradeoff
from .deployment_flags import given_settings
from .history_options import HistoryOptions
from .progress import StderrProgress
from .render import render_bench
from .runtime_flags import runtime_choice
from .sink_options import MlflowTarget


def bench_tensor(kind: KindDescriptor, c: BenchCall) -> int:
    """Bench a one-pass model as the options say; the exit code (0 pass, 1 budget failed or invalid)."""
    c.refuse_workload()
    model, measure, threads, batches, history, remote = c.model, c.measure, c.threads, c.batches, c.history, c.remote
    settings = MeasureSettings.from_kwargs(
        **{**measure, "fps": None if c.no_budget else measure["fps"],
           **runtime_choice(measure["runtime"], c.runtime_flags, measure["runtime_options"])},
        use_target_fps=not c.no_budget, threads=threads[0] if threads else 0, batch=batches[0] if batches else 1,
        keep_samples=c.samples or history.enabled,  # the history keeps raw samples for compare
    )
    if is_deployment(model):  # its files, exactly its settings (docs/bench.md, "Deployments")
        check_deployment_run(model, fleet=c.fleet.enabled, tradeoff=is_tradeoff(batches, threads))
        given = given_settings(c.runtime_flags, {"threads": "threads", "batch": "batches"})
        with StderrProgress() as progress:
            result = run_benchmark(model, settings, target=c.target, remote=remote, progress=progress,
                                   targets_dirs=c.targets_dirs, given=given,
                                   override_deployment=c.override_deployment)
        return _emit(result, history, remote, c.mlflow, samples=c.samples, as_json=c.as_json)
    check_combination(model, fleet=c.fleet, tradeoff=is_tradeoff(batches, threads), mlflow=c.mlflow is not None)
    if is_tradeoff(batches, threads):  # --batch 1,2,4,8 / --threads 1,2: one run per value, the trade-off
        return run_tradeoff(model, settings, batches=batches, threads=threads, target=c.target, remote=remote,
                            targets_dirs=c.targets_dirs, html=c.html, as_json=c.as_json)
    if c.fleet.enabled or model.suffix.lower() == ".json":  # many devices, or every artifact of a manifest
        return bench_many(model, settings, fleet=c.fleet, target=c.target, remote=remote,
                          targets_dirs=c.targets_dirs, history=history, as_json=c.as_json, samples=c.samples)
    with StderrProgress() as progress:
        result = run_benchmark(model, settings, target=c.target, remote=remote, progress=progress,
                               targets_dirs=c.targets_dirs)
    if remote.host and c.target is None:
        click.echo("edgeopt: note: no --target for --host: used 'local' numbers (pass --target, e.g. rpi5)", err=True)
    return _emit(result, history, remote, c.mlflow, samples=c.samples, as_json=c.as_json)


def _emit(result: BenchResult, history: HistoryOptions, remote: RemoteSpec, mlflow: MlflowTarget | None, *,
          samples: bool, as_json: bool) -> int:
    """Record the run (history, MLflow), then print it; the exit code."""
    verdict = None if result.fps_budget is None and result.valid else ("pass" if result.passed else "fail")
    shown = result if samples else result.model_copy(update={"samples_ms": None})
    return emit_result(result, shown, history=history, device=remote.device, verdict=verdict, ok=result.passed,
                       as_json=as_json, render=render_bench, mlflow=mlflow)
