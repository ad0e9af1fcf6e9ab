"""What ``python -m edgeopt_agent probe`` reports beyond the run environment: packages, disk, power sensors.

The host's ``edgeopt devices check`` turns this into a readiness report with install hints. Everything here
only looks (stat, metadata, PATH lookups); nothing imports a heavy runtime except as a last resort for a
package installed without metadata (JetPack's ``tensorrt`` from apt).
"""

from __future__ import annotations

import glob
import os
import shutil
from typing import Any, Dict, List, Optional, Tuple

# Import name -> distribution names it ships under (first one found wins). The runtimes' own packages come
# from each registered runtime class (``Runtime.packages``), so a new runtime brings its packages along.
BASE_PACKAGES: Tuple[Tuple[str, Tuple[str, ...]], ...] = (("numpy", ("numpy",)),)


def _dist_version(dist: str) -> Optional[str]:
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8 has no importlib.metadata: fall back to the module itself
        return None
    try:
        return metadata.version(dist)
    except Exception:  # PackageNotFoundError, or a broken dist-info directory
        return None


def _module_version(module: str) -> Optional[str]:
    """Version of a module installed without package metadata (e.g. apt's python3-libnvinfer)."""
    import importlib
    import importlib.util

    try:
        if importlib.util.find_spec(module) is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return str(getattr(importlib.import_module(module), "__version__", "unknown"))
    except Exception:
        return "unknown (import failed)"


def packages() -> Dict[str, Dict[str, Any]]:
    """``{import name: {"installed", "version", "distribution"}}`` for numpy and every runtime package."""
    from . import runtimes

    out: Dict[str, Dict[str, Any]] = {}
    for module, dists in BASE_PACKAGES + tuple(runtimes.packages()):
        found: Optional[Tuple[str, str]] = None
        for dist in dists:
            version = _dist_version(dist)
            if version is not None:
                found = (dist, version)
                break
        if found is None:
            version = _module_version(module)
            if version is not None:
                found = ("(no package metadata)", version)
        out[module] = {"installed": found is not None, "version": found[1] if found else None,
                       "distribution": found[0] if found else None}
    return out


def disk_free(workdir: str) -> Dict[str, Any]:
    """Free bytes on the file system that holds ``workdir`` (or its nearest existing parent)."""
    path = os.path.abspath(os.path.expanduser(workdir))
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    try:
        usage = shutil.disk_usage(path)
    except OSError as exc:
        return {"workdir": workdir, "measured_at": path, "free_bytes": None, "error": str(exc)}
    return {"workdir": workdir, "measured_at": path, "free_bytes": usage.free, "total_bytes": usage.total}


def memory_available_mb(root: str = "/") -> Optional[float]:
    try:
        with open(os.path.join(root, "proc/meminfo")) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return None


def cgroup_memory_mb(root: str = "/") -> Optional[Tuple[float, float]]:
    """(limit, still allowed) in MB of this process's memory cgroup (v2 ``memory.max``/``memory.current``, v1
    ``memory.limit_in_bytes``/``memory.usage_in_bytes``); None without a limit or when not readable. A container
    or systemd slice with a limit OOM-kills long before the machine's MemAvailable runs out."""
    text = _read_text(os.path.join(root, "proc/self/cgroup")) or ""
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        rel = parts[2].lstrip("/")
        if parts[1] == "":
            base, files = os.path.join(root, "sys/fs/cgroup", rel), ("memory.max", "memory.current")
        elif "memory" in parts[1].split(","):
            base = os.path.join(root, "sys/fs/cgroup/memory", rel)
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        limit, usage = (_read_text(os.path.join(base, f)) for f in files)
        if not limit or not usage or not limit.isdigit() or not usage.isdigit() or int(limit) >= 1 << 60:
            continue
        mb = 1024.0 * 1024.0
        return int(limit) / mb, max(0, int(limit) - int(usage)) / mb
    return None


def memory_headroom_mb(root: str = "/") -> Tuple[Optional[float], Optional[float]]:
    """(available, total) MB for this process: the machine's MemAvailable/MemTotal, or its memory cgroup's
    limit and what that still allows when they are smaller (what an OOM kill is judged from)."""
    available = memory_available_mb(root)
    total = None
    for line in (_read_text(os.path.join(root, "proc/meminfo")) or "").splitlines():
        if line.startswith("MemTotal:"):
            total = int(line.split()[1]) / 1024.0
    group = cgroup_memory_mb(root)
    if group is not None:
        limit, left = group
        available = left if available is None else min(available, left)
        total = limit if total is None else min(total, limit)
    return available, total


def power_sensors(root: str = "/") -> List[Dict[str, Any]]:
    """Power sensors present on this board (existence only; reading them is the energy readers' job).

    Args:
        root: file system root, so tests can point it at an emulated sysfs tree.
    """
    found: List[Dict[str, Any]] = []
    ina = os.path.join(root, "sys/bus/i2c/drivers/ina3221x")
    if os.path.isdir(ina):
        found.append({"kind": "ina3221", "layout": "iio", "path": ina})
    for hwmon in sorted(glob.glob(os.path.join(root, "sys/class/hwmon/*"))):
        labels = []
        for label in sorted(glob.glob(os.path.join(hwmon, "in*_label"))):
            try:
                with open(label) as fh:
                    labels.append(fh.read().strip())
            except OSError:
                continue
        if labels:
            name = ""
            try:
                with open(os.path.join(hwmon, "name")) as fh:
                    name = fh.read().strip()
            except OSError:
                pass
            found.append({"kind": "hwmon", "layout": "hwmon", "path": hwmon, "name": name, "rails": labels})
    rapl = os.path.join(root, "sys/class/powercap/intel-rapl:0")
    if os.path.isdir(rapl):
        found.append({"kind": "rapl", "layout": "powercap", "path": rapl})
    vcgencmd = shutil.which("vcgencmd")
    if vcgencmd:
        found.append({"kind": "vcgencmd", "layout": "command", "path": vcgencmd})
    return found
