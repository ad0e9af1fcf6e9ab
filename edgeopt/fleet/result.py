"""The typed result of a fleet run: a row per device, plus the unit-to-unit view a lab needs.

Schema (``--json``), documented in docs/fleet.md: ``FleetResult`` -> ``rows`` (one :class:`FleetRow` per
selected device, in inventory order, each with its ``BenchResult`` or its error) and ``aggregate`` (median of
the devices' p50/p99, spread, outliers with their likely causes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ExitCode
from ..metrics.result import BenchResult

FLEET_SCHEMA_VERSION = "1.0"

ErrorKind = Literal["unreachable", "trust", "deadline", "dependency", "input", "device", "internal"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeviceOutcome(_Frozen):
    """What one device's job came back with, whatever the job was."""

    device: str = Field(description="Inventory name.")
    target: str = Field(description="The device's target.")
    runner: str = Field(description="ssh:user@host:port.")
    tags: list[str] = Field(default_factory=list, description="The device's inventory tags.")
    status: Literal["ok", "error"] = Field(description="ok: the job finished; error: see error and error_kind.")
    error: str | None = Field(default=None, description="One-line message when status is error.")
    error_kind: ErrorKind | None = Field(
        default=None, description="unreachable (no connection), trust (its SSH host key is unknown and not "
                                  "accepted, or changed), deadline (stopped at the device's deadline), "
                                  "dependency (numpy or the runtime missing there), input, device (failed mid-run), "
                                  "internal.")
    seconds: float = Field(description="Wall time of the device's job, s.")
    started_at: str | None = Field(default=None, description="UTC ISO-8601 time the job started on its worker.")
    worker: str | None = Field(default=None, description="Where the job ran: thread, or ray:<node id prefix>.")


class FleetRow(DeviceOutcome):
    """One device of a fleet benchmark."""

    result: BenchResult | None = Field(default=None, description="The device's benchmark result (null on error).")
    conditions: list[str] = Field(default_factory=list,
                                  description="What the agent saw that can skew a number (governor, temperature, "
                                              "load, throttling).")
    history_run_id: int | None = Field(default=None, description="The run's id in the results history, when recorded.")
    verdict: str | None = Field(default=None, description="What the run was judged against: 'FAIL: p99 66.800 ms > "
                                "66.667 ms budget at 15 FPS', 'pass (no budget)', 'FAIL: invalid run (...)'.")
    warnings: list[str] = Field(default_factory=list,
                                description="The device's own warnings (target mismatch, invalid run, the result's "
                                            "warnings); also in the fleet result's warnings, prefixed by the device.")

    @property
    def passed(self) -> bool:
        return self.status == "ok" and self.result is not None and self.result.passed


class Spread(_Frozen):
    """One latency percentile across the devices that ran."""

    devices: int = Field(description="Devices with a result.")
    median_ms: float = Field(description="Median over the devices, ms.")
    min_ms: float = Field(description="Fastest device, ms.")
    max_ms: float = Field(description="Slowest device, ms.")
    cv: float | None = Field(description="Coefficient of variation (stdev / mean over devices); null below 2.")
    min_device: str = Field(description="Device with the minimum.")
    max_device: str = Field(description="Device with the maximum.")


class Outlier(_Frozen):
    """A device whose latency is far from the fleet's median."""

    device: str
    metric: Literal["p50", "p99"] = Field(description="Which percentile is off.")
    value_ms: float = Field(description="The device's value, ms.")
    fleet_median_ms: float = Field(description="The fleet's median of that percentile, ms.")
    deviation_pct: float = Field(description="(value - median) / median x 100; positive: slower than the fleet.")
    likely_causes: list[str] = Field(description="Conditions the agent saw on this device and not on most others.")


class FleetTally(_Frozen):
    """How many devices were selected and ran, and which could not: first in a fleet benchmark's aggregate and a
    fleet sweep's summary."""

    devices: int = Field(description="Devices selected.")
    ok: int = Field(description="Devices that returned a result.")
    failed: list[str] = Field(description="Devices that could not run (error rows), by name.")


class FleetAggregate(FleetTally):
    """The unit-to-unit view."""

    not_passed: list[str] = Field(description="Devices whose run was invalid or missed its FPS budget.")
    p50: Spread | None = Field(description="p50 latency across devices (null when none ran).")
    p99: Spread | None = Field(description="p99 latency across devices (null when none ran).")
    throughput_ips_median: float | None = Field(description="Median throughput over the devices, items/s.")
    outlier_threshold_pct: float = Field(description="A device this far from the median (either way) is an outlier.")
    outliers: list[Outlier] = Field(description="Devices far from the median, with their likely causes.")


class FleetRunHeader(_Frozen):
    """The run-level fields a fleet benchmark and a fleet sweep share, first in their JSON in this order
    (``schema_version`` first; each result sets its own version as the default)."""

    schema_version: str
    edgeopt_version: str
    fleet_id: str = Field(description="Id of this fleet run (the history's group_id of what its devices recorded).")
    model: str = Field(description="Model path on the host.")
    model_sha256: str = Field(description="Content hash of the model and its companion files.")
    selection: list[str] = Field(description="The --devices terms.")
    executor: str = Field(description="local, ray, or ray://ADDRESS.")
    jobs: int = Field(description="Devices run at the same time at most.")
    deadline_s: float = Field(description="Per-device deadline, s.")
    started_at: str = Field(description="UTC ISO-8601 start time.")
    seconds: float = Field(description="Wall time of the whole fleet run, s.")


class FleetResult(FleetRunHeader):
    """Everything a fleet benchmark produced."""

    schema_version: str = FLEET_SCHEMA_VERSION
    rows: list[FleetRow]
    aggregate: FleetAggregate
    warnings: list[str] = Field(default_factory=list, description="Host-side problems that did not stop the run.")
    exit_code: int = Field(description="0 all passed; 1 a device failed its budget, was invalid or could not run; "
                                       "3 every device failed to run.")

    @property
    def passed(self) -> bool:
        return self.exit_code == ExitCode.OK


def all_failed_code(rows: Sequence[DeviceOutcome]) -> int | None:
    """The exit code when every device failed to run: 4 when each was a host key refusal (a trust decision:
    record the keys), else 3; None when some device ran."""
    if not rows or any(r.status != "error" for r in rows):
        return None
    return int(ExitCode.TRUST if all(r.error_kind == "trust" for r in rows) else ExitCode.DEVICE)


def fleet_exit_code(rows: list[FleetRow]) -> int:
    """3 when every device failed to run (4: every one refused its host key), else 1 when any device failed to
    run or to pass, else 0."""
    failed = all_failed_code(rows)
    if failed is not None:
        return failed
    if any(not r.passed for r in rows):
        return int(ExitCode.GATE_FAILED)
    return int(ExitCode.OK)
