"""Generic hwmon power channels: ``/sys/class/hwmon/hwmon<N>/power<C>_input`` in microwatts.

Some drivers expose only ``power<C>_average`` (amdgpu, some PMBus supplies); it is used when ``_input`` is
missing. Channel names are ``<name>/<label>`` from the device's ``name`` and ``power<C>_label`` files. Every
channel found is summed: on a machine with several power-reporting devices that may double-count (a PSU and
the CPU it feeds); the rails are listed in the result so that can be checked.
"""

from __future__ import annotations

import glob
import os
import re
from typing import List

from .base import KIND_POWER, PowerReader, PowerSettings, SensorNotFound, SysfsValue, read_text

HWMON = "/sys/class/hwmon"
_POWER = re.compile(r"^power(\d+)_(input|average)$")


class HwmonReader(PowerReader):
    name = "hwmon"
    kind = KIND_POWER

    def __init__(self, names: List[str], files: List[SysfsValue], source: str) -> None:
        notes = ["sum of every hwmon power channel listed in rails; what each covers depends on its driver"]
        super().__init__(names, list(range(len(names))), source, notes)
        self._files = files

    def read(self) -> List[float]:
        return [f.read_int() / 1e6 for f in self._files]  # uW

    def close(self) -> None:
        for f in self._files:
            f.close()


def open_reader(settings: PowerSettings) -> HwmonReader:
    base = settings.sys_path(HWMON)
    names: List[str] = []
    files: List[SysfsValue] = []
    try:
        for dev in sorted(glob.glob(os.path.join(base, "hwmon*"))):
            device = read_text(os.path.join(dev, "name")) or os.path.basename(dev)
            channels = {}
            for path in glob.glob(os.path.join(dev, "power*_*")):
                m = _POWER.match(os.path.basename(path))
                if m and (m.group(2) == "input" or m.group(1) not in channels):
                    channels[m.group(1)] = path
            for index in sorted(channels, key=int):
                label = read_text(os.path.join(dev, "power%s_label" % index)) or "power%s" % index
                files.append(SysfsValue(channels[index]))
                names.append("%s/%s" % (device, label))
    except SensorNotFound:
        for f in files:
            f.close()
        raise
    if not files:
        raise SensorNotFound("no power*_input or power*_average under %s/hwmon*" % base)
    reader = HwmonReader(names, files, base)
    try:
        reader.read()
    except (OSError, ValueError) as exc:
        reader.close()
        raise SensorNotFound("hwmon power channels under %s could not be read: %s" % (base, exc)) from None
    return reader
