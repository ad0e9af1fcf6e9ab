"""The one-pass sweep's part of a device job: every level measured there through that device's own runner.

The generic job (:class:`~.drive.FleetSweepJob`: deadline, runner, error rows) runs :class:`SweepMeasure` on the
device: the sweep's device-side work (:func:`~edgeopt.sweep.api.measure_sweep`) on the bundle the host built once
(:mod:`.host`: the model, the eval data, every recipe's artifacts for the device's target), under its device lock
(the agent takes it per request), into its own output directory, with the recommendation shipped and checked as
shipped through the same runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...runners import Runner
from ...settings import MeasureSettings
from ..options import SweepOptions
from .drive import OnDevice
from .host import EVAL_FILE, Bundle
from .rehome import WorkerOutput


def level_event(event: dict[str, Any]) -> dict[str, Any] | None:
    """A sweep progress event as a fleet progress ``phase`` (one line per device), or None to drop it."""
    if event.get("event") == "level":
        return {"event": "phase", "phase": f"level {event.get('recipe')}/{event.get('runtime')} "
                                           f"retention {float(event.get('retention') or 0):.4f}"}
    if event.get("event") == "info":
        return {"event": "phase", "phase": str(event.get("message", ""))[:80]}
    return None


@dataclass(frozen=True)
class SweepMeasure:
    """``edgeopt sweep`` of the bundle's model on one device (the ok row's ``result``, ``recommendation`` and
    ``level_runs``).

    Attributes:
        bundle: the host side's output.
        options: the sweep's options (eval data, calibration and output directory are replaced per device).
        measure: every level's benchmark settings.
        targets_dirs: extra target directories.
    """

    bundle: Bundle
    options: SweepOptions
    measure: MeasureSettings
    targets_dirs: tuple[Path, ...] = ()

    def __call__(self, on: OnDevice, runner: Runner) -> dict[str, Any]:
        from ...targets import load_registry
        from ..api import measure_sweep  # the heavy stack loads on the worker, once

        def emit(event: dict[str, Any]) -> None:
            shown = level_event(event)
            if on.progress is not None and shown is not None:
                on.progress(shown)

        options = self.options.model_copy(update={
            "eval_data": on.root / EVAL_FILE, "calib": on.root / self.bundle.calib if self.bundle.calib else None,
            "out_dir": on.out, "eval_limit": None, "history_db": None})
        tgt = load_registry(extra_dirs=self.targets_dirs).get(on.target)
        result, runs = measure_sweep(on.root / self.bundle.model, options, self.measure, tgt, runner,
                                     progress=emit, targets_dirs=self.targets_dirs,
                                     prebuilt=self.bundle.for_target(on.target, on.root),
                                     gains_dir=on.out.parent.parent / "int8-gains" if on.shared else None,
                                     device=on.device)
        rec = result.recommendation
        # a worker that does not share the host's paths: its deployment record (and the recommended level's files
        # where it built them) go back for the host to re-ship (.rehome)
        sent = None if on.shared else WorkerOutput.of(result, on.root, on.out)
        return {"result": result, "recommendation": f"{rec.recipe}/{rec.runtime}" if rec is not None else None,
                "level_runs": runs, "from_worker": sent}
