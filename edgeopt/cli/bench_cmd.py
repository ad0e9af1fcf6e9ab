"""``edgeopt bench MODEL``: measure through the device agent and check the FPS budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..bench import run_benchmark
from ..deploy import is_deployment
from ..deploy.use import DeploymentConflictError
from ..errors import ExitCode, InputError
from ..metrics.result import BenchResult
from ..settings import MeasureSettings, RemoteSpec
from .bench_kind_cmd import plugin_kinds
from .bench_llm_cmd import llm_options, run_llm_bench, run_llm_fleet
from .bench_many import bench_many, check_combination
from .bench_tradeoff_cmd import is_tradeoff, list_options, run_tradeoff
from .common import emit_json, json_option, targets_dir_option
from .deployment_flags import OVERRIDE_DEPLOYMENT, given_settings
from .fleet_options import FleetOptions, fleet_options
from .history_options import HistoryOptions, history_options, record_bench
from .measure_options import NO_BUDGET, SAMPLES, measure_options
from .progress import StderrProgress
from .remote_options import remote_options
from .render import render_bench
from .runtime_flags import runtime_choice, runtime_flag_options, runtime_names_text
from .sink_options import MlflowTarget, mlflow_options


@click.command("bench")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--target", "-t", default=None,
              help="Target name (edgeopt targets) [default: the --device's target, else local].")
@measure_options(
    "fps", NO_BUDGET, "percentile", "iterations", "min_duration_s", "max_duration_s", "warmup", "warmup_s",
    "streams", "seed", "shapes", list_options, "inputs", "runtime", runtime_flag_options, "runtime_options",
    SAMPLES, "energy", "power_sensor", "sysfs_root", "power_rate_hz",
    shapes={"help": "Concrete shape of an input with dynamic dims, e.g. input=1x3x224x224 (one per input)."},
    runtime={"help": f"Agent runtime: {runtime_names_text()} [default: auto: the target's first runtime that loads "
                     "the model's format]."})
@llm_options
@OVERRIDE_DEPLOYMENT
@remote_options()
@fleet_options()
@history_options
@mlflow_options
@targets_dir_option
@json_option
@plugin_kinds
def bench(
    model: Path, target: str | None, measure: dict[str, Any], no_budget: bool, threads: list[int],
    batches: list[int], html: Path | None, runtime_flags: dict[str, dict[str, Any]], samples: bool,
    targets_dirs: tuple[Path, ...], as_json: bool, remote: RemoteSpec, history: HistoryOptions,
    fleet: FleetOptions, mlflow: MlflowTarget | None, override_deployment: bool, **llm: Any,
) -> int:
    """Benchmark MODEL (or every artifact of an optimize manifest.json) on a target, or on many devices at once
    with --devices (docs/fleet.md). MODEL may be a deployment (a folder with deployment.json, e.g. a sweep's
    <out>/recommended): its files run with exactly its settings (docs/bench.md, "Deployments").

    MODEL may be an LLM folder (onnxruntime-genai or OpenVINO GenAI): TTFT, TPOT, tokens/s and memory per workload
    cell of --prompt-tokens x --gen-tokens x --context-depth x --batch x --threads (docs/llm-bench.md).

    MODEL may be of a plug-in model kind: its metrics per cell, its workload from --workload KEY=VALUE (docs/bench.md).

    Exit 0 pass, 1 budget failed or run invalid, 2 bad input, 3 device error (with --devices: every device).
    """
    from ..bench.llm.api import llm_folder_format

    deployed_llm = model.is_file() and is_deployment(model) and llm_folder_format(model.parent)
    if llm_folder_format(model) or deployed_llm:  # a generative model folder: the agent's generate command
        if mlflow is not None or html is not None:
            raise InputError(f"{model} is an LLM folder: --mlflow and --html do not apply to it yet "
                             "(docs/llm-bench.md)")
        if fleet.enabled and is_deployment(model):
            _check_deployment_run(model, fleet=True, tradeoff=False)
        if fleet.enabled:  # every selected device in parallel (docs/llm-bench.md, "Fleet")
            return run_llm_fleet(model, llm, threads=threads, batches=batches, measure=measure, remote=remote,
                                 fleet=fleet, target=target, targets_dirs=targets_dirs, samples=samples,
                                 history=history, as_json=as_json)
        return run_llm_bench(model, llm, threads=threads, batches=batches, measure=measure, remote=remote,
                             as_json=as_json, target=target, targets_dirs=targets_dirs, samples=samples,
                             history=history, override_deployment=override_deployment)
    settings = MeasureSettings.from_kwargs(
        **{**measure, "fps": None if no_budget else measure["fps"],
           **runtime_choice(measure["runtime"], runtime_flags, measure["runtime_options"])},
        use_target_fps=not no_budget, threads=threads[0] if threads else 0, batch=batches[0] if batches else 1,
        keep_samples=samples or history.enabled,  # the history keeps raw samples for compare
    )
    if is_deployment(model):  # its files, exactly its settings (docs/bench.md, "Deployments")
        _check_deployment_run(model, fleet=fleet.enabled, tradeoff=is_tradeoff(batches, threads))
        given = given_settings(runtime_flags, {"threads": "threads", "batch": "batches"})
        with StderrProgress() as progress:
            result = run_benchmark(model, settings, target=target, remote=remote, progress=progress,
                                   targets_dirs=targets_dirs, given=given, override_deployment=override_deployment)
        return _emit(result, history, remote, mlflow, samples=samples, as_json=as_json)
    check_combination(model, fleet=fleet, tradeoff=is_tradeoff(batches, threads), mlflow=mlflow is not None)
    if is_tradeoff(batches, threads):  # --batch 1,2,4,8 / --threads 1,2: one run per value, the trade-off
        return run_tradeoff(model, settings, batches=batches, threads=threads, target=target, remote=remote,
                            targets_dirs=targets_dirs, html=html, as_json=as_json)
    if fleet.enabled or model.suffix.lower() == ".json":  # many devices, or every artifact of a manifest
        return bench_many(model, settings, fleet=fleet, target=target, remote=remote, targets_dirs=targets_dirs,
                          history=history, as_json=as_json, samples=samples)
    with StderrProgress() as progress:
        result = run_benchmark(model, settings, target=target, remote=remote, progress=progress,
                               targets_dirs=targets_dirs)
    if remote.host and target is None:
        click.echo("edgeopt: note: no --target for --host: used 'local' numbers (pass --target, e.g. rpi5)", err=True)
    return _emit(result, history, remote, mlflow, samples=samples, as_json=as_json)


def _check_deployment_run(model: Path, *, fleet: bool, tradeoff: bool) -> None:
    """A deployment is benched as one run on one device: --devices and --threads/--batch lists are refused."""
    if fleet:
        raise InputError(f"{model}: a deployment runs on one device here (--host/--device); bench its model file "
                         "with --devices, or qualify the deployment on many devices (docs/qualify.md)")
    if tradeoff:
        raise DeploymentConflictError(f"--threads/--batch lists contradict deployment {model}: it runs its own "
                                      "threads and batch; bench its model file to sweep them")


def _emit(result: BenchResult, history: HistoryOptions, remote: RemoteSpec, mlflow: MlflowTarget | None, *,
          samples: bool, as_json: bool) -> int:
    """Record the run (history, MLflow), then print it; the exit code."""
    record_bench(result, history, device=remote.device)
    if mlflow is not None:
        mlflow.log("bench", result)
    result = result if samples else result.model_copy(update={"samples_ms": None})
    if as_json:
        emit_json(result)
    else:
        render_bench(result)
    return int(ExitCode.OK if result.passed else ExitCode.GATE_FAILED)

