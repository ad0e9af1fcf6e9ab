"""One device's part of a fleet sweep: every level measured there through that device's own runner.

The job reads the bundle the host built once (:mod:`.host`: the model, the eval data, every recipe's
artifacts for the device's target) and runs the sweep's device-side work on the device, under its device lock
(the agent takes it per request), with its own deadline (the watchdog aborts its SSH session) and its own
output directory. Whatever goes wrong comes back as its row, never as another device's.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...fleet.artifacts import ModelRef
from ...fleet.devices import FleetDevice
from ...fleet.jobs import CancelToken, EventSink, Watchdog, _now, classify
from ...fleet.result import ErrorKind
from ...settings import MeasureSettings
from ..api import LevelRuns, SweepOptions
from ..result import SweepResult
from .host import EVAL_FILE, Bundle
from .result import FleetSweepRow

# Where a worker that does not share the host's paths keeps a device's sweep output: <tmp>/<this>/<key>/<device>
WORKER_OUT_DIRNAME = "edgeopt-fleet-sweeps"


def level_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """A sweep progress event as a fleet progress ``phase`` (one line per device), or None to drop it."""
    if event.get("event") == "level":
        return {"event": "phase", "phase": f"level {event.get('recipe')}/{event.get('runtime')} "
                                           f"retention {float(event.get('retention') or 0):.4f}"}
    if event.get("event") == "info":
        return {"event": "phase", "phase": str(event.get("message", ""))[:80]}
    return None


@dataclass(frozen=True)
class SweepJob:
    """``edgeopt sweep`` of the bundle's model on one device.

    Attributes:
        device: the device (its runner is built where the job runs).
        bundle: the host side's output, by content hash.
        options: the sweep's options (eval data, calibration and output directory are replaced per job).
        measure: every level's benchmark settings.
        target: the device's target (the bundle holds artifacts for it).
        out_dir: the device's output directory on the host (used where the worker shares the host's paths).
        deadline_s: the device's deadline, from the moment the job starts.
        targets_dirs: extra target directories.
    """

    device: FleetDevice
    bundle: Bundle
    options: SweepOptions
    measure: MeasureSettings
    target: str
    out_dir: Path
    deadline_s: float = 3600.0
    targets_dirs: tuple[Path, ...] = ()

    def model_ref(self) -> ModelRef:
        return self.bundle.ref

    def _base(self) -> dict[str, Any]:
        return {"device": self.device.name, "target": self.target,
                "runner": f"ssh:{self.device.address.label()}", "tags": list(self.device.tags)}

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> FleetSweepRow:
        return FleetSweepRow(**self._base(), status="error", error=message, error_kind=kind,
                             seconds=round(seconds, 3))

    def _options(self, root: Path, shared: bool) -> SweepOptions:
        out = self.out_dir if shared else (Path(tempfile.gettempdir()) / WORKER_OUT_DIRNAME / self.bundle.ref.key[:16]
                                           / self.device.name)
        return self.options.model_copy(update={
            "eval_data": root / EVAL_FILE, "calib": root / self.bundle.calib if self.bundle.calib else None,
            "out_dir": out, "eval_limit": None, "history_db": None})

    def _sweep(self, root: Path, shared: bool, runner: Any,
               progress: EventSink | None) -> tuple[SweepResult, LevelRuns]:
        from ...targets import load_registry
        from ..api import measure_sweep  # the heavy stack loads on the worker, once

        def emit(event: dict[str, Any]) -> None:
            shown = level_event(event)
            if progress is not None and shown is not None:
                progress(shown)

        tgt = load_registry(extra_dirs=self.targets_dirs).get(self.target)
        return measure_sweep(root / self.bundle.model, self._options(root, shared), self.measure, tgt, runner,
                             progress=emit, targets_dirs=self.targets_dirs,
                             prebuilt=self.bundle.for_target(self.target, root),
                             gains_dir=self.out_dir.parent.parent / "int8-gains" if shared else None,
                             device=self.device.name)

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> FleetSweepRow:
        started, started_at = time.perf_counter(), _now()
        runner = self.device.runner()
        with Watchdog(runner, self.deadline_s, cancel) as dog:
            try:
                result, runs = self._sweep(self.bundle.ref.locate(blobs), blobs is None, runner, progress)
            except Exception as exc:  # every failure of this device becomes its row, never another device's
                kind, message = classify(exc, self.device.name, connected=runner.connected, fired=dog.fired,
                                         deadline_s=self.deadline_s)
                row = self.error_row(kind, message, time.perf_counter() - started)
                return row.model_copy(update={"started_at": started_at})
            finally:
                runner.close()
        rec = result.recommendation
        return FleetSweepRow(**self._base(), status="ok", seconds=round(time.perf_counter() - started, 3),
                             started_at=started_at, result=result,
                             recommendation=f"{rec.recipe}/{rec.runtime}" if rec is not None else None,
                             level_runs=runs)
