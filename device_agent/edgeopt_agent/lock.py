"""One benchmark per device at a time: a lock file holding the owner's PID.

Mutual exclusion comes from ``fcntl.flock`` on the lock file, so the kernel releases it the moment its owner
dies (even by SIGKILL): a lock left behind by a dead PID is free and the next job takes it over. The file
holds the owner's PID and start time so a waiting job can say who is in the way, and it is removed on
release, so a clean device has no lock file.

Unlinking a locked file races with a waiter that already opened it (the waiter would lock an inode that no
longer has a name), so after locking, the owner checks that the path still names the inode it locked, and
otherwise starts over.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any, Callable, Dict, Optional

LOCK_NAME = "device.lock"


class LockBusy(Exception):
    """Another live job held the lock for longer than the caller was willing to wait."""


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists (a zombie counts as dead)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class DeviceLock:
    """The per-device lock in ``lock_dir``.

    Args:
        lock_dir: directory of the lock file (created if missing).
        name: file name of the lock.
    """

    def __init__(self, lock_dir: str, name: str = LOCK_NAME) -> None:
        self.path = os.path.join(lock_dir, name)
        self._fd: Optional[int] = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> Optional[Dict[str, Any]]:
        """What the lock file says about its owner (``pid``, ``since``, ``host``), or None."""
        try:
            with open(self.path) as fh:
                data = json.loads(fh.read() or "null")
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _try_once(self) -> bool:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        try:
            same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the previous owner unlinked it after we opened it: try again on the new file
            os.close(fd)
            return False
        self._fd = fd
        return True

    def _record_owner(self) -> None:
        assert self._fd is not None
        data = json.dumps({"pid": os.getpid(), "since": time.time(), "host": socket.gethostname()}).encode()
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, data)

    def acquire(self, wait_s: float, poll_s: float = 0.1,
                on_event: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        """Take the lock, waiting up to ``wait_s`` seconds for a live owner to finish.

        Args:
            wait_s: longest wait in seconds (0: one try).
            poll_s: seconds between tries.
            on_event: receives ``{"event": "lock", ...}`` when the job waits or takes over a stale lock.

        Raises:
            LockBusy: a live job still holds the lock after ``wait_s`` seconds (the message names it).
        """
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        deadline = time.monotonic() + max(0.0, wait_s)
        before = self.holder()
        announced = False
        while True:
            if self._try_once():
                pid = (before or {}).get("pid")
                if isinstance(pid, int) and pid != os.getpid() and on_event is not None and not pid_alive(pid):
                    on_event({"event": "lock", "action": "stale_takeover", "pid": pid, "path": self.path})
                self._record_owner()
                return
            owner = self.holder() or {}
            if not announced and on_event is not None:
                on_event({"event": "phase", "phase": "lock_wait", "holder_pid": owner.get("pid"),
                          "path": self.path})
                announced = True
            if time.monotonic() >= deadline:
                since = owner.get("since")
                age = " for %.0f s" % (time.time() - since) if isinstance(since, (int, float)) else ""
                raise LockBusy(
                    "device busy: another benchmark (pid %s on %s) has held %s%s and it is still held after "
                    "waiting %.1f s; retry when it ends or allow a longer lock wait (lock_wait_s)"
                    % (owner.get("pid", "?"), owner.get("host", "?"), self.path, age, wait_s)
                )
            time.sleep(max(0.0, min(poll_s, deadline - time.monotonic())))

    def release(self) -> None:
        """Remove the lock file and drop the lock; safe to call twice or without holding it."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(fd)
