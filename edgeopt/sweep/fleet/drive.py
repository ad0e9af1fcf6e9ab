"""How a fleet sweep (ONNX or LLM) drives its executor: the host side, then one measuring job per device.

Both run in one executor session that offers every selected device's resource (:meth:`Executor.session`): under
Ray the cluster is joined, or started with an ``edgeopt-device:NAME`` resource per device, before the host side
runs, so a missing Ray or a cluster that cannot be joined fails the run before minutes of building; the host
side's CPU tasks (the ONNX sweep's recipes) run on it; and each device job then holds its device's resource for
as long as it measures (:class:`~edgeopt.fleet.executors.ray_exec.RayExecutor`), so two jobs never measure one
device at once. The local executor has nothing to keep up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ...errors import InputError
from ...fleet.devices import FleetDevice
from ...fleet.jobs import DeviceJob
from ...fleet.result import DeviceOutcome
from ...fleet.runner import FleetRunner

B = TypeVar("B")
R = TypeVar("R", bound=DeviceOutcome)


def device_deadline(deadline_s: float | None, default_s: float) -> float:
    """Each device's deadline (``default_s`` when not given).

    Raises:
        InputError: it is not positive.
    """
    deadline = float(deadline_s) if deadline_s is not None else default_s
    if deadline <= 0:
        raise InputError(f"--deadline {deadline:g}: give each device a positive number of seconds")
    return deadline


def sweep_devices(fleet: FleetRunner, host_side: Callable[[], B], make_job: Callable[[FleetDevice, B], DeviceJob],
                  row_type: type[R]) -> tuple[B, list[R]]:
    """``host_side()`` once, then ``make_job(device, its result)`` on every device, in one executor session.

    Returns:
        The host side's result and the rows (``row_type``, in device order).

    Raises:
        InputError: every device refused the sweep's input (the same bad input everywhere is the caller's
            mistake, exit 2, not a fleet of failed devices).
    """
    with fleet.executor.session({d.resource: 1.0 for d in fleet.devices}):
        bundle = host_side()
        raw = fleet.map(lambda device: make_job(device, bundle))
    rows = [r for r in raw if isinstance(r, row_type)]
    if rows and all(r.error_kind == "input" for r in rows):
        raise InputError(str(rows[0].error))
    return bundle, rows
