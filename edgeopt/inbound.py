"""The one way bytes that edgeopt did not just produce come in: files a user or a device handed over, a deployment
folder, a cache or stamp a tool may have altered, an eval output, a device's reply.

Every such read goes through here and gets the same limits (docs/reliability.md, "Untrusted files"):

- **regular files only**: opened without blocking and checked on the open descriptor, so a FIFO, ``/dev/zero`` or
  a file swapped after a path check is refused at once, never waited on;
- **size**: checked on ``fstat`` and again on what is read, so a file that grows while it is read cannot pass;
- **text**: UTF-8 (a BOM is skipped), the first bad byte named by offset;
- **structure**: JSON through :mod:`edgeopt.jsonio` (depth before parsing), YAML through :mod:`edgeopt.yamlio`
  (aliases and depth before building), ``.npz``/``.npy`` through :mod:`edgeopt.npz_headers` (declared shapes and
  sizes before anything is allocated, no pickles).

``tests/unit/architecture/test_one_reader.py`` fails when a module outside these four calls a raw parser
(``json.loads``, ``yaml.safe_load``, ``np.load``, ``model_validate_json``), so a new surface cannot forget the limits.
Errors are :class:`InboundError` (a ``ValueError``) whose ``str()`` is one line without the content.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .jsonio import MAX_DEPTH, JsonLimitError, loads

__all__ = ["MAX_ARRAY_FILE_BYTES", "MAX_RECORD_BYTES", "InboundError", "load_arrays", "read_bytes", "read_json",
           "read_text"]

# A record edgeopt writes next to a model or in its caches (stamps, manifests, facts, settings): a few KiB.
MAX_RECORD_BYTES = 16 * 1024 * 1024
# Arrays handed over as files (calibration data, eval inputs and outputs): what a host keeps in memory at once.
MAX_ARRAY_FILE_BYTES = 4 * 1024 * 1024 * 1024


class InboundError(ValueError):
    """A file or text over a limit, not a regular file, not UTF-8, or not the structure expected; one line."""


def read_bytes(path: Path, *, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes``.

    Raises:
        OSError: the file cannot be opened (callers word this one themselves).
        InboundError: not a regular file, or larger than ``max_bytes`` (on ``stat`` or while read).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InboundError("not a regular file")
        if info.st_size > max_bytes:
            raise InboundError(f"{info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InboundError(f"grew past the {max_bytes:,}-byte limit while it was read")
    return data


def decode(data: bytes) -> str:
    """``data`` as UTF-8 text (a BOM is skipped). Raises InboundError naming the first bad byte's offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InboundError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def read_text(path: Path, *, max_bytes: int) -> str:
    """The UTF-8 text of the regular file ``path`` within ``max_bytes`` (:func:`read_bytes`, :func:`decode`)."""
    return decode(read_bytes(path, max_bytes=max_bytes))


def read_json(path: Path, *, max_bytes: int = MAX_RECORD_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of the regular file ``path`` (UTF-8, a BOM is skipped): regular file, size and depth checked
    before parsing, so a FIFO, ``/dev/zero`` or a file that grows while it is read is refused without reading past
    the limit.

    Raises:
        OSError: cannot be opened. jsonio.JsonLimitError (a ValueError): over a limit, not UTF-8, not a regular
        file. ValueError: not JSON.
    """
    try:
        text = read_text(path, max_bytes=max_bytes)
    except InboundError as exc:
        raise JsonLimitError(str(exc)) from None
    return loads(text, max_bytes=max_bytes, max_depth=max_depth)


def load_arrays(path: Path, *, max_bytes: int = MAX_ARRAY_FILE_BYTES) -> dict[str, np.ndarray] | np.ndarray:
    """The arrays of an ``.npz`` (a dict by member name) or the array of an ``.npy``, after their headers: no
    pickles, and the declared sizes (what loading allocates and what reading inflates) within ``max_bytes``.

    Raises:
        OSError: cannot be opened. InboundError: not a regular file, over the limit, an object array, or not an
        ``.npz``/``.npy`` numpy wrote.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise InboundError("not a regular file")
    if info.st_size > max_bytes:
        raise InboundError(f"{info.st_size:,} bytes, over the {max_bytes:,}-byte limit")
    with open(path, "rb") as fh:
        zipped = fh.read(4) == b"PK\x03\x04"
    declared = _declared_bytes(path, zipped)
    if declared > max_bytes:
        raise InboundError(f"its arrays declare {declared:,} bytes, over the {max_bytes:,}-byte limit")
    try:
        loaded = np.load(path, allow_pickle=False)
        if not zipped:
            return np.asarray(loaded)
        with loaded as data:
            return {k: data[k] for k in data.files}
    except (ValueError, OSError, EOFError) as exc:
        raise InboundError(f"not a numpy array file ({str(exc).splitlines()[0][:200] if str(exc) else exc})") \
            from None


def _declared_bytes(path: Path, zipped: bool) -> int:
    from .npz_headers import NpzHeaderError, members, npy_member

    try:
        if zipped:
            return sum(max(m.nbytes, m.stored_bytes) for m in members(path))
        return npy_member(path).nbytes
    except NpzHeaderError as exc:
        raise InboundError(str(exc)) from None
