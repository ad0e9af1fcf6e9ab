"""The executor layer of the device lab: one job per device, in parallel, on a thread pool or on Ray
(docs/fleet.md).

The commands that run on it live beside their single-device commands: ``fleet_benchmark`` in
:mod:`edgeopt.bench.fleet`, ``fleet_sweep`` in :mod:`edgeopt.sweep.fleet`, ``fleet_check`` and ``setup_fleet`` in
:mod:`edgeopt.devices`; qualify runs its device jobs here too (``fleet.runner.run_jobs``).
"""

from .artifacts import ModelRef
from .devices import AbortableSshRunner, FleetDevice, fleet_devices, fleet_selection, resolve_devices
from .jobs import BenchJob, DeviceJob
from .progress import FleetProgress
from .result import DeviceOutcome, FleetAggregate, FleetResult, FleetRow, Outlier, Spread, fleet_exit_code
from .runner import FleetRunner

__all__ = [
    "AbortableSshRunner", "BenchJob", "DeviceJob", "DeviceOutcome", "FleetAggregate", "FleetDevice", "FleetProgress",
    "FleetResult", "FleetRow", "FleetRunner", "ModelRef", "Outlier", "Spread", "fleet_devices", "fleet_exit_code",
    "fleet_selection", "resolve_devices",
]
