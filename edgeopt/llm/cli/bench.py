"""``edgeopt bench LLM_FOLDER``: the generative kind's ``bench_cli`` entry and the run (docs/llm-bench.md). Its
workload flags (``--prompt-tokens`` ...) are :class:`~edgeopt.bench.llm.workload.LlmWorkload`'s, derived by the
command (edgeopt/cli/kind_flags.py), which hands the typed workload over as ``BenchCall.settings``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from ...bench.llm.workload import LlmWorkload
from ...cli.bench_call import BenchCall, check_deployment_run
from ...cli.bench_emit import emit_result
from ...cli.common import emit_json
from ...cli.fleet_options import FleetOptions
from ...cli.history_options import HistoryOptions
from ...cli.progress import StderrProgress
from ...deploy import is_deployment
from ...errors import InputError
from ...registry import KindDescriptor
from ...settings import ENERGY_KEYWORDS, EnergySettings, RemoteSpec
from ...untrusted import clean_text


def bench_generative(kind: KindDescriptor, c: BenchCall) -> int:
    """The generative kind's ``bench_cli`` entry: one device (:func:`run_llm_bench`) or every ``--devices`` device
    in parallel (:func:`run_llm_fleet`); --mlflow and --html are refused."""
    c.refuse_workload()
    if c.mlflow is not None or c.html is not None:
        raise InputError(f"{c.model} is an LLM folder: --mlflow and --html do not apply to it yet "
                         "(docs/llm-bench.md)")
    if c.fleet.enabled and is_deployment(c.model):
        check_deployment_run(c.model, fleet=True, tradeoff=False)
    workload = c.settings if isinstance(c.settings, LlmWorkload) else LlmWorkload()
    common: dict[str, Any] = {"measure": c.measure, "remote": c.remote, "target": c.target,
                              "targets_dirs": c.targets_dirs, "samples": c.samples, "history": c.history,
                              "as_json": c.as_json}
    if c.fleet.enabled:  # every selected device in parallel (docs/llm-bench.md, "Fleet")
        return run_llm_fleet(c.model, workload, fleet=c.fleet, **common)
    return run_llm_bench(c.model, workload, threads=c.threads, batches=c.batches,
                         override_deployment=c.override_deployment, **common)


def run_llm_bench(model: Path, workload: LlmWorkload, *, threads: Sequence[int], batches: Sequence[int],
                  measure: dict[str, Any], remote: RemoteSpec, as_json: bool, target: str | None = None,
                  targets_dirs: Sequence[Path] = (), samples: bool = False,
                  history: HistoryOptions | None = None, override_deployment: bool = False) -> int:
    """Bench an LLM folder over ``workload`` (recorded in the history unless disabled); exit 0 when every cell is
    valid, 1 otherwise. A deployment (a sweep's ``recommended/``) runs its checked files with exactly its settings,
    as a one-pass deployment does (docs/bench.md, "Deployments"): ``threads``/``batches`` (the ones given) are
    checked against it and its own replace the workload's."""
    from ...bench.llm import bench_llm
    from ...bench.llm.deployed import deployed_run
    from ...bench.llm.render import render_llm_bench
    from ...deploy.use import mark_any, open_deployment

    use = open_deployment(model)  # None for a plain folder; a changed file is exit 2 here
    runtime, options = measure.get("runtime"), measure.get("runtime_options") or {}
    if use is not None:
        model, runtime, options, threads, batches = deployed_run(use, runtime, options, threads, batches,
                                                                 override_deployment)
        workload = workload.model_copy(update={"threads": tuple(threads or (0,)), "batch": tuple(batches or (1,))})
    with StderrProgress() as progress:
        result = bench_llm(model, workload, runtime=runtime, runtime_options=options, remote=remote,
                           progress=progress, target=target, energy=energy_settings(measure), targets_dirs=targets_dirs)
    if use is not None:
        result = mark_any(use, result, str(result.runtime.get("version", "")),
                          result.environment.get("cpu_flags") or [])
    return emit_result(result, result if samples else result.without_samples(), history=history,
                       device=remote.device, verdict=None if result.valid else "fail", ok=result.valid,
                       as_json=as_json, render=render_llm_bench)


def energy_settings(measure: dict[str, Any]) -> EnergySettings:
    """``--energy/--no-energy``, ``--power-sensor``, ``--sysfs-root``, ``--power-rate-hz`` as EnergySettings."""
    given = {field: measure[kw] for kw, field in ENERGY_KEYWORDS.items() if measure.get(kw) is not None}
    return EnergySettings.model_validate(given)


def run_llm_fleet(model: Path, workload: LlmWorkload, *, measure: dict[str, Any], remote: RemoteSpec,
                  fleet: FleetOptions, target: str | None, targets_dirs: Sequence[Path], samples: bool,
                  history: HistoryOptions, as_json: bool) -> int:
    """Bench an LLM folder on every ``--devices`` device in parallel; the fleet's exit code (0, 1 or 3)."""
    from ...bench.llm.fleet import fleet_llm_benchmark
    from ...bench.llm.render import render_llm_fleet
    from ...fleet import FleetProgress

    with FleetProgress() as progress:
        result = fleet_llm_benchmark(
            model, devices=str(fleet.devices), workload=workload, jobs=fleet.jobs, executor=fleet.executor,
            deadline_s=fleet.deadline_s, remote=remote, runtime=measure.get("runtime"),
            runtime_options=measure.get("runtime_options") or {}, energy=energy_settings(measure), target=target,
            targets_dirs=targets_dirs, progress=progress, history_db=history.db, record=history.enabled)
    for warning in result.warnings:
        click.echo(f"edgeopt: warning: {clean_text(warning)}", err=True)  # device text: data
    shown = result if samples else result.without_samples()
    if as_json:
        emit_json(shown)
    else:
        render_llm_fleet(shown)
    return result.exit_code
