"""``edgeopt bench LLM_FOLDER --devices SEL``: one generative bench per device, in parallel, one row each.

The LLM counterpart of :func:`edgeopt.bench.fleet.fleet_benchmark`: the same device selection, executors
(threads, Ray), ``--jobs``, per-device deadline (its SSH session aborted past it) and error classes (a dead or
unreachable board costs its own row only); the job runs :func:`~edgeopt.bench.llm.bench_llm` through the device's
SSH runner (the folder is uploaded once into the device's content-keyed cache). A device passes when every cell
of its result is valid. Documented in docs/llm-bench.md ("Fleet").
"""

from __future__ import annotations

import datetime as _dt
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ..._version import __version__
from ...errors import ExitCode, InputError
from ...fleet.artifacts import ModelRef
from ...fleet.devices import FleetDevice, fleet_selection, resolve_devices
from ...fleet.executors import DeviceEvents, Executor
from ...fleet.jobs import CancelToken, EventSink, OnFleetDevice, guarded, watched
from ...fleet.record import record_each
from ...fleet.result import DeviceOutcome, ErrorKind
from ...fleet.runner import FleetRunner
from ...registry.kind_spec import GENERATIVE
from ...registry.lookup import format_of_kind
from ...settings import EnergySettings, RemoteSpec
from ..fleet.api import checked_deadline_s, refuse_input_everywhere
from .result import LlmBenchResult, _Frozen
from .workload import LlmWorkload

if TYPE_CHECKING:
    from ...history import HistoryStore



class LlmFleetRow(DeviceOutcome):
    """One device of an LLM fleet bench."""

    result: LlmBenchResult | None = Field(default=None, description="The device's result (null on error).")
    history_run_id: int | None = None

    @property
    def passed(self) -> bool:
        return self.status == "ok" and self.result is not None and self.result.valid


class LlmFleetResult(_Frozen):
    """Every device's generative bench of one LLM folder."""

    kind: str = "llm_fleet_bench"
    edgeopt_version: str
    fleet_id: str
    model: str
    model_sha256: str
    selection: list[str]
    executor: str
    jobs: int
    deadline_s: float
    started_at: str
    seconds: float
    rows: list[LlmFleetRow]
    warnings: list[str] = Field(default_factory=list)
    exit_code: int = Field(description="0 every device valid; 1 a device invalid or could not run; 3 none ran.")

    def without_samples(self) -> LlmFleetResult:
        return self.model_copy(update={"rows": [r if r.result is None else r.model_copy(
            update={"result": r.result.without_samples()}) for r in self.rows]})


@dataclass(frozen=True)
class LlmBenchJob(OnFleetDevice):
    """``bench_llm`` of one folder on one device (a fleet job)."""

    device: FleetDevice
    model: ModelRef
    workload: LlmWorkload
    energy: EnergySettings = field(default_factory=EnergySettings)
    deadline_s: float = 900.0
    runtime: str | None = None
    runtime_options: Mapping[str, Any] = field(default_factory=dict)
    target: str | None = None
    targets_dirs: Sequence[Path] = ()

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> LlmFleetRow:
        return LlmFleetRow(**self.row_fields(), status="error", error=message, error_kind=kind,
                           seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> LlmFleetRow:
        from .api import bench_llm

        def ok(result: LlmBenchResult, seconds: float) -> LlmFleetRow:
            if blobs is not None:  # a copy from the object store: report the folder under its host path
                result = result.model_copy(update={"model_path": str(self.model.path)})
            return LlmFleetRow(**self.row_fields(), status="ok", seconds=seconds, result=result)

        return guarded(self, self.device.name, watched(self.device.runner(), self.deadline_s, cancel),
                       lambda runner: bench_llm(self.model.locate(blobs), self.workload, runtime=self.runtime,
                                                runtime_options=self.runtime_options, runner=runner,
                                                progress=progress, target=self.target or self.device.target,
                                                energy=self.energy, targets_dirs=self.targets_dirs), ok)


def fleet_llm_benchmark(folder: str | Path, *, devices: str | Sequence[str | FleetDevice], workload: LlmWorkload,
                        jobs: int | None = None, executor: str | Executor = "local", deadline_s: float | None = None,
                        remote: RemoteSpec | None = None, runtime: str | None = None,
                        runtime_options: Mapping[str, Any] | None = None, energy: EnergySettings | None = None,
                        target: str | None = None, targets_dirs: Sequence[Path] = (),
                        progress: DeviceEvents | None = None, history_db: str | Path | None = None,
                        record: bool = False, **remote_options: Any) -> LlmFleetResult:
    """Bench the LLM ``folder`` on every selected device in parallel (arguments as ``fleet_benchmark``'s).

    Raises:
        InputError: not an LLM folder, a bad selection, or input every device rejected alike (exit 2).
    """
    if format_of_kind(folder, GENERATIVE, deployable=True) is None:
        raise InputError(f"{folder} is not an LLM folder (onnxruntime-genai or OpenVINO GenAI)")
    ref = ModelRef.of(folder)
    selected = resolve_devices(devices, remote, **remote_options)
    deadline = checked_deadline_s(deadline_s, workload.max_duration_s)
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    fleet_id = uuid.uuid4().hex[:12]
    started, started_at = time.perf_counter(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    rows = [r for r in fleet.map(lambda d: LlmBenchJob(d, ref, workload, energy or EnergySettings(), deadline,
                                                       runtime, dict(runtime_options or {}), target,
                                                       tuple(targets_dirs)))
            if isinstance(r, LlmFleetRow)]
    refuse_input_everywhere(rows)
    warnings: list[str] = []
    if record:
        rows = _record(rows, history_db, fleet_id, f"fleet {','.join(fleet_selection(devices))}", warnings)
    code = ExitCode.DEVICE if rows and all(r.status == "error" for r in rows) else \
        ExitCode.GATE_FAILED if any(not r.passed for r in rows) else ExitCode.OK
    return LlmFleetResult(edgeopt_version=__version__, fleet_id=fleet_id, model=str(ref.path), model_sha256=ref.key,
                          selection=fleet_selection(devices), executor=fleet.executor.name, jobs=fleet.jobs,
                          deadline_s=deadline, started_at=started_at, seconds=round(time.perf_counter() - started, 3),
                          rows=rows, warnings=warnings, exit_code=int(code))


def _record(rows: list[LlmFleetRow], history_db: str | Path | None, fleet_id: str, label: str,
            warnings: list[str]) -> list[LlmFleetRow]:
    """Each device's run in the history (``group_id`` = the fleet run); a history error is a warning."""
    def save(store: HistoryStore, row: LlmFleetRow) -> int | None:
        if row.result is None:
            return None
        return store.record(row.result, kind="bench", device=row.device, group_id=fleet_id, label=label,
                            verdict=None if row.result.valid else "fail").id

    return record_each(rows, history_db, warnings, save)
