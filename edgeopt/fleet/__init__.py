"""The device lab at scale: one job per device, in parallel, on a thread pool or on Ray (docs/fleet.md).

``fleet_benchmark(model, devices="tag:rpi5", jobs=8, executor="local")`` measures a model on every selected
inventory device at once and returns a :class:`FleetResult` (a row per device plus medians, spread and outliers).
``edgeopt.fleet.sweep_api.fleet_sweep`` sweeps a model on every selected device (the artifacts built once on the
host); it is not imported here, so ``import edgeopt.fleet`` stays light.
"""

from .aggregate import DEFAULT_OUTLIER_PCT, aggregate, conditions
from .api import default_deadline_s, fleet_benchmark, resolve_devices
from .artifacts import ModelRef
from .devices import AbortableSshRunner, FleetDevice, fleet_devices
from .jobs import BenchJob, DeviceJob
from .progress import FleetProgress
from .result import DeviceOutcome, FleetAggregate, FleetResult, FleetRow, Outlier, Spread, fleet_exit_code
from .runner import FleetRunner

__all__ = [
    "DEFAULT_OUTLIER_PCT", "AbortableSshRunner", "BenchJob", "DeviceJob", "DeviceOutcome", "FleetAggregate",
    "FleetDevice", "FleetProgress", "FleetResult", "FleetRow", "FleetRunner", "ModelRef", "Outlier", "Spread",
    "aggregate", "conditions", "default_deadline_s", "fleet_benchmark", "fleet_devices", "fleet_exit_code",
    "resolve_devices",
]
