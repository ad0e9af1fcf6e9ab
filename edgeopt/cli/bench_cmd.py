"""``edgeopt bench MODEL``: measure through the device agent and check the FPS budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..bench import run_benchmark
from ..errors import ExitCode
from ..metrics.result import BenchResult
from ..settings import MeasureSettings, RemoteSpec
from .bench_many import bench_many, check_combination
from .bench_tradeoff_cmd import is_tradeoff, list_options, run_tradeoff
from .common import emit_json, energy_options, json_option, parse_shapes, targets_dir_option
from .fleet_options import FleetOptions, fleet_options
from .history_options import HistoryOptions, history_options, record_bench
from .progress import StderrProgress
from .remote_options import remote_options
from .render import render_bench
from .runtime_flags import runtime_choice, runtime_flag_options, runtime_names_text
from .sink_options import MlflowTarget, mlflow_options


@click.command("bench")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--target", "-t", default=None,
              help="Target name (edgeopt targets) [default: the --device's target, else local].")
@click.option("--fps", type=float, default=None, help="Real-time budget in FPS [default: the target's].")
@click.option("--no-budget", is_flag=True, help="Do not check any FPS budget.")
@click.option("--percentile", default="p99", show_default=True, help="Percentile checked against the budget.")
@click.option("--iterations", "-n", type=click.IntRange(min=1), default=200, show_default=True,
              help="Minimum timed inferences per stream.")
@click.option("--min-duration", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="Minimum seconds of timed inferences.")
@click.option("--max-duration", type=click.FloatRange(min=0.001), default=600.0, show_default=True,
              help="Watchdog: stop timing after this many seconds (the run is then invalid).")
@click.option("--warmup", type=click.IntRange(min=0), default=10, show_default=True, help="Warm-up inferences.")
@click.option("--warmup-s", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Minimum warm-up seconds.")
@click.option("--streams", type=click.IntRange(min=1), default=1, show_default=True,
              help="Concurrent inference streams (throughput mode).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated inputs.")
@click.option("--shape", "shapes", multiple=True, metavar="NAME=DxDxD",
              help="Concrete shape of an input with dynamic dims, e.g. input=1x3x224x224 (one per input).")
@list_options
@click.option("--inputs", type=click.Path(path_type=Path), default=None, help=".npz of inputs keyed by name.")
@click.option("--runtime", default=None, help=f"Agent runtime: {runtime_names_text()} [default: auto: the target's "
              "first runtime that loads the model's format].")
@runtime_flag_options
@click.option("--runtime-option", "runtime_option", multiple=True, metavar="KEY=VALUE",
              help="A runtime option (repeatable), e.g. performance_hint=THROUGHPUT; docs/runtimes.md lists them.")
@click.option("--samples", is_flag=True, help="Include every per-inference latency in the JSON.")
@energy_options
@remote_options()
@fleet_options()
@history_options
@mlflow_options
@targets_dir_option
@json_option
def bench(
    model: Path, target: str | None, fps: float | None, no_budget: bool, percentile: str, iterations: int,
    min_duration: float, max_duration: float, warmup: int, warmup_s: float, threads: list[int], streams: int,
    seed: int, shapes: tuple[str, ...], batches: list[int], html: Path | None, inputs: Path | None,
    runtime: str | None,
    runtime_flags: dict[str, dict[str, Any]], runtime_option: tuple[str, ...], samples: bool,
    targets_dirs: tuple[Path, ...], as_json: bool,
    energy: bool, power_sensor: str, sysfs_root: str, power_rate_hz: float, remote: RemoteSpec,
    history: HistoryOptions, fleet: FleetOptions, mlflow: MlflowTarget | None,
) -> int:
    """Benchmark MODEL (or every artifact of an optimize manifest.json) on a target, or on many devices at once
    with --devices (docs/fleet.md).

    Exit 0 pass, 1 budget failed or run invalid, 2 bad input, 3 device error (with --devices: every device).
    """
    settings = MeasureSettings.from_kwargs(
        fps=None if no_budget else fps, use_target_fps=not no_budget, percentile=percentile, iterations=iterations,
        min_duration_s=min_duration, max_duration_s=max_duration, warmup=warmup, warmup_s=warmup_s,
        threads=threads[0] if threads else 0, streams=streams, batch=batches[0] if batches else 1, seed=seed,
        shapes=parse_shapes(shapes), inputs=inputs,
        **runtime_choice(runtime, runtime_flags, runtime_option),
        keep_samples=samples or history.enabled,  # the history keeps raw samples for compare
        energy=energy, power_sensor=power_sensor, sysfs_root=sysfs_root, power_rate_hz=power_rate_hz,
    )
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

