"""An LLM spec's devices as fleet jobs: the generative bench of the qualified folder on one placement.

The LLM counterpart of :class:`~edgeopt.qualify.device_jobs.QualifyJob`: plain picklable data in (the placement,
the folder by content hash, the workload and energy settings), the device's :class:`LlmBenchResult` out; the gates
and the history record are the driver's (:mod:`.llm_engine`). The runner, the deadline watchdog and the error
classification are QualifyJob's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..bench.llm.result import LlmBenchResult
from ..bench.llm.workload import LlmWorkload
from ..fleet.artifacts import ModelRef
from ..fleet.jobs import CancelToken, EventSink, classify
from ..fleet.result import DeviceOutcome, ErrorKind
from ..settings import EnergySettings
from .device_jobs import _log, _runner
from .placement import Placement


class LlmQualifyRow(DeviceOutcome):
    """One device's generative bench as a fleet row."""

    llm: LlmBenchResult | None = Field(default=None, description="The bench of the qualified folder (null on error).")


@dataclass(frozen=True)
class LlmQualifyJob:
    """``bench_llm`` of the qualified folder on one placement (a fleet job); attributes as QualifyJob's."""

    placement: Placement
    model: ModelRef
    workload: LlmWorkload
    energy: EnergySettings
    deadline_s: float
    model_label: str = ""
    runtime: str | None = None
    targets_dirs: Sequence[Path] = ()

    @property
    def device(self) -> Placement:
        return self.placement

    def model_ref(self) -> ModelRef:
        return self.model

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> LlmQualifyRow:
        p = self.placement
        return LlmQualifyRow(device=p.label, target=p.target, runner=p.runner_name, status="error", error=message,
                             error_kind=kind, seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> LlmQualifyRow:
        from ..bench.llm import bench_llm  # the heavy stack loads on the worker, once

        started = time.perf_counter()
        p = self.placement
        with _runner(p, self.deadline_s, cancel) as (runner, dog, connected):
            try:
                folder = self.model.locate(blobs)
                _log(progress, f"{p.label}: generative bench of {folder.name} on {p.target} ({p.runner_name})")
                result = bench_llm(folder, self.workload, runtime=self.runtime, runner=runner, progress=progress,
                                   target=p.target, energy=self.energy, targets_dirs=self.targets_dirs)
            except Exception as exc:  # this device's problem is this device's row, never another's
                kind, message = classify(exc, p.label, connected=connected(), fired=dog.fired if dog else None,
                                         deadline_s=self.deadline_s)
                _log(progress, f"{p.label}: {kind} error: {message}")
                return self.error_row(kind, message, time.perf_counter() - started)
        if self.model_label:
            result = result.model_copy(update={"model_path": self.model_label})
        return LlmQualifyRow(device=p.label, target=p.target, runner=p.runner_name, status="ok",
                             seconds=round(time.perf_counter() - started, 3), llm=result)
