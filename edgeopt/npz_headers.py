"""What an ``.npz`` holds, read from its headers alone: sizes checked before any array is loaded.

An eval output comes back from a device, which is untrusted (docs/reliability.md, "Untrusted device"): a 2 MB
archive can declare arrays of many GB (a zip bomb, or an ``.npy`` header with a huge shape). :func:`members`
reads each member's zip entry and ``.npy`` header (a few hundred bytes each) so a caller can refuse it before
``np.load`` allocates anything.
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

# The most members an .npz may list before it is refused unread (outputs and inputs are a handful of arrays).
MAX_MEMBERS = 4096


class NpzHeaderError(ValueError):
    """The archive or one of its ``.npy`` headers cannot be read."""


@dataclass(frozen=True)
class Member:
    """One array of an ``.npz`` as its header declares it.

    Attributes:
        key: the array's name (the member name without ``.npy``).
        shape: the declared shape.
        dtype: the declared dtype.
        nbytes: shape x itemsize: what loading it allocates.
        stored_bytes: the member's uncompressed size in the zip (what reading it inflates).
    """

    key: str
    shape: tuple[int, ...]
    dtype: np.dtype
    nbytes: int
    stored_bytes: int


def members(path: Path) -> list[Member]:
    """Every array of the ``.npz`` at ``path``, from the headers only.

    Raises:
        NpzHeaderError: not a zip, too many members, a member that is not an ``.npy``, an unreadable header, an
            object (pickle) dtype.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise NpzHeaderError(f"{len(infos)} members (at most {MAX_MEMBERS})")
            return [_member(zf, info) for info in infos]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise NpzHeaderError(f"not a readable .npz ({exc})") from None


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Member:
    if not info.filename.endswith(".npy"):
        raise NpzHeaderError(f"member {info.filename!r} is not an .npy array")
    try:
        with zf.open(info) as fh:
            shape, dtype = _header(fh)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise NpzHeaderError(f"member {info.filename!r}: unreadable header ({exc})") from None
    if dtype.hasobject:
        raise NpzHeaderError(f"member {info.filename!r}: object arrays (pickles) are not accepted")
    nbytes = math.prod(shape) * dtype.itemsize
    return Member(key=info.filename[:-4], shape=tuple(shape), dtype=dtype, nbytes=nbytes,
                  stored_bytes=info.file_size)


def _header(fh: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _fortran, dtype = np.lib.format.read_array_header_1_0(fh)
    else:
        shape, _fortran, dtype = np.lib.format.read_array_header_2_0(fh)
    return tuple(shape), dtype


def npy_member(path: Path) -> Member:
    """The array of the ``.npy`` file at ``path`` as its header declares it (nothing else is read).

    Raises:
        NpzHeaderError: not an ``.npy`` numpy wrote, an unreadable header, an object (pickle) dtype.
    """
    try:
        with open(path, "rb") as fh:
            shape, dtype = _header(fh)
    except (ValueError, OSError, EOFError) as exc:
        raise NpzHeaderError(f"not a readable .npy ({exc})") from None
    if dtype.hasobject:
        raise NpzHeaderError("object arrays (pickles) are not accepted")
    nbytes = math.prod(shape) * dtype.itemsize
    return Member(key=Path(path).stem, shape=shape, dtype=dtype, nbytes=nbytes, stored_bytes=nbytes)


def samples_and_bytes(path: Path) -> tuple[int, int]:
    """``(samples, bytes)`` of an eval input ``.npz``: the longest axis-0 length and the total array bytes."""
    found = members(path)
    samples = max((m.shape[0] for m in found if m.shape), default=1)
    return max(samples, 1), sum(m.nbytes for m in found)
