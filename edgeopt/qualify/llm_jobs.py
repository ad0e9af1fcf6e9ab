"""An LLM spec's devices as fleet jobs: the generative bench of the qualified folder on one placement.

The LLM counterpart of :class:`~edgeopt.qualify.device_jobs.QualifyJob`: plain picklable data in (the placement,
the folder by content hash, the workload and energy settings), the device's :class:`LlmBenchResult` out; the gates
and the history record are the driver's (:mod:`.llm_engine`). The runner, the deadline watchdog and the error
classification are :class:`~edgeopt.qualify.device_jobs.OnPlacement`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..bench.llm.result import LlmBenchResult
from ..bench.llm.workload import LlmWorkload
from ..fleet.artifacts import ModelRef
from ..fleet.jobs import CancelToken, EventSink
from ..fleet.result import DeviceOutcome, ErrorKind
from ..runners import Runner
from ..settings import EnergySettings
from .device_jobs import OnPlacement, _log
from .placement import Placement


class LlmQualifyRow(DeviceOutcome):
    """One device's generative bench as a fleet row."""

    llm: LlmBenchResult | None = Field(default=None, description="The bench of the qualified folder (null on error).")


@dataclass(frozen=True)
class LlmQualifyJob(OnPlacement[LlmQualifyRow]):
    """``bench_llm`` of the qualified folder on one placement (a fleet job); attributes as QualifyJob's."""

    placement: Placement
    model: ModelRef
    workload: LlmWorkload
    energy: EnergySettings
    deadline_s: float
    model_label: str = ""
    runtime: str | None = None
    targets_dirs: Sequence[Path] = ()

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> LlmQualifyRow:
        return LlmQualifyRow(**self.row_fields(), status="error", error=message, error_kind=kind,
                             seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> LlmQualifyRow:
        def ok(result: LlmBenchResult, seconds: float) -> LlmQualifyRow:
            if self.model_label:
                result = result.model_copy(update={"model_path": self.model_label})
            return LlmQualifyRow(**self.row_fields(), status="ok", seconds=seconds, llm=result)

        return self.guarded(blobs, progress, cancel, lambda runner, folder: self._bench(runner, folder, progress), ok)

    def _bench(self, runner: Runner, folder: Path, progress: EventSink | None) -> LlmBenchResult:
        from ..bench.llm import bench_llm  # the heavy stack loads on the worker, once

        p = self.placement
        _log(progress, f"{p.label}: generative bench of {folder.name} on {p.target} ({p.runner_name})")
        return bench_llm(folder, self.workload, runtime=self.runtime, runner=runner, progress=progress,
                         target=p.target, energy=self.energy, targets_dirs=self.targets_dirs)
