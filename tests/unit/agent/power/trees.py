"""Emulated sensor layouts: files written with the real paths, names and units of each board.

Only files are emulated, never code: the readers under test open and parse these exactly as they would
``/sys`` on the device. Values are fixed-width where a test changes them while a reader holds them open
(sysfs regenerates a file per read; a regular file rewritten in place must not leave stale trailing digits).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

# JetPack 5/6 Orin Nano: ina3221 at 1-0040, hwmon rails VDD_IN (total), VDD_CPU_GPU_CV, VDD_SOC; mV and mA.
ORIN_NANO_RAILS = {"VDD_IN": (5000, 2000), "VDD_CPU_GPU_CV": (5000, 600), "VDD_SOC": (5000, 400)}

# Raspberry Pi 5 `vcgencmd pmic_read_adc` output as the firmware prints it (rail names, indices, units).
RPI5_PMIC_OUTPUT = """\
     3V7_WL_SW_A current(0)=0.10000000A
   3V3_SYS_A current(1)=0.05000000A
   1V8_SYS_A current(2)=0.20000000A
   DDR_VDD2_A current(3)=0.10000000A
   DDR_VDDQ_A current(4)=0.00000000A
   1V1_SYS_A current(5)=0.20000000A
   0V8_SW_A current(6)=0.50000000A
   VDD_CORE_A current(7)=2.50000000A
   3V3_DAC_A current(17)=0.00048840A
   3V3_ADC_A current(18)=0.00024420A
   0V8_AON_A current(16)=0.00439560A
   HDMI_A current(22)=0.01000000A
     3V7_WL_SW_V volt(8)=3.70000000V
   3V3_SYS_V volt(9)=3.30000000V
   1V8_SYS_V volt(10)=1.80000000V
   DDR_VDD2_V volt(11)=1.10000000V
   DDR_VDDQ_V volt(12)=0.60000000V
   1V1_SYS_V volt(13)=1.10000000V
   0V8_SW_V volt(14)=0.80000000V
   VDD_CORE_V volt(15)=0.80000000V
   3V3_DAC_V volt(20)=3.30000000V
   3V3_ADC_V volt(21)=3.30000000V
   0V8_AON_V volt(19)=0.80000000V
   HDMI_V volt(23)=5.00000000V
   EXT5V_V volt(24)=5.15108000V
   BATT_V volt(25)=0.00000000V
