"""Qualification of a plug-in kind's model (the generic kind's plan): the model as it is, measured on each device by
:func:`~edgeopt.bench.kind_bench.bench_kind` (the kind's agent command through that device's runner), judged by the
spec's ``metric`` gates on the result's cells (:mod:`.kind_gates`), recorded in the history as cells. A deployment
as ``model.path`` runs its checked model file with exactly its settings (a ``measure`` key that contradicts them is
a spec error unless ``override_deployment``), with the workload it records (a ``workload:`` key that contradicts
it, likewise), and each device gets its ``deployment_match`` row. The flow
around it (placement, jobs, target rows, history, result, reports, exit codes) is :mod:`.flow`'s, as for every kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bench.kind_bench import bench_kind
from ..deploy.use import DeploymentConflictError, DeploymentUse, deployed_workload, open_deployment
from ..fleet.jobs import EventSink
from ..history import HistoryStore
from ..metrics.kind_result import KindBenchResult
from ..metrics.latency import PERCENTILES, required_samples
from ..registry import KindDescriptor
from ..registry.lookup import detect_format, model_digest
from ..runners import Runner
from ..settings import EnergySettings, MeasureSettings
from .device_jobs import Measurement, log
from .flow import OVERRIDE_KEY, KindPlan, Start, deployed_measure, fingerprint, model_info, qualify_flow
from .gate_spec import Gates
from .kind_gates import error_rows, metric_gate, metric_gates
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import host_facts
from .placement import Placement
from .result import GateResult, QualifyResult, RetentionResult
from .spec import QualifySpec

DEFAULT_ITERATIONS = 200


@dataclass(frozen=True)
class KindMeasurement(Measurement):
    """``bench_kind`` of the model over the kind's workload."""

    settings: MeasureSettings
    workload: dict[str, Any] = field(default_factory=dict)

    def __call__(self, runner: Runner, model: Path, p: Placement, progress: EventSink | None,
                 targets_dirs: Sequence[Path]) -> tuple[Any, ...]:
        log(progress, f"{p.label}: bench of {model.name} on {p.target} ({p.runner_name})")
        return (bench_kind(model, self.settings, workload=self.workload, target=p.target, runner=runner,
                           progress=progress, targets_dirs=targets_dirs),)


@dataclass(kw_only=True)
class PluginPlan(KindPlan):
    """A plug-in kind's plan: its measurement, the metric gates on its cells, the cells' history record."""

    spec: QualifySpec
    kind: KindDescriptor

    def judge(self, p: Placement, runs: tuple[Any, ...], retention: RetentionResult | None,
              store: HistoryStore | None, warnings: list[str]) -> tuple[list[GateResult], dict[str, Any]]:
        result: KindBenchResult = runs[0]
        return [metric_gate(name, g, result, self.kind, p.label) for name, g in metric_gates(self.spec)], \
            {"kind_bench": result}

    def error_gates(self, gates: Gates, device: str, message: str) -> list[GateResult]:
        return error_rows(self.spec, device, message)

    def sound(self, result: Any) -> bool:
        return bool(result.valid)


def run_kind_qualification(loaded: LoadedSpec, kind: KindDescriptor, o: QualifyOptions) -> QualifyResult:
    """Measure the spec's plug-in-kind model on each device (in parallel) and judge it against its metric gates.

    Raises:
        QualifySpecError / InputError: bad spec or history path (exit 2), before device work.
    """
    return qualify_flow(loaded, o, lambda start: _plan(start, kind))


def _plan(start: Start, kind: KindDescriptor) -> PluginPlan:
    s = start.loaded.spec
    assert s.model.path is not None  # a generic kind is told from model.path (kind_check.spec_kind)
    use = open_deployment(start.loaded.resolve(s.model.path))  # checked when loaded; its file and settings run
    model = use.model_path if use is not None else start.loaded.resolve(s.model.path)
    settings, workload = measure_settings(s), dict(s.workload or {})
    if use is not None:  # exactly the deployment's settings and workload (docs/qualify.md, "Deployments")
        settings = deployed_measure(start.loaded, use, settings)
        workload = _deployed_workload(start.loaded, use, kind)
    info = model_info(model, {p.target: model for p in start.placements},
                      lambda path: model_digest(path, detect_format(path))[0], recipe=None, source="model",
                      kind="plugin")
    extra = {"model_kind": kind.name, "workload": workload}
    return PluginPlan(qualified={p.index: model for p in start.placements}, model=info,
                      fingerprint=fingerprint(start.loaded, info, host_facts(), **extra), deployment=use,
                      spec=s, kind=kind, measure=KindMeasurement(settings, workload))


def _deployed_workload(loaded: LoadedSpec, use: DeploymentUse, kind: KindDescriptor) -> dict[str, Any]:
    """The workload the deployment recorded; a ``workload:`` key the spec sets must agree with it unless
    ``override_deployment``.

    Raises:
        QualifySpecError: a spec key that contradicts the deployment, at that key (exit 2).
    """
    s = loaded.spec
    given = dict(s.workload or {})
    try:
        return deployed_workload(use, kind.load_workload(), given, override=s.override_deployment,
                                 label="workload.{key} {value}", override_hint=OVERRIDE_KEY)
    except DeploymentConflictError as exc:
        key = next((k for k in sorted(given) if f"workload.{k} " in str(exc)), None)
        raise loaded.error(("workload",) if key is None else ("workload", key), str(exc)) from None


def measure_settings(s: QualifySpec) -> MeasureSettings:
    """The spec's measurement settings; iterations default to what the gated percentiles need (>= 200)."""
    m = s.measure
    need = max([required_samples(PERCENTILES[g.stat]) for _, g in metric_gates(s) if g.stat in PERCENTILES],
               default=0)
    return MeasureSettings(
        iterations=m.iterations or max(DEFAULT_ITERATIONS, need), min_duration_s=m.min_duration_s,
        max_duration_s=m.max_duration_s, warmup=m.warmup, warmup_s=m.warmup_s, threads=m.threads,
        streams=m.streams, batch=m.batch, seed=m.seed, runtime=m.runtime, use_target_fps=False, keep_samples=True,
        energy=EnergySettings(enabled=m.energy, sensor=m.power_sensor))


