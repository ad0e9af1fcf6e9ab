"""``edgeopt fleet bench MODEL --devices SELECTION``: one model on many devices at once (docs/fleet.md).

``edgeopt bench MODEL --devices SELECTION`` runs the same thing (:func:`run_fleet_bench`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..bench.fleet import DEFAULT_OUTLIER_PCT, fleet_benchmark
from ..fleet import FleetProgress
from ..fsutil import atomic_write_text
from ..settings import MeasureSettings, RemoteSpec
from ..untrusted import clean_text
from .common import emit_json, json_option, targets_dir_option
from .fleet_check_cmd import check_cmd
from .fleet_options import FleetOptions, fleet_options
from .fleet_render import render_fleet
from .history_options import HistoryOptions, history_options
from .measure_options import NO_BUDGET, SAMPLES, measure_options
from .remote_options import remote_options


@click.group("fleet")
def fleet() -> None:
    """Many inventory devices at once: selection by name, tag or glob, in parallel, one row per device."""


def run_fleet_bench(model: Path, settings: MeasureSettings, *, fleet: FleetOptions, remote: RemoteSpec,
                    target: str | None, targets_dirs: tuple[Path, ...], history: HistoryOptions, samples: bool,
                    as_json: bool, outlier_pct: float = DEFAULT_OUTLIER_PCT, junit_path: Path | None = None) -> int:
    """Benchmark ``model`` on the fleet, record and render it; the fleet's exit code (docs/exit-codes.md)."""
    with FleetProgress() as progress:
        result = fleet_benchmark(model, devices=str(fleet.devices), settings=settings, remote=remote,
                                 jobs=fleet.jobs, executor=fleet.executor, deadline_s=fleet.deadline_s, target=target,
                                 targets_dirs=targets_dirs, progress=progress, history_db=history.db,
                                 record=history.enabled, outlier_pct=outlier_pct)
    for warning in result.warnings:
        click.echo(f"edgeopt: warning: {clean_text(warning)}", err=True)  # device text: data
    if history.enabled and any(r.history_run_id for r in result.rows):
        click.echo(f"edgeopt: recorded {sum(bool(r.history_run_id) for r in result.rows)} device runs in the "
                   f"history, group {result.fleet_id}", err=True)
    if not samples:
        result = result.model_copy(update={"rows": [
            r if r.result is None else r.model_copy(update={"result": r.result.model_copy(update={"samples_ms": None})})
            for r in result.rows]})
    if junit_path is not None:
        from ..bench.fleet.junit import render_fleet_junit

        atomic_write_text(junit_path, render_fleet_junit(result))
    if as_json:
        emit_json(result)
    else:
        render_fleet(result)
    return result.exit_code



@fleet.command("bench")
@click.argument("model", type=click.Path(path_type=Path))
@fleet_options(required=True)
@remote_options(with_device=False)
@click.option("--target", "-t", default=None, help="Target for every device [default: each device's own].")
@measure_options(
    "fps", NO_BUDGET, "percentile", "iterations", "min_duration_s", "max_duration_s", "warmup", "threads", "seed",
    "shapes", "batch", "runtime", "runtime_options", "pacing_fps", "energy", SAMPLES,
    fps={"help": "Real-time budget in FPS [default: each target's]."},
    iterations={"help": "Minimum timed inferences per stream (frames with --pacing-fps)."},
    max_duration_s={"help": "Watchdog of each device's timed phase (the run is then invalid)."},
    runtime={"help": "Agent runtime [default: each target's first that loads the model]."},
    runtime_options={"help": "A runtime option (repeatable), as for edgeopt bench."},
    energy={"help": "Measure (or estimate) energy."})
@click.option("--outlier-pct", type=click.FloatRange(min=0), default=DEFAULT_OUTLIER_PCT, show_default=True,
              help="A device this far from the fleet's median p50/p99 is flagged as an outlier.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write JUnit XML here: one test case per device x gate.")
@history_options
@targets_dir_option
@json_option
def bench_cmd(model: Path, fleet: FleetOptions, remote: RemoteSpec, target: str | None, measure: dict[str, Any],
              no_budget: bool, samples: bool, outlier_pct: float, junit_path: Path | None, history: HistoryOptions,
              targets_dirs: tuple[Path, ...], as_json: bool) -> int:
    """Benchmark MODEL on every selected device in parallel; one row per device plus median, spread, outliers.

    Exit 0 every device passed, 1 a device failed its budget or could not run, 2 bad input, 3 every device
    failed to run.
    """
    settings = MeasureSettings.from_kwargs(**{**measure, "fps": None if no_budget else measure["fps"]},
                                           use_target_fps=not no_budget, keep_samples=samples or history.enabled)
    return run_fleet_bench(model, settings, fleet=fleet, remote=remote, target=target, targets_dirs=targets_dirs,
                           history=history, samples=samples, as_json=as_json, outlier_pct=outlier_pct,
                           junit_path=junit_path)


fleet.add_command(check_cmd)
