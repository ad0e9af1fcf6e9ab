"""``fleet_benchmark``: one model on many devices at once, one row per device plus the fleet's view."""

from __future__ import annotations

import datetime as _dt
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._version import __version__
from ...errors import InputError
from ...fleet.artifacts import ModelRef
from ...fleet.devices import FleetDevice, fleet_selection, resolve_devices
from ...fleet.executors import DeviceEvents, Executor
from ...fleet.jobs import BenchJob
from ...fleet.record import record_each
from ...fleet.result import DeviceOutcome, FleetResult, FleetRow, fleet_exit_code
from ...fleet.runner import FleetRunner
from ...registry import find_runtime
from ...settings import MEASURE_KEYWORDS, MeasureSettings, RemoteSpec
from .aggregate import DEFAULT_OUTLIER_PCT, aggregate

if TYPE_CHECKING:
    from ...history import HistoryStore

# Beyond the timed phase's watchdog (max_duration_s): connect, upload, lock wait, load, warm-up, fetch.
DEADLINE_MARGIN_S = 300.0


def default_deadline_s(max_duration_s: float = 600.0) -> float:
    """A device's deadline when none is given: its timed phase's watchdog plus a margin for the rest."""
    return float(max_duration_s) + DEADLINE_MARGIN_S


def measure_settings(settings: MeasureSettings | None, options: dict[str, Any]) -> MeasureSettings:
    """``settings``, or :func:`edgeopt.benchmark`'s flat measurement keywords as settings (not both).

    Raises:
        InputError: both given, an option that is not a measurement setting, or a bad value.
    """
    unknown = sorted(set(options) - MEASURE_KEYWORDS)
    if unknown:
        raise InputError(f"fleet_benchmark: '{unknown[0]}' is not a measurement option (the fleet sets the runner, "
                         f"device and progress itself); known: {', '.join(sorted(MEASURE_KEYWORDS))}")
    if settings is not None and options:
        raise InputError(f"fleet_benchmark: pass settings= or the flat options ({', '.join(sorted(options))}), "
                         "not both")
    return settings if settings is not None else MeasureSettings.from_kwargs(**options)


def fleet_benchmark(
    model: str | Path,
    *,
    devices: str | Sequence[str | FleetDevice],
    jobs: int | None = None,
    executor: str | Executor = "local",
    deadline_s: float | None = None,
    settings: MeasureSettings | None = None,
    remote: RemoteSpec | None = None,
    target: str | None = None,
    targets_dirs: Sequence[Path] = (),
    progress: DeviceEvents | None = None,
    history_db: str | Path | None = None,
    record: bool = False,
    outlier_pct: float = DEFAULT_OUTLIER_PCT,
    **options: Any,
) -> FleetResult:
    """Benchmark ``model`` on every selected device in parallel.

    Args:
        model: the model file (as for :func:`edgeopt.benchmark`).
        devices: a selection (``"tag:rpi5,pi5-*"``, names, globs; docs/fleet.md) or :class:`FleetDevice` objects.
        jobs: devices measured at the same time at most (None: all).
        executor: ``local`` (threads, default), ``ray``, ``ray://HOST:PORT``, or an executor object.
        deadline_s: per-device deadline from the start of its job (None: ``max_duration_s`` + 300 s).
        settings: how every device measures (None: from the flat measurement keywords in ``options``).
        remote: inventory, key, interpreter, known_hosts, host-key policy, SSH deadlines and device cache size for
            every device (``host``/``device`` unset; RemoteSpec keywords in ``options`` override it).
        target: target for every device (None: each device's own).
        targets_dirs: extra target directories.
        progress: receives ``(device, event)`` (e.g. :class:`edgeopt.fleet.FleetProgress`).
        history_db: results history file; record: store each device's run there, grouped by the fleet run.
        outlier_pct: a device this far (%) from the fleet's median p50 or p99 is an outlier.
        **options: :func:`edgeopt.benchmark`'s measurement keywords (iterations, fps, runtime, ...) and the
            :class:`~edgeopt.settings.RemoteSpec` ones (inventory, key, python, known_hosts, timeouts, ...).

    Returns:
        The fleet result; ``exit_code`` 3 only when every device failed to run.

    Raises:
        InputError: bad model, selection, options, or input that every device rejected alike (exit 2).
    """
    remote_opts = {k: options.pop(k) for k in list(options) if k in RemoteSpec.model_fields}
    measure = measure_settings(settings, options)
    runtime = find_runtime(measure.runtime) if measure.runtime is not None else None
    if runtime is not None:  # a typo fails here, not once per device after its connection
        runtime.check_options(measure.runtime_options)
    ref = ModelRef.of(model)
    selected = resolve_devices(devices, remote, **remote_opts)
    deadline = checked_deadline_s(deadline_s, measure.max_duration_s)
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    fleet_id = uuid.uuid4().hex[:12]
    started, started_at = time.perf_counter(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    raw_rows = fleet.map(lambda d: BenchJob(d, ref, measure, deadline, target, tuple(targets_dirs)))
    rows = [r for r in raw_rows if isinstance(r, FleetRow)]
    refuse_input_everywhere(rows)
    rows, agg = aggregate(rows, outlier_pct=outlier_pct)
    warnings = [f"{r.device}: {w}" for r in rows for w in r.warnings]  # never lost in a fleet's output
    if record:
        rows = record_rows(rows, history_db, fleet_id=fleet_id, label=f"fleet {','.join(fleet_selection(devices))}",
                           warnings=warnings)
    return FleetResult(
        edgeopt_version=__version__, fleet_id=fleet_id, model=str(ref.path), model_sha256=ref.key,
        selection=fleet_selection(devices), executor=fleet.executor.name, jobs=fleet.jobs, deadline_s=deadline,
        started_at=started_at, seconds=round(time.perf_counter() - started, 3), rows=rows, aggregate=agg,
        warnings=warnings, exit_code=fleet_exit_code(rows),
    )


def record_rows(rows: list[FleetRow], history_db: str | Path | None, *, fleet_id: str, label: str,
                warnings: list[str]) -> list[FleetRow]:
    """Store every device's run in the history with ``group_id=fleet_id``; rows get their run ids.

    A history that cannot be written is a warning, never a lost measurement.
    """
    def save(store: HistoryStore, row: FleetRow) -> int | None:
        res = row.result
        if res is None:
            return None
        verdict = None if res.fps_budget is None and res.valid else ("pass" if res.passed else "fail")
        return store.record(res, kind="bench", device=row.device, verdict=verdict, group_id=fleet_id,
                            label=label).id

    return record_each(rows, history_db, warnings, save)


def checked_deadline_s(deadline_s: float | None, max_duration_s: float) -> float:
    """``--deadline`` (default: the run's watchdog plus the margin) as a positive number of seconds.

    Raises:
        InputError: a deadline <= 0.
    """
    deadline = float(deadline_s) if deadline_s is not None else default_deadline_s(max_duration_s)
    if deadline <= 0:
        raise InputError(f"--deadline {deadline:g}: give each device a positive number of seconds")
    return deadline


def refuse_input_everywhere(rows: Sequence[DeviceOutcome]) -> None:
    """Input every device rejected alike is the caller's error, not the fleet's.

    Raises:
        InputError: every row is an ``input`` error (the first one's message).
    """
    if rows and all(r.error_kind == "input" for r in rows):
        raise InputError(str(rows[0].error))
