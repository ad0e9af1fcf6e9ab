"""Machine facts recorded with every result: where a number came from matters as much as the number."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from typing import Any, Dict, List, Optional


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return None


def _cpuinfo() -> Dict[str, str]:
    text = _read("/proc/cpuinfo") or ""
    info: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key not in info:
            info[key] = value.strip()
    return info


def cpu_flags() -> List[str]:
    info = _cpuinfo()
    return sorted((info.get("flags") or info.get("Features") or "").split())


def cpu_model() -> str:
    info = _cpuinfo()
    return (info.get("model name") or info.get("Model") or info.get("Hardware") or platform.processor()
            or platform.machine())


def cpu_mhz() -> Optional[float]:
    value = _cpuinfo().get("cpu MHz")
    max_khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if max_khz:
        return int(max_khz) / 1000.0
    try:
        return float(value) if value else None
    except ValueError:
        return None


def memory_total_mb() -> Optional[float]:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024.0
    return None


def temperatures_c() -> Dict[str, float]:
    out: Dict[str, float] = {}
    base = "/sys/class/thermal"
    try:
        zones = sorted(z for z in os.listdir(base) if z.startswith("thermal_zone"))
    except OSError:
        return out
    for zone in zones:
        raw = _read(os.path.join(base, zone, "temp"))
        kind = _read(os.path.join(base, zone, "type")) or zone
        if raw and raw.lstrip("-").isdigit():
            out[kind] = int(raw) / 1000.0
    return out


def load_average_1m() -> Optional[float]:
    """1-minute load average: well above 0 on an idle board means another process is using the CPU."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def cpu_cur_mhz() -> Optional[float]:
    """cpu0's current clock (cpufreq), MHz; far below its maximum under load means the clock is capped."""
    raw = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
    return int(raw) / 1000.0 if raw and raw.isdigit() else None


def throttling() -> Dict[str, int]:
    """Throttling the kernel reports: the Raspberry Pi firmware's flags, x86 thermal throttle event counts."""
    out: Dict[str, int] = {}
    flags = _read("/sys/devices/platform/soc/soc:firmware/get_throttled")
    if flags:
        with contextlib.suppress(ValueError):  # bit 0 under-voltage, 1 clock capped, 2 throttled, 3 soft temp limit
            out["rpi_flags"] = int(flags, 16)
    for kind in ("core", "package"):
        count = _read("/sys/devices/system/cpu/cpu0/thermal_throttle/%s_throttle_count" % kind)
        if count and count.isdigit():
            out["%s_thermal_events" % kind] = int(count)
    return out


def collect(runtime_versions: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Facts about this machine, Python and numpy; the runtime adds its own version."""
    import numpy

    uname = platform.uname()
    return {
        "hostname": uname.node,
        "os": "%s %s" % (uname.system, uname.release),
        "machine": uname.machine,
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "numpy": numpy.__version__,
        "cpu": cpu_model(),
        "cpu_mhz": cpu_mhz(),
        "cores": os.cpu_count(),
        "cpu_flags": [f for f in cpu_flags() if f in _INTERESTING_FLAGS],
        "memory_total_mb": memory_total_mb(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "temperature_c": temperatures_c(),
        "load_avg_1m": load_average_1m(),
        "cpu_cur_mhz": cpu_cur_mhz(),
        "throttling": throttling(),
        "accelerators": accelerators(),
        "runtimes": dict(runtime_versions or {}),
    }


def _usb_vendors() -> List[str]:
    base = "/sys/bus/usb/devices"
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return [v.lower() for v in (_read(os.path.join(base, n, "idVendor")) for n in names) if v]


def _drm_vendors() -> List[str]:
    base = "/sys/class/drm"
    try:
        names = [n for n in os.listdir(base) if n.startswith("renderD")]
    except OSError:
        return []
    return [v.lower() for v in (_read(os.path.join(base, n, "device", "vendor")) for n in names) if v]


def accelerators() -> List[str]:
    """Accelerator kinds this machine shows evidence of (device nodes, USB ids), so the host can tell a run on
    the wrong hardware; the names are the host's ``AcceleratorKind`` values."""
    found = []
    if any(os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvhost-ctrl", "/dev/nvhost-ctrl-gpu",
                                       "/proc/driver/nvidia")):
        found.append("nvidia_gpu")
    usb = _usb_vendors()
    if os.path.exists("/dev/apex_0") or "1a6e" in usb or "18d1" in usb:
        found.append("edgetpu")
    if "0x8086" in _drm_vendors():
        found.append("intel_gpu")
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        found.append("apple_npu")
    return found


# ISA features that change inference speed; the full flag list is noise in a result file.
_INTERESTING_FLAGS = {
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni",
    "avx512_bf16", "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16",
    "neon", "asimd", "asimdhp", "asimddp", "i8mm", "bf16", "sve", "sve2", "fphp",
}
