"""A model as it travels to fleet workers: by content hash, as a shared path or as bytes.

On this host (the local executor, or a Ray cluster on this machine) a worker opens the model at its path. A
worker elsewhere (a Ray node) gets the files' bytes once through the object store and writes them into a
cache directory named by the content hash, so every job on that node shares one copy, a copy is complete
before anyone uses it (temp dir + rename), and a changed model can never be mistaken for the old one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..fsutil import sha256_file

# Where workers materialize models received as bytes: <tmp>/edgeopt-fleet-models/<key>/...
CACHE_DIRNAME = "edgeopt-fleet-models"


@dataclass(frozen=True)
class ModelRef:
    """A model file and its companions (external data, ``.bin``, a model directory's files).

    Attributes:
        key: SHA-256 over every file's relative path and content.
        main: path of the model file relative to ``root`` (POSIX).
        files: every file's path relative to ``root`` (POSIX).
        root: the directory on the submitting host that ``main`` and ``files`` are relative to.
    """

    key: str
    main: str
    files: tuple[str, ...]
    root: str

    @classmethod
    def of(cls, model: str | Path) -> ModelRef:
        """Describe ``model`` (hashing its files).

        Raises:
            InputError: the model does not exist.
        """
        path = Path(model).resolve()
        if not path.exists():
            raise InputError(f"model {model} not found: pass the path of a model file")
        from ..runners.ssh_cache import model_files

        root = path if path.is_dir() else path.parent
        files = sorted(model_files(path)) if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        rels = tuple(p.resolve().relative_to(root).as_posix() for p in files)
        digest = hashlib.sha256()
        for rel, file in zip(rels, files, strict=True):
            digest.update(f"{rel}\0{sha256_file(file)}\n".encode())
        main = "." if path.is_dir() else path.relative_to(root).as_posix()
        return cls(key=digest.hexdigest(), main=main, files=rels, root=str(root))

    @property
    def path(self) -> Path:
        """The model's path on the submitting host."""
        return Path(self.root) / self.main

    def read_blobs(self) -> dict[str, bytes]:
        """Every file's bytes by relative path (to ship through an object store).

        Raises:
            InputError: the files changed since they were hashed (the bytes would be cached under the old key).
        """
        blobs = {rel: (Path(self.root) / rel).read_bytes() for rel in self.files}
        digest = hashlib.sha256()
        for rel, data in blobs.items():
            digest.update(f"{rel}\0{hashlib.sha256(data).hexdigest()}\n".encode())
        if digest.hexdigest() != self.key:
            raise InputError(f"model {self.path} changed while the fleet run was reading it: run again once it "
                             "is completely written (write it elsewhere and rename it into place)")
        return blobs

    def locate(self, blobs: Mapping[str, bytes] | None = None, cache_root: Path | None = None) -> Path:
        """The model's path on this worker: the shared path, or a cache copy written from ``blobs``."""
        if blobs is None:
            return self.path
        cache = Path(cache_root or Path(tempfile.gettempdir()) / CACHE_DIRNAME)
        entry = cache / self.key
        if not entry.is_dir():
            _materialize(entry, blobs)
        return entry if self.main == "." else entry / self.main


def _materialize(entry: Path, blobs: Mapping[str, bytes]) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.parent / f".tmp-{entry.name[:16]}-{uuid.uuid4().hex[:8]}"
    try:
        for rel, data in blobs.items():
            rel_path = PurePosixPath(rel)
            if rel_path.is_absolute() or ".." in rel_path.parts:
                raise InputError(f"model file {rel!r}: not a relative path inside the model's directory")
            out = tmp / rel_path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        try:
            os.rename(tmp, entry)
        except OSError:
            if not entry.is_dir():
                raise
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
