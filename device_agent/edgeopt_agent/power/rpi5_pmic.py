"""Raspberry Pi 5 PMIC (DA9091 "Gilmour") rail monitors, read through ``vcgencmd pmic_read_adc``.

The Pi 5 has no power sysfs; the firmware reports each PMIC rail's current and voltage as text::

       VDD_CORE_A current(7)=2.63385000A
       VDD_CORE_V volt(15)=0.85012400V

Power per rail = current x volt for matching rail names (``VDD_CORE``); the total is their sum. Voltage-only
lines (``EXT5V_V``, ``BATT_V``) have no current and are not rails. Every reading spawns ``vcgencmd`` (a few ms
of CPU), so the sampling rate is capped at ``MAX_RATE_HZ``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Dict, List, Tuple

from .base import KIND_POWER, PowerReader, PowerSettings, SensorNotFound

MAX_RATE_HZ = 5.0
READ_TIMEOUT_S = 5.0
_LINE = re.compile(r"^\s*(\S+)_([AV])\s+(current|volt)\((\d+)\)=([-+0-9.eE]+)([AV])\s*$")


def parse_pmic_adc(text: str) -> Dict[str, Tuple[float, float]]:
    """Rails with both a current and a voltage line, in output order: ``{rail: (amps, volts)}``."""
    amps: Dict[str, float] = {}
    volts: Dict[str, float] = {}
    order: List[str] = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        rail, suffix, what, _, value, unit = m.groups()
        if not ((what == "current" and suffix == unit == "A") or (what == "volt" and suffix == unit == "V")):
            continue  # a line whose suffix, word and unit disagree is not one we understand
        if rail not in order:
            order.append(rail)
        (amps if what == "current" else volts)[rail] = float(value)
    out: Dict[str, Tuple[float, float]] = {}
    for rail in order:
        if rail in amps and rail in volts:
            out[rail] = (amps[rail], volts[rail])
    return out


class Rpi5PmicReader(PowerReader):
    name = "rpi5_pmic"
    kind = KIND_POWER
    max_rate_hz = MAX_RATE_HZ

    def __init__(self, command: List[str], rails: List[str]) -> None:
        notes = [
            "sum of the PMIC's rails (SoC, RAM, I/O): the 5 V input, USB devices, fan, HATs and conversion "
            "losses are not included; wall power is higher",
            "each reading runs %s; the rate is capped at %g Hz" % (" ".join(command), MAX_RATE_HZ),
        ]
        super().__init__(rails, list(range(len(rails))), " ".join(command), notes)
        self._command = command

    def _run(self) -> str:
        proc = subprocess.run(self._command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=READ_TIMEOUT_S)
        if proc.returncode != 0:
            raise OSError("%s exited with %d: %s" % (" ".join(self._command), proc.returncode,
                                                     (proc.stderr or proc.stdout).strip()[:200]))
        return proc.stdout

    def read(self) -> List[float]:
        rails = parse_pmic_adc(self._run())
        try:
            return [rails[name][0] * rails[name][1] for name in self.channels]
        except KeyError as exc:
            raise ValueError("rail %s missing from vcgencmd output" % exc) from None


def _resolve(command: str) -> str:
    if os.sep in command:
        if os.path.isfile(command) and os.access(command, os.X_OK):
            return command
        raise SensorNotFound("%s is not an executable file" % command)
    found = shutil.which(command)
    if not found:
        raise SensorNotFound("%s not found on PATH (on Raspberry Pi OS it is in the raspi-utils package)" % command)
    return found


def open_reader(settings: PowerSettings) -> Rpi5PmicReader:
    command = [_resolve(settings.vcgencmd), "pmic_read_adc"]
    try:
        reader = Rpi5PmicReader(command, [])
        text = reader._run()
    except (OSError, subprocess.SubprocessError) as exc:
        raise SensorNotFound("%s failed (not a Raspberry Pi 5?): %s" % (" ".join(command), exc)) from None
    rails = list(parse_pmic_adc(text))
    if not rails:
        first = text.strip().splitlines()[0][:120] if text.strip() else "(no output)"
        raise SensorNotFound("%s printed no rail current/volt pairs (not a Raspberry Pi 5?): %s"
                             % (" ".join(command), first))
    return Rpi5PmicReader(command, rails)
