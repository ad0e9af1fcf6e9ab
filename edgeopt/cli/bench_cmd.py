"""``edgeopt bench MODEL``: measure through the device agent and check the FPS budget."""

from __future__ import annotations

from pathlib import Path

import click

from ..bench import benchmark
from ..errors import ExitCode
from .common import emit_json, json_option, parse_shapes, shape_options, targets_dir_option
from .progress import StderrProgress
from .render import render_bench


@click.command("bench")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("--target", "-t", default="local", show_default=True, help="Target name (edgeopt targets).")
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
@click.option("--threads", type=click.IntRange(min=0), default=0, show_default=True,
              help="Runtime intra-op threads (0: runtime default).")
@click.option("--streams", type=click.IntRange(min=1), default=1, show_default=True,
              help="Concurrent inference streams (throughput mode).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated inputs.")
@shape_options
@click.option("--inputs", type=click.Path(path_type=Path), default=None, help=".npz of inputs keyed by name.")
@click.option("--runtime", default="onnxruntime", show_default=True, help="Agent runtime (onnxruntime, null).")
@click.option("--provider", "providers", multiple=True, help="onnxruntime execution provider (repeatable).")
@click.option("--samples", is_flag=True, help="Include every per-inference latency in the JSON.")
@targets_dir_option
@json_option
def bench(
    model: Path, target: str, fps: float | None, no_budget: bool, percentile: str, iterations: int,
    min_duration: float, max_duration: float, warmup: int, warmup_s: float, threads: int, streams: int,
    seed: int, shapes: tuple[str, ...], batch: int, inputs: Path | None, runtime: str,
    providers: tuple[str, ...], samples: bool, targets_dirs: tuple[Path, ...], as_json: bool,
) -> int:
    """Benchmark MODEL on a target. Exit 0 pass, 1 budget failed or run invalid, 2 bad input, 3 device error."""
    result = benchmark(
        model,
        target=target,
        fps=None if no_budget else fps,
        use_target_fps=not no_budget,
        percentile=percentile,
        iterations=iterations,
        min_duration_s=min_duration,
        max_duration_s=max_duration,
        warmup=warmup,
        warmup_s=warmup_s,
        threads=threads,
        streams=streams,
        batch=batch,
        seed=seed,
        shapes=parse_shapes(shapes),
        inputs=inputs,
        runtime=runtime,
        runtime_options={"providers": list(providers)} if providers else {},
        targets_dirs=targets_dirs,
        progress=StderrProgress(),
        keep_samples=samples,
    )
    if as_json:
        emit_json(result)
    else:
        render_bench(result)
    return int(ExitCode.OK if result.passed else ExitCode.GATE_FAILED)
