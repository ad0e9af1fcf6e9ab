"""What every power reader provides, the settings they read, and the registry of readers (lazy dotted paths).

A reader turns one board's real sensor layout (sysfs files or a command's text output) into a list of numbers,
one per channel (rail): watts for ``KIND_POWER`` readers, or a cumulative energy counter in joules for
``KIND_ENERGY`` readers (RAPL), already corrected for counter wrap-around. The sampler does the rest.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..protocol import ENERGY_DEFAULTS

KIND_POWER = "power"  # read() returns instantaneous watts per channel
KIND_ENERGY = "energy"  # read() returns cumulative joules per channel (monotonic, wrap-corrected)

# Sensor name -> "module:function" returning a PowerReader; the function raises SensorNotFound.
_REGISTRY: Dict[str, str] = {
    "ina3221": "edgeopt_agent.power.ina3221:open_reader",
    "rapl": "edgeopt_agent.power.rapl:open_reader",
    "rpi5_pmic": "edgeopt_agent.power.rpi5_pmic:open_reader",
    "hwmon": "edgeopt_agent.power.hwmon:open_reader",
}
# The order ``auto`` probes in (after the preferred sensor): board-specific sensors before generic ones.
AUTO_ORDER: Tuple[str, ...] = ("ina3221", "rpi5_pmic", "rapl", "hwmon")
SPECIAL = ("auto", "none")


class SensorNotFound(Exception):
    """The sensor does not exist here or cannot be read; ``str()`` says why and what to do."""


class PowerReader(object):
    """One opened sensor.

    Attributes:
        name: registered sensor name (``ina3221``, ``rapl``...).
        kind: ``KIND_POWER`` or ``KIND_ENERGY``.
        channels: channel (rail) names, in the order ``read`` returns values.
        summed: indices of the channels whose sum is the reported total.
        source: where the readings come from (a path or a command), for the report.
        notes: what the total covers and misses, for the report.
        max_rate_hz: the highest sampling rate worth using (a slow read caps it), or None.
    """

    name = ""
    kind = KIND_POWER
    max_rate_hz: Optional[float] = None

    def __init__(self, channels: List[str], summed: List[int], source: str, notes: List[str]) -> None:
        self.channels = channels
        self.summed = summed
        self.source = source
        self.notes = notes

    def read(self) -> List[float]:
        """One reading per channel (watts, or cumulative joules for energy counters)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release open files; the reader is unusable afterwards."""

    def describe(self) -> Dict[str, Any]:
        return {
            "sensor": self.name,
            "kind": self.kind,
            "channels": list(self.channels),
            "rails": [self.channels[i] for i in self.summed],
            "source": self.source,
            "notes": list(self.notes),
        }


class SysfsValue(object):
    """A sysfs attribute kept open and re-read with ``pread`` at offset 0 (sysfs regenerates it per read).

    Cheaper than open/read/close per sample, and ``os.pread`` releases the GIL while the kernel talks to the
    sensor (an I2C transfer on a Jetson), so the inference thread keeps running.
    """

    __slots__ = ("path", "fd")

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except PermissionError:
            raise SensorNotFound("%s is not readable by this user: run the agent as root or make it readable"
                                 % path) from None
        except OSError as exc:
            raise SensorNotFound("cannot open %s: %s" % (path, exc.strerror or exc)) from None

    def read_int(self) -> int:
        return int(os.pread(self.fd, 64, 0))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def read_text(path: str) -> Optional[str]:
    """A small file's stripped text, or None when it cannot be read."""
    try:
        with open(path) as fh:
            return fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class PowerSettings:
    """``Request.energy`` parsed and checked; see ``protocol.ENERGY_DEFAULTS`` for the meaning of each."""

    enabled: bool
    sensor: str
    prefer: str
    sysfs_root: str
    rate_hz: float
    idle_s: float
    vcgencmd: str

    def sys_path(self, path: str) -> str:
        """``path`` (absolute, e.g. ``/sys/class/powercap``) under the configured sysfs root."""
        return os.path.join(self.sysfs_root, path.lstrip("/"))


