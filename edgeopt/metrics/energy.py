"""Energy per inference: the agent's energy settings, and the agent's power readings turned into :class:`Energy`.

Measured when the agent read a power sensor (``RawRun.power``); otherwise an ESTIMATE from the target's TDP,
marked ``source="estimate"`` with a note that says so. An estimate is never presented as a measurement.
Method and limits: ``docs/energy.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import ENERGY_DEFAULTS

from ..enums import PowerSensor
from ..errors import InputError
from ..targets.schema import Target
from .result import Energy

# What --power-sensor accepts: a reader name, "auto" (the target's sensor first, then whatever exists) or "none".
SENSOR_CHOICES: tuple[str, ...] = ("auto", *(s.value for s in PowerSensor))
# Fewer power readings than this in the timed phase make the average power indicative (a warning says so).
MIN_POWER_SAMPLES = 10
MAX_RATE_HZ = 1000.0
# Active power this far below idle is reported (clamped to 0 above idle either way); less is rounding or noise.
BELOW_IDLE_TOLERANCE = 0.02


def energy_request(
    target: Target,
    *,
    enabled: bool = True,
    sensor: str = "auto",
    sysfs_root: str | Path = "/",
    rate_hz: float = float(ENERGY_DEFAULTS["rate_hz"]),
    idle_s: float = float(ENERGY_DEFAULTS["idle_s"]),
    vcgencmd: str = str(ENERGY_DEFAULTS["vcgencmd"]),
) -> dict[str, Any]:
    """The ``Request.energy`` settings for a run on ``target``.

    Args:
        target: its ``power_sensor`` is what ``auto`` tries first on the device.
        enabled: False: no sampling and no estimate (the result's ``energy`` is null).
        sensor: ``auto``, ``none`` (estimate only) or a reader name (``ina3221``, ``rapl``, ``rpi5_pmic``, ``hwmon``).
        sysfs_root: where the agent finds ``/sys`` on the device; tests and emulation point it at a fake tree.
        rate_hz: power readings per second during the timed phase.
        idle_s: length of the idle baseline window before warm-up (0: no idle baseline).
        vcgencmd: path of ``vcgencmd`` on a Raspberry Pi 5.

    Raises:
        InputError: an unknown sensor or an out-of-range rate or idle window.
    """
    if sensor not in SENSOR_CHOICES:
        raise InputError(f"--power-sensor {sensor!r}: choose one of {', '.join(SENSOR_CHOICES)}")
    if not 0 < rate_hz <= MAX_RATE_HZ:
        raise InputError(f"--power-rate-hz {rate_hz:g}: use a rate in (0, {MAX_RATE_HZ:g}], e.g. 20")
    if idle_s < 0:
        raise InputError(f"power idle window {idle_s:g} s: use 0 (none) or more seconds, e.g. 0.5")
    prefer = target.power_sensor.value if target.power_sensor is not PowerSensor.NONE else ""
    return {"enabled": bool(enabled), "sensor": sensor, "prefer": prefer, "sysfs_root": str(sysfs_root),
            "rate_hz": float(rate_hz), "idle_s": float(idle_s), "vcgencmd": vcgencmd}


def energy_from_run(
    power: dict[str, Any],
    *,
    target: Target,
    inferences: int,
    timed_s: float,
    flops_per_inference: int | None,
) -> tuple[Energy | None, list[str]]:
    """Energy figures of a run and the warnings they raise.

    Args:
        power: ``RawRun.power`` (``{}`` when energy was disabled).
        target: gives the TDP for an estimate.
        inferences: timed inferences (all streams). timed_s: wall time of the timed phase.
        flops_per_inference: model ops per inference (from inspect), or None.

    Returns:
        ``(energy, warnings)``; energy is None when energy was disabled, or when nothing was read and the target
        states no TDP.
    """
    if not power or inferences <= 0 or timed_s <= 0:
        return None, []
    active = power.get("active") or {}
    if power.get("sensor") and active.get("avg_w") is not None and not power.get("error"):
        return _measured(power, inferences, timed_s, flops_per_inference)
    why = power.get("error") or power.get("reason") or "no power sensor was read"
    if power.get("sensor"):
        why = f"{power['sensor']}: {why}"
    return _estimate(why, target, inferences, timed_s, flops_per_inference)


def _figures(power_w: float, inferences: int, timed_s: float, flops: int | None) -> dict[str, Any]:
    """energy_per_inference_mj, inferences_per_joule and tops_per_watt at an average power of ``power_w``."""
    joules = power_w * timed_s
    return {
        "energy_per_inference_mj": joules / inferences * 1e3,
        "inferences_per_joule": inferences / joules if joules > 0 else None,
        "tops_per_watt": (flops * inferences / timed_s / power_w / 1e12) if flops and power_w > 0 else None,
    }


def _measured(
    power: dict[str, Any], inferences: int, timed_s: float, flops: int | None
) -> tuple[Energy, list[str]]:
    warnings: list[str] = []
    active = power["active"]
    active_w = float(active["avg_w"])
    idle = power.get("idle") or {}
    idle_w = float(idle["avg_w"]) if idle.get("avg_w") is not None else None
    above_mj = None
    if idle_w is not None:
        above_mj = (active_w - idle_w) * timed_s / inferences * 1e3
        if above_mj < 0:
            if active_w < idle_w * (1 - BELOW_IDLE_TOLERANCE):
                warnings.append(f"energy: active power {active_w:.3f} W is below idle {idle_w:.3f} W (sensor noise "
                                "or a load outside this run): energy above idle is reported as 0")
            above_mj = 0.0
    samples = int(active.get("samples", 0))
    rate = power.get("rate_hz_used") or power.get("rate_hz")
    is_counter = power.get("kind") == "energy"
    if not is_counter and samples < MIN_POWER_SAMPLES:
        warnings.append(f"energy: only {samples} power readings in the {timed_s:.2f} s timed phase at {rate} Hz; "
                        f"the average is indicative: raise --min-duration or --power-rate-hz")
    if power.get("read_errors"):
        warnings.append(f"energy: {power['read_errors']} power readings failed ({power.get('last_error', '')})")
    rails = list(power.get("rails") or [])
    method = ("energy counter deltas" if is_counter
              else f"time-weighted mean of {samples} readings at {rate} Hz")
    note = f"measured: {power['sensor']} ({', '.join(rails)}), {method}"
    notes = [str(n) for n in power.get("notes") or []]
    if idle_w is None:
        notes.append("no idle window (idle_s 0): energy above idle not computed")
    if notes:
        note += "; " + "; ".join(notes)
    return Energy(
        source="measured",
        sensor=str(power["sensor"]),
        rails=rails,
        idle_power_w=idle_w,
        active_power_w=active_w,
        energy_per_inference_above_idle_mj=above_mj,
        samples=samples,
        note=note,
        **_figures(active_w, inferences, timed_s, flops),
    ), warnings


def _estimate(
    why: str, target: Target, inferences: int, timed_s: float, flops: int | None
) -> tuple[Energy | None, list[str]]:
    if target.tdp_w is None:
        return None, [f"energy: not measured ({why}) and target {target.name} states no tdp_w to estimate from"]
    tdp = target.tdp_w
    note = (f"ESTIMATE, not a measurement ({why}); assumes the device draws its TDP of "
            f"{tdp.value:g} W ({tdp.source}) for the whole timed phase, which usually overstates a single stream "
            "and ignores board and peripheral power")
    return Energy(
        source="estimate",
        sensor=None,
        rails=[],
        idle_power_w=None,
        active_power_w=tdp.value,
        energy_per_inference_above_idle_mj=None,
        samples=None,
        note=note,
        **_figures(tdp.value, inferences, timed_s, flops),
    ), []
