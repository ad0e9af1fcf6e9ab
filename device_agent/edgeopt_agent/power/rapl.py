"""Intel (and AMD Zen, through the same powercap driver) RAPL energy counters.

Layout: ``/sys/class/powercap/intel-rapl:<P>/`` with ``name`` (``package-<P>``), ``energy_uj`` (a counter in
microjoules that wraps to 0 after ``max_energy_range_uj``) and subzones ``intel-rapl:<P>:<S>`` (``core``,
``uncore``, ``dram``). Energy comes from counter deltas, never from power samples: the counter integrates in
hardware, so it misses nothing between samples. It must be read at least once per wrap period (a typical
262 kJ range, 61 uJ units x 2^32, wraps every ~87 min at 50 W; smaller units wrap sooner); the sampler does.

Counted: every ``package-*`` zone, plus ``dram`` subzones where the CPU exposes them (servers), since DRAM is
outside the package domain. ``psys`` (platform) is not added: it already contains the packages.
"""

from __future__ import annotations

import glob
import os
import re
from typing import List

from .base import KIND_ENERGY, PowerReader, PowerSettings, SensorNotFound, SysfsValue, read_text

POWERCAP = "/sys/class/powercap"
_TOP = re.compile(r"^intel-rapl:(\d+)$")
_SUB = re.compile(r"^intel-rapl:(\d+):(\d+)$")


class _Zone(object):
    __slots__ = ("name", "counter", "range_uj", "last_uj", "total_uj")

    def __init__(self, name: str, counter: SysfsValue, range_uj: int) -> None:
        self.name = name
        self.counter = counter
        self.range_uj = range_uj
        self.last_uj = counter.read_int()
        self.total_uj = 0


def delta_uj(previous: int, current: int, range_uj: int) -> int:
    """Energy between two counter readings, across at most one wrap to 0 after ``range_uj``."""
    if current >= previous:
        return current - previous
    return range_uj - previous + current


class RaplReader(PowerReader):
    name = "rapl"
    kind = KIND_ENERGY

    def __init__(self, zones: List[_Zone], source: str, notes: List[str]) -> None:
        super().__init__([z.name for z in zones], list(range(len(zones))), source, notes)
        self._zones = zones

    def read(self) -> List[float]:
        """Cumulative joules per zone since the reader was opened (wrap-around corrected)."""
        out = []
        for z in self._zones:
            now = z.counter.read_int()
            z.total_uj += delta_uj(z.last_uj, now, z.range_uj)
            z.last_uj = now
            out.append(z.total_uj / 1e6)
        return out

    def close(self) -> None:
        for z in self._zones:
            z.counter.close()


def _open_zone(path: str, label: str) -> _Zone:
    range_text = read_text(os.path.join(path, "max_energy_range_uj"))
    if range_text is None or not range_text.isdigit() or int(range_text) <= 0:
        raise SensorNotFound("%s/max_energy_range_uj is missing or unreadable: cannot handle counter wrap-around"
                             % path)
    energy = os.path.join(path, "energy_uj")
    if os.path.exists(energy) and not os.access(energy, os.R_OK):
        raise SensorNotFound("%s is readable only by root (kernels since the CVE-2020-8694 fix): run the agent "
                             "as root or chmod o+r it" % energy)
    counter = SysfsValue(energy)
    try:
        return _Zone(label, counter, int(range_text))
    except (OSError, ValueError) as exc:
        counter.close()
        raise SensorNotFound("%s could not be read: %s" % (energy, exc)) from None


def open_reader(settings: PowerSettings) -> RaplReader:
    base = settings.sys_path(POWERCAP)
    tops = sorted(p for p in glob.glob(os.path.join(base, "intel-rapl:*")) if _TOP.match(os.path.basename(p)))
    zones: List[_Zone] = []
    notes: List[str] = []
    try:
        for top in tops:
            name = read_text(os.path.join(top, "name")) or os.path.basename(top)
            if name == "psys":
                notes.append("psys (platform) zone present but not added: it contains the packages")
                continue
            zones.append(_open_zone(top, name))
            for sub in sorted(glob.glob(os.path.join(top, "intel-rapl:*"))):
                if _SUB.match(os.path.basename(sub)) and read_text(os.path.join(sub, "name")) == "dram":
                    zones.append(_open_zone(sub, "%s/dram" % name))
    except SensorNotFound:
        for z in zones:
            z.counter.close()
        raise
    if not zones:
        raise SensorNotFound("no RAPL package zone under %s (not an Intel/AMD x86 machine, or the intel_rapl "
                             "driver is not loaded)" % base)
    if not any(z.name.endswith("/dram") for z in zones):
        notes.append("RAPL package domain only: DRAM power is not included on this CPU")
    notes.append("CPU package energy only: GPU/accelerator cards, disks, fans and PSU losses are not included")
    return RaplReader(zones, base, notes)