def parse_settings(data: Optional[Dict[str, Any]]) -> PowerSettings:
    """Merge ``data`` over the defaults and check it.

    Raises:
        ValueError: unknown key or bad value (the message names it and the allowed values).
    """
    merged = dict(ENERGY_DEFAULTS)
    unknown = sorted(set(data or {}) - set(merged))
    if unknown:
        raise ValueError("unknown energy setting(s): %s; known: %s" % (", ".join(unknown), ", ".join(sorted(merged))))
    merged.update(data or {})
    known = names() + list(SPECIAL)
    if merged["sensor"] not in known:
        raise ValueError("energy sensor %r is not one of: %s" % (merged["sensor"], ", ".join(known)))
    if merged["prefer"] and merged["prefer"] not in names() + ["none"]:
        raise ValueError("preferred energy sensor %r is not one of: %s" % (merged["prefer"], ", ".join(names())))
    try:
        rate_hz = float(merged["rate_hz"])
        idle_s = float(merged["idle_s"])
    except (TypeError, ValueError):
        raise ValueError("energy rate_hz and idle_s must be numbers (got %r, %r)"
                         % (merged["rate_hz"], merged["idle_s"])) from None
    if not 0 < rate_hz <= 1000:
        raise ValueError("energy rate_hz must be in (0, 1000] (got %s)" % merged["rate_hz"])
    if idle_s < 0:
        raise ValueError("energy idle_s must be >= 0 (got %s)" % merged["idle_s"])
    return PowerSettings(
        enabled=bool(merged["enabled"]),
        sensor=str(merged["sensor"]),
        prefer="" if merged["prefer"] == "none" else str(merged["prefer"] or ""),
        sysfs_root=str(merged["sysfs_root"] or "/"),
        rate_hz=rate_hz,
        idle_s=idle_s,
        vcgencmd=str(merged["vcgencmd"] or "vcgencmd"),
    )


def names() -> List[str]:
    """Registered sensor names, sorted."""
    return sorted(_REGISTRY)


def open_reader(name: str, settings: PowerSettings) -> PowerReader:
    """Open the sensor registered as ``name``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
        SensorNotFound: the sensor is not present or not readable here.
    """
    if name not in _REGISTRY:
        raise KeyError("unknown power sensor %r; known sensors: %s" % (name, ", ".join(names())))
    module_name, _, attr = _REGISTRY[name].partition(":")
    opener = getattr(importlib.import_module(module_name), attr)
    reader: PowerReader = opener(settings)
    return reader


def find_reader(settings: PowerSettings) -> Tuple[Optional[PowerReader], str]:
    """The reader ``settings`` asks for, or None with the reason none could be opened.

    ``auto`` tries ``settings.prefer`` (the target's sensor) first, then every registered sensor in
    ``AUTO_ORDER``, and returns the first one that opens.
    """
    if settings.sensor == "none":
        return None, "power sensor 'none' requested"
    if settings.sensor != "auto":
        candidates = [settings.sensor]
    else:
        candidates = ([settings.prefer] if settings.prefer else []) + [
            n for n in AUTO_ORDER if n != settings.prefer
        ]
    reasons = []
    for name in candidates:
        try:
            return open_reader(name, settings), ""
        except (SensorNotFound, OSError, ValueError) as exc:  # a sensor that misbehaves counts as absent
            reasons.append("%s: %s" % (name, exc))
    return None, "no power sensor found (%s)" % "; ".join(reasons)


def probe(settings: PowerSettings) -> Dict[str, Any]:
    """Which sensors exist here, each with its rails or the reason it is missing (for ``devices check``)."""
    found: Dict[str, Any] = {}
    for name in names():
        try:
            reader = open_reader(name, settings)
        except (SensorNotFound, OSError, ValueError) as exc:
            found[name] = {"available": False, "reason": str(exc)}
            continue
        try:
            found[name] = dict(reader.describe(), available=True)
        finally:
            reader.close()
    return found
