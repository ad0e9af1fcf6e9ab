"""Qualification of a plug-in kind's model (the generic engine): the model as it is, measured on each device by
:func:`~edgeopt.bench.kind_bench.bench_kind` (the kind's agent command through that device's runner, as a fleet
job), judged by the spec's ``metric`` gates on the result's cells (:mod:`.kind_gates`), recorded in the history as
cells. Reports and exit codes are qualify's: the gate rows are the same rows every engine writes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ..bench.kind_bench import bench_kind
from ..fleet.artifacts import ModelRef
from ..fleet.executors import make_executor
from ..fleet.jobs import CancelToken, EventSink
from ..fleet.result import DeviceOutcome, ErrorKind
from ..fleet.runner import run_jobs
from ..history import open_store
from ..metrics.kind_result import KindBenchResult
from ..metrics.latency import PERCENTILES, required_samples
from ..registry import KindDescriptor
from ..registry.lookup import detect_format, model_digest
from ..runners import Runner
from ..settings import EnergySettings, MeasureSettings
from .device_jobs import DEADLINE_MARGIN_S, OnPlacement, _log, device_events
from .gate_rows import target_row
from .kind_gates import error_rows, metric_gate, metric_gates
from .loader import LoadedSpec
from .options import QualifyOptions
from .outcome import (
    Clock,
    Run,
    all_pass,
    assemble,
    default_report_dir,
    host_facts,
    parallel_jobs,
    say_verdict,
    with_target_row,
)
from .placement import Placement, place
from .result import DeviceResult, ModelInfo, QualifyResult
from .spec import QualifySpec

DEFAULT_ITERATIONS = 200


class KindQualifyRow(DeviceOutcome):
    """One device's generic-engine bench as a fleet row."""

    kind_bench: KindBenchResult | None = Field(default=None, description="The bench (null on error).")


@dataclass(frozen=True)
class KindQualifyJob(OnPlacement[KindQualifyRow]):
    """``bench_kind`` of the model on one placement (a fleet job): plain picklable data in, the row out."""

    placement: Placement
    model: ModelRef
    settings: MeasureSettings
    workload: Mapping[str, Any]
    deadline_s: float
    model_label: str = ""
    targets_dirs: Sequence[Path] = ()

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> KindQualifyRow:
        return KindQualifyRow(**self.row_fields(), status="error", error=message, error_kind=kind,
                              seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> KindQualifyRow:
        def ok(result: KindBenchResult, seconds: float) -> KindQualifyRow:
            if self.model_label:
                result = result.model_copy(update={"model": result.model.model_copy(update={"path": self.model_label})})
            return KindQualifyRow(**self.row_fields(), status="ok", seconds=seconds, kind_bench=result)

        return self.guarded(blobs, progress, cancel, lambda runner, path: self._bench(runner, path, progress), ok)

    def _bench(self, runner: Runner, path: Path, progress: EventSink | None) -> KindBenchResult:
        p = self.placement
        _log(progress, f"{p.label}: bench of {path.name} on {p.target} ({p.runner_name})")
        return bench_kind(path, self.settings, workload=self.workload, target=p.target, runner=runner,
                          progress=progress, targets_dirs=self.targets_dirs)


def run_kind_qualification(loaded: LoadedSpec, kind: KindDescriptor, o: QualifyOptions) -> QualifyResult:
    """Measure the spec's plug-in-kind model on each device (in parallel) and judge it against its metric gates.

    Raises:
        QualifySpecError / InputError: bad spec or history path (exit 2), before device work.
    """
    say = o.log or (lambda message: None)
    s = loaded.spec
    assert s.model.path is not None  # a generic kind is told from model.path (kind_check.spec_kind)
    model = loaded.resolve(s.model.path)
    placements = place(loaded, o.targets_dirs)
    out_dir = Path(o.report_dir) if o.report_dir is not None else default_report_dir(s.name)
    run = Run(loaded, Clock(), out_dir, open_store(o.history_db) if o.record else None, uuid.uuid4().hex[:12])
    settings = measure_settings(s)
    deadline = o.deadline_s if o.deadline_s is not None else s.measure.max_duration_s + DEADLINE_MARGIN_S
    jobs = [KindQualifyJob(p, ModelRef.of(model), settings, dict(s.workload or {}), deadline, str(model),
                           targets_dirs=tuple(o.targets_dirs)) for p in placements]
    rows = run_jobs(jobs, parallel=parallel_jobs(o.jobs, len(placements)), executor=make_executor(o.executor),
                    progress=device_events(o.progress, say))
    devices = [_judge(s, kind, p, row, run, o.record, say) for p, row in zip(placements, rows, strict=True)]
    digest = model_digest(model, detect_format(model))[0]
    info = ModelInfo(reference_path=str(model), reference_sha256=digest,
                     qualified={p.target: str(model) for p in placements},
                     qualified_sha256={p.target: digest for p in placements}, recipe=None, source="model",
                     kind="plugin")
    fingerprint = {"spec_sha256": loaded.sha256, "profiles": loaded.profiles, "reference_sha256": digest,
                   "model_kind": kind.name, "seed": s.measure.seed, "measure": s.measure.model_dump(mode="json"),
                   "workload": dict(s.workload or {}), "host": host_facts()}
    return assemble(run, devices, [p.note for p in placements if p.note], model=info, retention={},
                    fingerprint=fingerprint)


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


def _judge(s: QualifySpec, kind: KindDescriptor, p: Placement, row: Any, run: Run, record: bool,
           say: Any) -> DeviceResult:
    result = row.kind_bench if isinstance(row, KindQualifyRow) else None
    if result is None:
        error = f"{row.error_kind}: {row.error}"
        return DeviceResult(label=p.label, target=p.target, runner=p.runner_name, status="error", error=error,
                            error_kind=str(row.error_kind), passed=False, gates=error_rows(s, p.label, error))
    gates = [metric_gate(name, g, result, kind, p.label) for name, g in metric_gates(s)]
    mismatch = target_row(p.label, result.target_mismatch, result.target, allowed=s.allow_target_mismatch)
    gates = with_target_row(gates, mismatch, p.label, say)
    passed = all_pass(gates) and result.valid
    run_id = None
    if record and run.store is not None:
        run_id = run.store.record_kind(result, kind="qualify", device=p.label, verdict="pass" if passed else "fail",
                                       group_id=run.group_id, label=s.name).id
    say_verdict(say, p.label, gates, passed)
    return DeviceResult(label=p.label, target=p.target, runner=p.runner_name, status="ok", passed=passed,
                        kind_bench=result, gates=gates, history_run_id=run_id)
