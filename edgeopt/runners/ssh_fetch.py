"""Bounded fetch of a file the agent left on a device, over SFTP (issue 31, "Untrusted device: transport"): a regular
file only (a FIFO or a link to ``/dev/zero`` is refused before anything is read), sized against its budget first,
read in chunks in linear time, and refused as a flood when it grows past the budget while it is read."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import RunnerError
from .limits import flood_error
from .ssh_session import SshSession

# Bytes read from a device file per call: paramiko's buffered read concatenates per 32 KiB block, so one large read
# costs time quadratic in its size; chunks keep a fetch linear.
FETCH_CHUNK = 1 << 20


def regular_size(s: SshSession, path: str, limit: int, what: str) -> int:
    """The size of the device file ``path``, refused before anything is read unless it is a regular file (a FIFO
    never ends or blocks, ``/dev/zero`` or a link to it never ends: ``stat`` follows links) of at most ``limit``
    bytes. A missing file raises ``FileNotFoundError`` (the caller knows what that means)."""
    st = s.sftp.stat(path)
    mode = st.st_mode
    if mode is not None and not stat.S_ISREG(mode):
        raise RunnerError(
            f"the agent on {s.where} left {path} as {_file_kind(mode)}, not a regular file; nothing was read from "
            "it: check the device's agent and runtime (a board that does this is broken or not trustworthy)")
    size = st.st_size or 0
    if size > limit:
        raise flood_error(s.where, what, limit)
    return size


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), f"file type {stat.S_IFMT(mode):o}")


def fetch_chunks(s: SshSession, path: str, limit: int, what: str, write: Callable[[bytes], object]) -> None:
    """Hand the device file ``path`` to ``write`` in chunks of :data:`FETCH_CHUNK` bytes (linear time: one
    ``read(limit + 1)`` made paramiko grow one bytes buffer per 32 KiB, 118 s for 40 MB), refused as a flood when
    it is, or grows while read, over ``limit`` bytes."""
    size = regular_size(s, path, limit, what)
    copied = 0
    with s.sftp.open(path, "rb") as fh:
        fh.prefetch(size)  # pipelined reads: a long link costs ~1 round trip, not one per 32 KiB
        while chunk := fh.read(FETCH_CHUNK):
            copied += len(chunk)
            if copied > limit:  # it grew while it was read
                raise flood_error(s.where, what, limit)
            write(chunk)


def read_capped(s: SshSession, path: str, limit: int, what: str) -> bytearray:
    """A device file's bytes (a regular file of at most ``limit`` bytes: :func:`fetch_chunks`), in one buffer."""
    data = bytearray()
    fetch_chunks(s, path, limit, what, data.extend)
    return data


def copy_capped(s: SshSession, device_path: str, host_path: Path, limit: int, what: str) -> None:
    """Copy a device file to ``host_path`` (a regular file of at most ``limit`` bytes: :func:`fetch_chunks`);
    nothing is left on the host when it is refused."""
    try:
        with host_path.open("wb") as dst:
            fetch_chunks(s, device_path, limit, what, dst.write)
    except BaseException:
        host_path.unlink(missing_ok=True)
        raise
