"""Jetson on-module INA3221 power monitors, in both sysfs layouts NVIDIA has shipped.

- JetPack 5/6 (upstream ``ina3221`` hwmon driver):
  ``/sys/bus/i2c/drivers/ina3221/<bus-addr>/hwmon/hwmon<N>/in<C>_label`` (rail name, e.g. ``VDD_IN``),
  ``in<C>_input`` (bus voltage, mV), ``curr<C>_input`` (current, mA), ``in<C>_enable``; C = 1..3.
  (``in4..in7`` are shunt voltages and ``curr4`` a sum channel: not rails.)
- JetPack 4 and older (NVIDIA ``ina3221x`` iio driver):
  ``/sys/bus/i2c/drivers/ina3221x/<bus-addr>/iio:device<N>/in_power<C>_input`` (mW) with ``rail_name_<C>``.

When a total-input rail exists (``VDD_IN`` on Orin Nano/NX and Xavier NX, ``POM_5V_IN`` on Nano) it alone is
the total, since the other rails are parts of it; otherwise (AGX Xavier/Orin) the rails are summed.
"""

from __future__ import annotations

import glob
import os
from typing import Any, Dict, List

from .base import KIND_POWER, PowerReader, PowerSettings, SensorNotFound, SysfsValue, read_text

HWMON_GLOB = "/sys/bus/i2c/drivers/ina3221/*/hwmon/hwmon*"
IIO_GLOB = "/sys/bus/i2c/drivers/ina3221x/*/iio:device*"
TOTAL_RAILS = ("VDD_IN", "POM_5V_IN")
_UNCONNECTED = ("NC", "")
_CARRIER_NOTE = ("on-module INA3221 rails: the carrier board, fan, USB and other peripherals are not included; "
                 "wall power is higher")


class _Channel(object):
    """One rail: the product of its files' integer values times ``scale`` is watts."""

    __slots__ = ("name", "files", "scale")

    def __init__(self, name: str, files: List[SysfsValue], scale: float) -> None:
        self.name = name
        self.files = files
        self.scale = scale

    def watts(self) -> float:
        value = float(self.scale)
        for f in self.files:
            value *= f.read_int()
        return value

    def close(self) -> None:
        for f in self.files:
            f.close()


def _power_channel(name: str, path: str) -> _Channel:
    return _Channel(name, [SysfsValue(path)], 1e-3)  # mW


def _volt_curr_channel(name: str, volt: str, curr: str) -> _Channel:
    v = SysfsValue(volt)
    try:
        return _Channel(name, [v, SysfsValue(curr)], 1e-6)  # mV x mA = uW
    except SensorNotFound:
        v.close()
        raise


class Ina3221Reader(PowerReader):
    name = "ina3221"
    kind = KIND_POWER

    def __init__(self, chans: List[_Channel], source: str, layout: str) -> None:
        names = [c.name for c in chans]
        totals = [i for i, n in enumerate(names) if n.upper() in TOTAL_RAILS]
        if totals:
            summed = totals[:1]
            notes = ["%s is the module's total input; the other rails are parts of it and are not added"
                     % names[totals[0]]]
        else:
            summed = list(range(len(chans)))
            notes = ["no total-input rail (%s): the total is the sum of all rails" % "/".join(TOTAL_RAILS)]
        super().__init__(names, summed, source, notes + [_CARRIER_NOTE])
        self.layout = layout
        self._chans = chans

    def read(self) -> List[float]:
        return [c.watts() for c in self._chans]

    def close(self) -> None:
        for c in self._chans:
            c.close()

    def describe(self) -> Dict[str, Any]:
        info = super().describe()
        info["layout"] = self.layout
        return info


def _hwmon_channels(settings: PowerSettings, chans: List[_Channel]) -> List[str]:
    dirs = sorted(glob.glob(settings.sys_path(HWMON_GLOB)))
    for d in dirs:
        chip = os.path.basename(os.path.dirname(os.path.dirname(d)))  # e.g. 1-0040
        for c in (1, 2, 3):
            volt, curr = os.path.join(d, "in%d_input" % c), os.path.join(d, "curr%d_input" % c)
            if not (os.path.exists(volt) and os.path.exists(curr)):
                continue
            label = read_text(os.path.join(d, "in%d_label" % c))
            if label is not None and label.upper() in _UNCONNECTED:
                continue
            if read_text(os.path.join(d, "in%d_enable" % c)) == "0":
                continue
            chans.append(_volt_curr_channel(label or "%s/ch%d" % (chip, c), volt, curr))
    return dirs


def _iio_channels(settings: PowerSettings, chans: List[_Channel]) -> List[str]:
    dirs = sorted(glob.glob(settings.sys_path(IIO_GLOB)))
    for d in dirs:
        chip = os.path.basename(os.path.dirname(d))
        powers = sorted(glob.glob(os.path.join(d, "in_power*_input")))
        for path in powers:
            index = os.path.basename(path)[len("in_power"):-len("_input")]
            if not index.isdigit():
                continue
            label = read_text(os.path.join(d, "rail_name_%s" % index))
            if label is not None and label.upper() in _UNCONNECTED:
                continue
            chans.append(_power_channel(label or "%s/ch%s" % (chip, index), path))
    return dirs


def open_reader(settings: PowerSettings) -> Ina3221Reader:
    for layout, finder in (("hwmon", _hwmon_channels), ("iio", _iio_channels)):
        chans: List[_Channel] = []
        try:
            dirs = finder(settings, chans)
        except SensorNotFound:
            for c in chans:
                c.close()
            raise
        if not chans:
            continue
        reader = Ina3221Reader(chans, ", ".join(dirs), layout)
        try:
            reader.read()
        except (OSError, ValueError) as exc:
            reader.close()
            raise SensorNotFound("INA3221 rails under %s could not be read: %s" % (reader.source, exc)) from None
        return reader
    raise SensorNotFound("no INA3221 rails under %s or %s (not a Jetson?)"
                         % (settings.sys_path(HWMON_GLOB), settings.sys_path(IIO_GLOB)))
