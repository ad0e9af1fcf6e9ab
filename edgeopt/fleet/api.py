"""``edgeopt.fleet_benchmark``: one model on many devices at once, one row per device plus the fleet's view."""

from __future__ import annotations

import datetime as _dt
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import InputError
from ..runners.ssh_session import SshTimeouts
from .aggregate import DEFAULT_OUTLIER_PCT, aggregate
from .artifacts import ModelRef
from .devices import FleetDevice, fleet_devices
from .executors import DeviceEvents, Executor
from .jobs import BenchJob
from .result import FleetResult, FleetRow, fleet_exit_code
from .runner import FleetRunner

# Beyond the timed phase's watchdog (max_duration_s): connect, upload, lock wait, load, warm-up, fetch.
DEADLINE_MARGIN_S = 300.0
# benchmark() arguments a fleet sets itself, per device.
_FLEET_OWNED = ("runner", "progress", "host", "device", "key", "python", "inventory", "known_hosts",
                "accept_new_host_key", "target", "targets_dirs")
# The measurement options of edgeopt.benchmark a fleet passes through unchanged to every device (a unit test
# keeps this list equal to benchmark()'s keyword arguments minus _FLEET_OWNED).
BENCH_OPTIONS = frozenset({
    "fps", "use_target_fps", "percentile", "iterations", "min_duration_s", "max_duration_s", "warmup", "warmup_s",
    "threads", "streams", "batch", "seed", "shapes", "inputs", "runtime", "runtime_options", "keep_samples",
    "energy", "power_sensor", "sysfs_root", "power_rate_hz", "power_idle_s", "vcgencmd", "pacing_fps",
})


def default_deadline_s(max_duration_s: float = 600.0) -> float:
    """A device's deadline when none is given: its timed phase's watchdog plus a margin for the rest."""
    return float(max_duration_s) + DEADLINE_MARGIN_S


def _bench_options(options: dict[str, Any]) -> dict[str, Any]:
    known = BENCH_OPTIONS
    for name in options:
        if name in _FLEET_OWNED:
            raise InputError(f"fleet_benchmark: '{name}' is set per device by the fleet; pass devices=/inventory= "
                             "and the fleet's own arguments instead")
        if name not in known:
            raise InputError(f"fleet_benchmark: unknown benchmark option '{name}'; known: {', '.join(sorted(known))}")
    return options


