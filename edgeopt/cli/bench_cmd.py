"""``edgeopt bench MODEL``: measure through the device agent and check the FPS budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..dispatch import entry, kind_of
from ..settings import RemoteSpec
from .bench_call import BenchCall
from .bench_kind_cmd import workload_option
from .bench_tradeoff_cmd import list_options
from .common import json_option, targets_dir_option
from .deployment_flags import OVERRIDE_DEPLOYMENT
from .fleet_options import FleetOptions, fleet_options
from .history_options import HistoryOptions, history_options
from .kind_flags import kind_flag_options, kind_settings
from .kind_help import command_help
from .measure_options import NO_BUDGET, SAMPLES, measure_options
from .remote_options import remote_options
from .runtime_flags import runtime_flag_options, runtime_names_text
from .sink_options import MlflowTarget, mlflow_options


@click.command("bench", help=command_help(
    "Benchmark MODEL (or every artifact of an optimize manifest.json) on a target, or on many devices at once with "
    "--devices (docs/fleet.md). MODEL may be a deployment (a folder with deployment.json, e.g. a sweep's "
    "<out>/recommended): its files run with exactly its settings (docs/bench.md, \"Deployments\").",
    "bench",  # each kind's paragraph (its descriptor's cli_help.bench)
    "MODEL may be of a plug-in model kind: its metrics per cell, its workload from --workload KEY=VALUE "
    "(docs/bench.md).",
    "Exit 0 pass, 1 budget failed or run invalid, 2 bad input, 3 device error (with --devices: every device)."))
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
@kind_flag_options("workload")  # each kind's own flags, from its workload model
@OVERRIDE_DEPLOYMENT
@remote_options()
@fleet_options()
@history_options
@mlflow_options
@targets_dir_option
@json_option
@workload_option
def bench(
    model: Path, target: str | None, measure: dict[str, Any], no_budget: bool, threads: list[int],
    batches: list[int], html: Path | None, runtime_flags: dict[str, dict[str, Any]], samples: bool,
    targets_dirs: tuple[Path, ...], as_json: bool, remote: RemoteSpec, history: HistoryOptions,
    fleet: FleetOptions, mlflow: MlflowTarget | None, override_deployment: bool, workload: tuple[str, ...],
    kind_flags: dict[str, Any],
) -> int:
    """Benchmark MODEL on a target (its help: the ``help`` above, with each kind's paragraph from its descriptor)."""
    kind = kind_of(model)  # the registry's answer (a deployment: what it deploys); its bench_cli entry runs it
    shared = {"threads": threads, "batch": batches, "seed": measure["seed"],
              "max_duration_s": measure["max_duration_s"]}  # what a workload field of the same name takes
    call = BenchCall(model=model, target=target, measure=measure, no_budget=no_budget, threads=threads,
                     batches=batches, html=html, runtime_flags=runtime_flags, samples=samples,
                     targets_dirs=targets_dirs, as_json=as_json, remote=remote, history=history, fleet=fleet,
                     mlflow=mlflow, override_deployment=override_deployment, workload=workload,
                     settings=kind_settings(kind, "workload", kind_flags, shared))
    return int(entry(kind, "bench_cli")(kind, call))