"""


def rpi5_expected_w(text: str = RPI5_PMIC_OUTPUT) -> float:
    """Sum of current x volt over rails that have both (computed independently of the reader's regex)."""
    amps, volts = {}, {}
    for line in text.splitlines():
        name, _, value = line.strip().partition("=")
        rail = name.split()[0][:-2]
        (amps if "current(" in name else volts)[rail] = float(value[:-1])
    return sum(amps[r] * volts[r] for r in amps if r in volts)


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def overwrite(path: Path, text: str) -> None:
    """Rewrite a file in place (same inode), as sysfs contents change under an open descriptor."""
    with open(path, "r+") as fh:
        fh.write(text)
        fh.truncate()


def jetson_hwmon(root: Path, rails: dict[str, tuple[int, int]] | None = None, chip: str = "1-0040",
                 hwmon: str = "hwmon3") -> Path:
    """JetPack 5/6 ``ina3221`` hwmon layout; rails map label -> (mV, mA); labels "NC" mark unused channels."""
    d = f"sys/bus/i2c/drivers/ina3221/{chip}/hwmon/{hwmon}"
    write(root, f"{d}/name", "ina3221\n")
    write(root, f"{d}/update_interval", "1100\n")
    write(root, f"{d}/samples", "512\n")
    for c, (label, (mv, ma)) in enumerate((rails or ORIN_NANO_RAILS).items(), start=1):
        write(root, f"{d}/in{c}_label", f"{label}\n")
        write(root, f"{d}/in{c}_enable", "1\n")
        write(root, f"{d}/in{c}_input", f"{mv}\n")
        write(root, f"{d}/curr{c}_input", f"{ma}\n")
        write(root, f"{d}/curr{c}_crit", "32760\n")
        write(root, f"{d}/curr{c}_max", "32760\n")
        write(root, f"{d}/in{c + 3}_input", "20\n")  # shunt voltage channels 4..6: not rails
    write(root, f"{d}/in7_input", "60\n")  # sum of shunt voltages
    write(root, f"{d}/curr4_input", "9999\n")  # sum channel: must not be read as a rail
    write(root, f"{d}/curr4_crit", "32760\n")
    return root / d


def jetson_iio(root: Path, rails: dict[str, int], chip: str = "6-0040", device: str = "iio:device0") -> Path:
    """JetPack 4 ``ina3221x`` iio layout; rails map rail_name -> power in mW (current/voltage files too)."""
    d = f"sys/bus/i2c/drivers/ina3221x/{chip}/{device}"
    write(root, f"{d}/name", "ina3221x\n")
    for c, (label, mw) in enumerate(rails.items()):
        write(root, f"{d}/rail_name_{c}", f"{label}\n")
        write(root, f"{d}/in_power{c}_input", f"{mw}\n")
        write(root, f"{d}/in_voltage{c}_input", "5000\n")
        write(root, f"{d}/in_current{c}_input", f"{mw * 1000 // 5000}\n")
        write(root, f"{d}/crit_current_limit_{c}", "4000\n")
        write(root, f"{d}/warn_current_limit_{c}", "3000\n")
    write(root, f"{d}/running_mode", "1\n")
    return root / d


def rapl(root: Path, *, packages: int = 1, energy_uj: int = 0, max_range_uj: int = 262143328850,
         dram: bool = False, psys: bool = False) -> list[Path]:
    """``/sys/class/powercap`` with ``intel-rapl:<P>`` package zones, core/uncore (and dram) subzones.

    Subzones also appear as links at the class level, as on a real machine. Returns the package zone dirs.
    """
    base = root / "sys/class/powercap"
    write(root, "sys/class/powercap/intel-rapl/enabled", "1\n")
    zones = []
    for p in range(packages):
        z = f"sys/class/powercap/intel-rapl:{p}"
        write(root, f"{z}/name", f"package-{p}\n")
        write(root, f"{z}/enabled", "1\n")
        write(root, f"{z}/energy_uj", f"{energy_uj:020d}\n")
        write(root, f"{z}/max_energy_range_uj", f"{max_range_uj}\n")
        write(root, f"{z}/constraint_0_power_limit_uw", "28000000\n")
        subs = ["core", "uncore"] + (["dram"] if dram else [])
        for s, name in enumerate(subs):
            sz = f"{z}/intel-rapl:{p}:{s}"
            write(root, f"{sz}/name", f"{name}\n")
            write(root, f"{sz}/energy_uj", f"{energy_uj:020d}\n")
            write(root, f"{sz}/max_energy_range_uj", f"{max_range_uj}\n")
            os.symlink(root / sz, base / f"intel-rapl:{p}:{s}")
        zones.append(root / z)
    if psys:
        z = f"sys/class/powercap/intel-rapl:{packages}"
        write(root, f"{z}/name", "psys\n")
        write(root, f"{z}/energy_uj", f"{energy_uj:020d}\n")
        write(root, f"{z}/max_energy_range_uj", f"{max_range_uj}\n")
    return zones


def hwmon(root: Path) -> float:
    """``/sys/class/hwmon``: a temperature-only device, amdgpu (``power1_average``) and an ina226
    (``power1_input``). Returns the total in watts."""
    write(root, "sys/class/hwmon/hwmon0/name", "k10temp\n")
    write(root, "sys/class/hwmon/hwmon0/temp1_input", "45000\n")
    write(root, "sys/class/hwmon/hwmon1/name", "amdgpu\n")
    write(root, "sys/class/hwmon/hwmon1/power1_average", "15000000\n")
    write(root, "sys/class/hwmon/hwmon1/power1_cap", "200000000\n")
    write(root, "sys/class/hwmon/hwmon1/power1_label", "PPT\n")
    write(root, "sys/class/hwmon/hwmon2/name", "ina226\n")
    write(root, "sys/class/hwmon/hwmon2/power1_input", "2500000\n")
    return 17.5


def fake_vcgencmd(dir_: Path, output: str = RPI5_PMIC_OUTPUT, exit_code: int = 0) -> Path:
    """An executable that prints ``output`` for ``pmic_read_adc``, as the firmware tool does."""
    path = dir_ / "vcgencmd"
    path.write_text(
        "#!/bin/sh\n"
        'if [ "$1" != "pmic_read_adc" ]; then echo "error=1 error_msg=\\"Command not registered\\""; exit 1; fi\n'
        f"cat <<'EOF'\n{output}EOF\nexit {exit_code}\n"
    )
    path.chmod(0o755)
    return path


_COUNTER_SCRIPT = """
import os, sys, time
watts, rng, start = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
fds = [os.open(f, os.O_WRONLY) for f in sys.argv[4:]]
t0 = time.perf_counter()
while True:
    data = ("%020d\\n" % (int(start + watts * 1e6 * (time.perf_counter() - t0)) % rng)).encode()
    for fd in fds:
        os.pwrite(fd, data, 0)
    time.sleep(0.0005)
"""


class RaplCounter:
    """Advances ``energy_uj`` files at a constant power, wrapping at ``max_range_uj``, like the hardware.

    The writer is its own process (started and stopped here, by its pid), so it is not held up by the GIL of
    the process under test: the counter keeps pace with wall time as a hardware counter does.
    """

    def __init__(self, files: list[Path], watts: float, max_range_uj: int, start_uj: int = 0) -> None:
        self.files = files
        self.args = [str(watts), str(max_range_uj), str(start_uj)]
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> RaplCounter:
        before = self.files[0].read_text()
        self.proc = subprocess.Popen([sys.executable, "-c", _COUNTER_SCRIPT, *self.args, *map(str, self.files)])
        deadline = time.monotonic() + 10
        while self.files[0].read_text() == before and time.monotonic() < deadline:
            time.sleep(0.005)  # until the writer has started
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
