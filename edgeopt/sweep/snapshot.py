"""The model a sweep reads: a copy taken once at the start, named by its content.

A sweep reads its model many times (the baseline on each runtime, one ``optimize`` per recipe, the INT8
search) and keys every cached result by the model's sha256. Reading the user's path each time would mix two
models when the file is replaced mid-sweep (results of the new model cached under the old model's hash). So
the sweep copies the model and its companions (ONNX external data) once into
``<out>/cache/models/<sha256>/`` and reads only that copy: it finishes on the model as it was when it started,
and a model replaced between runs has another hash, so nothing cached for the old one is reused.

A model written in place while it is being copied is detected (its size or mtime changed during the copy) and
refused with one line; a model replaced by rename meanwhile is copied as it was when opened. The copy is
complete before it has its final name (temp dir + rename).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
import uuid
from pathlib import Path

from ..errors import InputError
from ..fsutil import sha256_file
from ..registry import files_by_suffix

# A temp copy older than this is the leftover of a killed sweep (a live one finishes its copy in seconds).
STALE_AFTER_S = 3600.0


def _stamp(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns


def _copy_stable(files: list[Path], base: Path, into: Path) -> str:
    """Copy ``files`` (relative to ``base``) into ``into``; the content key of the copy.

    Each file is read through one open descriptor: a file replaced by rename meanwhile does not matter (the
    copy is the file that was opened); one written in place during the copy (size or mtime changed) does.

    Raises:
        InputError: a file was written while it was copied.
    """
    digest = hashlib.sha256()
    for src in files:
        rel = src.relative_to(base)
        dst = into / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        with open(src, "rb") as fh, open(dst, "wb") as out:
            before = _stamp(fh.fileno())
            shutil.copyfileobj(fh, out, 1 << 20)
            if _stamp(fh.fileno()) != before:
                raise InputError(f"model file {src} changed while the sweep was reading it: run again once it is "
                                 "completely written (write it elsewhere and rename it into place)")
        digest.update(f"{rel.as_posix()}\0{sha256_file(dst)}\n".encode())
    return digest.hexdigest()


def _remove_stale(root: Path, max_age_s: float = STALE_AFTER_S) -> None:
    """Temp copies a killed sweep left behind (never renamed into place, so never read)."""
    now = time.time()
    for tmp in root.glob(".tmp-*"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > max_age_s:
                shutil.rmtree(tmp)


def snapshot_model(model: Path, cache_dir: Path) -> tuple[Path, str]:
    """Copy ``model`` (and its companions) under ``cache_dir/models/<key>/``; the copy's path and its sha256
    (a lone file's own sha256, else a hash over every file's relative path and sha256).

    Raises:
        InputError: the model changed while it was being copied.
    """
    model = Path(model).resolve()
    base = model.parent
    # Companions outside the model's directory are refused by the model loader; they are not copied.
    files = [f for f in (c.resolve() for c in files_by_suffix(model)) if f.is_relative_to(base)]
    root = cache_dir / "models"
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale(root)
    tmp = root / f".tmp-{uuid.uuid4().hex[:12]}"
    try:
        key = _copy_stable(files, base, tmp)
        if len(files) == 1:
            key = sha256_file(tmp / model.name)
        entry = root / key
        try:
            os.rename(tmp, entry)
        except OSError:
            if not entry.is_dir():  # an entry of the same content from an earlier run is the same bytes
                raise
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
    return entry / model.name, key
