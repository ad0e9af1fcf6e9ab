"""The pieces of the qualification flow (:mod:`.flow`) around the measurements, whatever the kind of model.

Why one place: whatever the model, a qualification places devices, runs at most ``--jobs`` of them at once, turns
a device that could not run into errored gates, says each device's verdict the same way and assembles the same
:class:`QualifyResult` (reports, JUnit and exit codes read it without knowing the kind). The kinds' plans
(:mod:`.engine`, :mod:`.llm_engine`, :mod:`.kind_engine`) keep only how they measure and which gates they judge.
"""

from __future__ import annotations

import datetime as _dt
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import InputError
from ..fleet.result import DeviceOutcome
from ..history import HistoryStore
from .loader import LoadedSpec
from .placement import Placement
from .result import (
    DeviceResult,
    GateResult,
    GateStatus,
    ModelInfo,
    QualifyResult,
    RetentionResult,
    SweepPoint,
    exit_code_for,
)


def default_report_dir(name: str) -> Path:
    """``out/qualify/<spec name>`` under the current directory."""
    return Path("out") / "qualify" / name


@dataclass(frozen=True)
class Clock:
    """When a qualification started (wall clock for the result, monotonic for its duration)."""

    started: float = field(default_factory=time.perf_counter)
    started_at: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))

    def seconds(self) -> float:
        return round(time.perf_counter() - self.started, 3)


def parallel_jobs(jobs: int | None, count: int) -> int:
    """How many devices run at once: ``--jobs`` (default: every device at once).

    Raises:
        InputError: jobs < 1.
    """
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs {jobs}: run at least 1 device at a time (default: all at once)")
    return min(jobs or count, count)


def error_device(p: Placement, row: DeviceOutcome, rows: Callable[[str], list[GateResult]]) -> DeviceResult:
    """A device that could not run (unreachable, past its deadline): every gate an error (``rows``: the error's
    rows, from the message)."""
    error = f"{row.error_kind}: {row.error}"
    return DeviceResult(label=p.label, target=p.target, runner=p.runner_name, status="error", error=error,
                        error_kind=str(row.error_kind), passed=False, gates=rows(error))


def with_target_row(gates: list[GateResult], mismatch: GateResult | None, label: str,
                    say: Callable[[str], None]) -> list[GateResult]:
    """``gates`` plus the ``target`` row of hardware that is not its target's (said on the log), if any."""
    if mismatch is None:
        return gates
    say(f"{label}: {mismatch.detail}")
    return [*gates, mismatch]


def all_pass(gates: list[GateResult]) -> bool:
    return all(g.status is GateStatus.PASS for g in gates)


def say_verdict(say: Callable[[str], None], label: str, gates: list[GateResult], passed: bool) -> None:
    say(f"{label}: {'PASS' if passed else 'FAIL'} ({sum(g.status is GateStatus.PASS for g in gates)}/"
        f"{len(gates)} gates)")


@dataclass(frozen=True)
class Run:
    """What a qualification run has in hand before its result: where it writes, its history and its group."""

    loaded: LoadedSpec
    clock: Clock
    out_dir: Path
    store: HistoryStore | None
    group_id: str


def assemble(run: Run, devices: list[DeviceResult], warnings: list[str], *, model: ModelInfo,
             retention: dict[str, RetentionResult], fingerprint: dict[str, Any],
             sweep: list[SweepPoint] | None = None) -> QualifyResult:
    """The qualification's result (``reports`` empty: the API writes them); a warning when only some devices
    could not run."""
    failed = [d.label for d in devices if d.status == "error"]
    if failed and len(failed) < len(devices):
        warnings = [*warnings, f"could not run on {len(failed)} of {len(devices)} devices ({', '.join(failed)}): "
                               "their gates are errors; the other devices' verdicts stand"]
    loaded, s = run.loaded, run.loaded.spec
    return QualifyResult(
        edgeopt_version=__version__, name=s.name, description=s.description, spec_path=str(loaded.path),
        spec_sha256=loaded.sha256, profiles=loaded.profiles, spec=s.model_dump(mode="json"),
        started_at=run.clock.started_at, seconds=run.clock.seconds(), passed=all(d.passed for d in devices),
        exit_code=exit_code_for(devices), model=model, retention=retention, devices=devices, sweep=sweep,
        fingerprint=fingerprint, history_db=str(run.store.path) if run.store else None, group_id=run.group_id,
        report_dir=str(run.out_dir), reports={}, warnings=warnings,
    )


def host_facts(**versions: str) -> dict[str, str]:
    """The measuring host as a fingerprint names it, plus the library ``versions`` the engine depends on."""
    return {"hostname": platform.node(), "platform": platform.platform(), "machine": platform.machine(),
            "python": platform.python_version(), "edgeopt": __version__, **versions}
