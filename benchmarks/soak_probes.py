"""What the soak samples: this (host) process, the loopback device's work dir and its sshd, the history file.

Host: RSS (psutil, else /proc/self/status VmRSS), open file descriptors (/proc/self/fd), Python and OS threads,
child processes, live paramiko transports (each is a thread) and paramiko Transport / SFTPClient objects still
reachable (gc), TCP connections. Device: the cache's size on disk, its entries, the bytes of entries used within
the cache's keep-recent window, temp uploads, job directories and lock files left, agent processes still
running (any process whose command line names the work dir), and sshd's per-connection children.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

try:
    import psutil
except ImportError:  # pragma: no cover - psutil is in the dev extra
    psutil = None

from edgeopt.runners.ssh_cache import KEEP_RECENT_S


def rss_mb(pid: int | None = None) -> float:
    """Resident set size of ``pid`` (default: this process) in MiB; 0.0 when it is gone."""
    if psutil is not None:
        try:
            return float(psutil.Process(pid).memory_info().rss) / 2**20
        except psutil.Error:
            return 0.0
    try:
        status = Path(f"/proc/{pid or 'self'}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _os_threads() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def _children(exclude: frozenset[int]) -> int:
    """Child processes of this one (direct ones only without psutil), leaving out ``exclude`` (the lab's sshd)."""
    if psutil is not None:
        return sum(1 for c in psutil.Process().children(recursive=True) if c.pid not in exclude)
    me = str(os.getpid())
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in exclude:
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                    count += 1
            except OSError:
                continue
    return count


def paramiko_counts() -> dict[str, int]:
    """Live transports (threads) and reachable Transport / SFTPClient objects; zeros before paramiko is imported."""
    paramiko = sys.modules.get("paramiko")
    if paramiko is None:
        return {"ssh_transports_alive": 0, "ssh_transport_objects": 0, "sftp_client_objects": 0}
    alive = sum(1 for t in threading.enumerate() if isinstance(t, paramiko.Transport))
    objects = gc.get_objects()
    return {"ssh_transports_alive": alive,
            "ssh_transport_objects": sum(1 for o in objects if isinstance(o, paramiko.Transport)),
            "sftp_client_objects": sum(1 for o in objects if isinstance(o, paramiko.SFTPClient))}


def host_sample(exclude: frozenset[int] = frozenset()) -> dict[str, Any]:
    """This process, after a full garbage collection (uncollected cycles are not leaks); ``exclude``: child
    processes that are not the host's (the lab's sshd, which the soak itself started)."""
    gc.collect()
    sample: dict[str, Any] = {
        "host_rss_mb": round(rss_mb(), 3),
        "host_fds": len(os.listdir("/proc/self/fd")),
        "host_threads": threading.active_count(),
        "host_os_threads": _os_threads(),
        "host_children": _children(exclude),
        "ssh_liveness_threads": sum(1 for t in threading.enumerate() if t.name == "ssh-liveness"),
        **paramiko_counts(),
    }
    if psutil is not None:
        sample["host_tcp_connections"] = len(psutil.Process().net_connections(kind="tcp"))
    return sample


def _tree_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:
                continue
    return total


def cache_sample(cache: Path, now: float | None = None) -> dict[str, Any]:
    """Size of the device cache, its entries, and the bytes of entries used within the keep-recent window."""
    now = time.time() if now is None else now
    entries = sorted(cache.iterdir()) if cache.is_dir() else []
    kept = [e for e in entries if not e.name.startswith(".")]
    sizes = {e.name: _tree_bytes(e) for e in kept}
    recent = sum(sizes[e.name] for e in kept if now - e.stat().st_mtime < KEEP_RECENT_S)
    return {"cache_bytes": sum(sizes.values()), "cache_entries": len(kept), "cache_recent_bytes": recent,
            "cache_tmp_uploads": len(entries) - len(kept)}


def age_cache(cache: Path, seconds: float) -> None:
    """Move every entry's last-use time ``seconds`` into the past (simulated time between runs)."""
    if not cache.is_dir():
        return
    for entry in cache.iterdir():
        st = entry.stat()
        os.utime(entry, (st.st_atime - seconds, st.st_mtime - seconds))


def device_sample(workdir: Path, agents: list[int], sshd_children: list[int]) -> dict[str, Any]:
    """The device side: cache, leftovers in the work dir, agent processes and sshd's session processes."""
    jobs, locks = workdir / "jobs", workdir / "locks"
    return {
        **cache_sample(workdir / "cache"),
        "device_job_dirs": len(list(jobs.iterdir())) if jobs.is_dir() else 0,
        "device_lock_files": len(list(locks.iterdir())) if locks.is_dir() else 0,
        "device_agent_processes": len(agents),
        "sshd_children": len(sshd_children),
        "sshd_children_rss_mb": round(sum(rss_mb(p) for p in sshd_children), 3),
    }


def file_bytes(path: Path | None) -> int | None:
    """Size of an SQLite file with its WAL and shared-memory files (None: not recording)."""
    if path is None:
        return None
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())