def fleet_benchmark(
    model: str | Path,
    *,
    devices: str | Sequence[str | FleetDevice],
    jobs: int | None = None,
    executor: str | Executor = "local",
    deadline_s: float | None = None,
    inventory: str | Path | None = None,
    key: str | Path | None = None,
    python: str | None = None,
    known_hosts: str | Path | None = None,
    accept_new_host_key: bool = False,
    timeouts: SshTimeouts | None = None,
    target: str | None = None,
    targets_dirs: Sequence[Path] = (),
    progress: DeviceEvents | None = None,
    history_db: str | Path | None = None,
    record: bool = False,
    outlier_pct: float = DEFAULT_OUTLIER_PCT,
    **bench_options: Any,
) -> FleetResult:
    """Benchmark ``model`` on every selected device in parallel.

    Args:
        model: the model file (as for :func:`edgeopt.benchmark`).
        devices: a selection (``"tag:rpi5,pi5-*"``, names, globs; docs/fleet.md) or :class:`FleetDevice` objects.
        jobs: devices measured at the same time at most (None: all).
        executor: ``local`` (threads, default), ``ray``, ``ray://HOST:PORT``, or an executor object.
        deadline_s: per-device deadline from the start of its job (None: ``max_duration_s`` + 300 s).
        inventory, key, python, known_hosts, accept_new_host_key, timeouts: as for a single remote device.
        target: target for every device (None: each device's own).
        targets_dirs: extra target directories.
        progress: receives ``(device, event)`` (e.g. :class:`edgeopt.fleet.FleetProgress`).
        history_db: results history file; record: store each device's run there, grouped by the fleet run.
        outlier_pct: a device this far (%) from the fleet's median p50 or p99 is an outlier.
        **bench_options: every other :func:`edgeopt.benchmark` option (iterations, fps, runtime, ...).

    Returns:
        The fleet result; ``exit_code`` 3 only when every device failed to run.

    Raises:
        InputError: bad model, selection, options, or input that every device rejected alike (exit 2).
    """
    options = _bench_options(dict(bench_options))
    ref = ModelRef.of(model)
    selected = resolve_devices(devices, inventory=inventory, key=key, python=python, known_hosts=known_hosts,
                               accept_new_host_key=accept_new_host_key, timeouts=timeouts)
    deadline = float(deadline_s) if deadline_s is not None else default_deadline_s(options.get("max_duration_s", 600))
    if deadline <= 0:
        raise InputError(f"--deadline {deadline:g}: give each device a positive number of seconds")
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    fleet_id = uuid.uuid4().hex[:12]
    started, started_at = time.perf_counter(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    raw_rows = fleet.map(lambda d: BenchJob(d, ref, options, deadline, target, tuple(targets_dirs)))
    rows = [r for r in raw_rows if isinstance(r, FleetRow)]
    if rows and all(r.error_kind == "input" for r in rows):
        raise InputError(str(rows[0].error))
    rows, agg = aggregate(rows, outlier_pct=outlier_pct)
    warnings: list[str] = []
    if record:
        rows = record_rows(rows, history_db, fleet_id=fleet_id, label=f"fleet {','.join(fleet_selection(devices))}",
                           warnings=warnings)
    return FleetResult(
        edgeopt_version=__version__, fleet_id=fleet_id, model=str(ref.path), model_sha256=ref.key,
        selection=fleet_selection(devices), executor=fleet.executor.name, jobs=fleet.jobs, deadline_s=deadline,
        started_at=started_at, seconds=round(time.perf_counter() - started, 3), rows=rows, aggregate=agg,
        warnings=warnings, exit_code=fleet_exit_code(rows),
    )


def resolve_devices(devices: str | Sequence[str | FleetDevice], **remote: Any) -> list[FleetDevice]:
    """Device objects as they are; a selection (string or terms) resolved against the inventory.

    Args:
        devices: ``FleetDevice`` objects, or selection terms.
        **remote: ``inventory``, ``key``, ``python``, ``known_hosts``, ``accept_new_host_key``, ``timeouts``.

    Raises:
        InputError: a mix of both kinds, or a selection that matches nothing.
    """
    if isinstance(devices, str):
        return fleet_devices(devices, **remote)
    items = list(devices)
    objects = [d for d in items if isinstance(d, FleetDevice)]
    if objects and len(objects) != len(items):
        raise InputError("devices: give either FleetDevice objects or selection strings, not both")
    return objects or fleet_devices([str(d) for d in items], **remote)


def fleet_selection(devices: str | Sequence[str | FleetDevice]) -> list[str]:
    """The selection as a list of terms (device names for device objects)."""
    if isinstance(devices, str):
        return [w.strip() for w in devices.split(",") if w.strip()]
    return [d.name if isinstance(d, FleetDevice) else str(d) for d in devices]


def record_rows(rows: list[FleetRow], history_db: str | Path | None, *, fleet_id: str, label: str,
                warnings: list[str]) -> list[FleetRow]:
    """Store every device's run in the history with ``group_id=fleet_id``; rows get their run ids.

    A history that cannot be written is a warning, never a lost measurement.
    """
    from ..history import HistoryError, open_store

    try:
        store = open_store(history_db)
    except HistoryError as exc:
        warnings.append(f"runs not recorded in the history: {exc}")
        return rows
    out = []
    for row in rows:
        if row.result is not None:
            res = row.result
            verdict = None if res.fps_budget is None and res.valid else ("pass" if res.passed else "fail")
            try:
                run = store.record(res, kind="bench", device=row.device, verdict=verdict, group_id=fleet_id,
                                   label=label)
                row = row.model_copy(update={"history_run_id": run.id})
            except HistoryError as exc:
                warnings.append(f"{row.device}: run not recorded in the history: {exc}")
        out.append(row)
    return out
