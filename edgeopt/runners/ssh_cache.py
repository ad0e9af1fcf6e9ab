"""The content-addressed cache on a device: ``<workdir>/cache/<sha256>/...``, so nothing is uploaded twice.

A bundle (the agent package, a model with its data files, an inputs file) is uploaded into a temp directory
next to the cache entry and renamed into place, so an entry that exists is always complete and concurrent
uploaders cannot corrupt each other: the loser of a rename race deletes its own copy.

Size limit: every use of an entry sets its mtime (a hit included), and after an upload the least recently used
entries are removed until the cache fits ``limit_bytes``. Entries used within ``KEEP_RECENT_S`` are never evicted
(another job may be about to load them), so the cache may exceed the limit briefly.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import stat
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import paramiko

from ..errors import InputError
from ..fsutil import sha256_file
from ..registry import files_by_suffix
from .base import agent_dir

# Temp uploads and job directories older than this are leftovers of a crash or a dead link: removed.
STALE_AFTER_S = 24 * 3600.0
# Default size limit of a device cache, bytes (RemoteSpec.device_cache_mb).
DEFAULT_LIMIT_BYTES = 2048 * 1024 * 1024
# Entries used this recently are kept whatever the limit: a job that uploaded them may not have loaded them yet.
KEEP_RECENT_S = 15 * 60.0


@dataclass(frozen=True)
class Bundle:
    """Files to place in one cache entry.

    Attributes:
        key: SHA-256 hex naming the entry (the file's own hash for a single file).
        files: (local file, POSIX path inside the entry) pairs.
        main: path inside the entry of the file the agent is pointed at ("" for the agent package).
        lone: the key is the single file's own SHA-256 (else a hash over every relative path and SHA-256).
    """

    key: str
    files: tuple[tuple[Path, str], ...]
    main: str = ""
    lone: bool = False

    def key_of(self, digests: list[str]) -> str:
        """The key these files would have with these SHA-256 digests (to check what was uploaded)."""
        if self.lone:
            return digests[0]
        return _bundle_key([(rel, sha) for (_, rel), sha in zip(self.files, digests, strict=True)])

    @property
    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p, _ in self.files)


@dataclass
class TransferStats:
    """What one run moved and how long each phase took (``SshRunner.last_stats``)."""

    uploaded_files: int = 0
    uploaded_bytes: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    evicted: int = 0
    job_dir: str = ""
    phases_s: dict[str, float] = field(default_factory=dict)

    def timed(self, phase: str, since: float) -> None:
        self.phases_s[phase] = round(self.phases_s.get(phase, 0.0) + time.perf_counter() - since, 4)


def _bundle_key(entries: list[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for rel, sha in sorted(entries):
        digest.update(f"{rel}\0{sha}\n".encode())
    return digest.hexdigest()


def agent_bundle() -> Bundle:
    """The ``edgeopt_agent`` package's source files, keyed by a hash of their paths and contents."""
    root = agent_dir()
    files = sorted(p for p in (root / "edgeopt_agent").rglob("*.py") if "__pycache__" not in p.parts)
    pairs = tuple((p, p.relative_to(root).as_posix()) for p in files)
    return Bundle(key=_bundle_key([(rel, sha256_file(p)) for p, rel in pairs]), files=pairs)


# Name of the archive inside a temp upload directory, removed by the unpacking.
ARCHIVE_NAME = ".bundle.zip"
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed member dates: the same files make the same bytes


def pack(bundle: Bundle) -> bytes:
    """``bundle``'s files as one zip built in memory (deflated, fixed dates), checked against the bundle's key.

    One file instead of one per source file: the agent's 40-odd files cost one round trip each (and more) over
    SFTP, 45 s at 200 ms round-trip time; one archive and one unpacking command cost a few.

    Raises:
        InputError: a file changed since the bundle was hashed (the entry's name must match what it holds).
    """
    buf = io.BytesIO()
    entries = []
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for local, rel in bundle.files:
            data = local.read_bytes()
            entries.append((rel, hashlib.sha256(data).hexdigest()))
            info = zipfile.ZipInfo(rel, date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    if bundle.key_of([sha for _, sha in entries]) != bundle.key:
        raise InputError(f"{', '.join(rel for _, rel in bundle.files[:3])}... changed while being packed for "
                         "upload (their content no longer matches the hash taken before): run again")
    return buf.getvalue()


# Run on the device with its own Python (3.8 and later, standard library only): unpack the archive into its
# directory, refusing members that would land outside it, then remove the archive.
UNPACK_SCRIPT = (
    "import os, sys, zipfile\n"
    "archive, dest = sys.argv[1], sys.argv[2]\n"
    "root = os.path.realpath(dest)\n"
    "with zipfile.ZipFile(archive) as zf:\n"
    "    for name in zf.namelist():\n"
    "        path = os.path.realpath(os.path.join(root, name))\n"
    "        if not path.startswith(root + os.sep):\n"
    "            sys.exit('unsafe member in the archive: ' + name)\n"
    "    zf.extractall(root)\n"
    "os.remove(archive)\n"
)


def model_files(model_path: Path) -> list[Path]:
    """The model file plus what must sit next to it (ONNX external data, an OpenVINO ``.bin``); a directory model
    (``.mlpackage``, SavedModel) is every file in it. One answer for every caller: the format descriptors'
    (:func:`edgeopt.registry.files_by_suffix`)."""
    return files_by_suffix(model_path)


def file_bundle(path: Path, companions: list[Path] | None = None, lone_name: str = "model") -> Bundle:
    """A file (and companions in its directory tree) as one cache entry keyed by content.

    A lone file is keyed by its own SHA-256 and stored as ``<lone_name><suffix>``, so the same bytes under
    another local name are still a cache hit. With companions (or for a directory) the key covers every
    relative path too, since the files find each other by name.
    """
    path = Path(path).resolve()
    base = path.parent
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
    else:
        files = [path, *(c.resolve() for c in (companions or []) if c.resolve() != path)]
    if len(files) == 1 and files[0] == path:
        name = f"{lone_name}{path.suffix}"
        return Bundle(key=sha256_file(path), files=((path, name),), main=name, lone=True)
    pairs = tuple((p, p.relative_to(base).as_posix()) for p in files)
    key = _bundle_key([(rel, sha256_file(p)) for p, rel in pairs])
    return Bundle(key=key, files=pairs, main=path.relative_to(base).as_posix())


def model_bundle(model_path: Path) -> Bundle:
    """The model and its companion files, as one cache entry."""
    model_path = Path(model_path).resolve()
    return file_bundle(model_path, model_files(model_path)[1:] if model_path.is_file() else None)


class _HashingReader:
    """A binary file wrapper that hashes what is read through it."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self.digest.update(data)
        return data


def _exists(sftp: paramiko.SFTPClient, path: str) -> bool:
    try:
        sftp.stat(path)
    except FileNotFoundError:
        return False
    return True


def makedirs(sftp: paramiko.SFTPClient, path: str) -> None:
    """``mkdir -p`` over SFTP."""
    missing: list[str] = []
    p = PurePosixPath(path)
    while str(p) not in ("/", ".", "") and not _exists(sftp, str(p)):
        missing.append(str(p))
        p = p.parent
    for d in reversed(missing):
        try:
            sftp.mkdir(d)
        except OSError:
            if not _exists(sftp, d):  # created meanwhile by a concurrent job is fine
                raise


def rmtree(sftp: paramiko.SFTPClient, path: str) -> None:
    """``rm -rf`` over SFTP (a missing path is fine)."""
    try:
        entries = sftp.listdir_attr(path)
    except FileNotFoundError:
        return
    for entry in entries:
        child = f"{path}/{entry.filename}"
        if entry.st_mode is not None and stat.S_ISDIR(entry.st_mode):
            rmtree(sftp, child)
        else:
            with contextlib.suppress(FileNotFoundError):
                sftp.remove(child)
    with contextlib.suppress(FileNotFoundError):
        sftp.rmdir(path)


def tree_size(sftp: paramiko.SFTPClient, path: str) -> int:
    """Total size in bytes of the files under ``path`` on the device (0 when it is gone)."""
    try:
        entries = sftp.listdir_attr(path)
    except FileNotFoundError:
        return 0
    total = 0
    for entry in entries:
        if entry.st_mode is not None and stat.S_ISDIR(entry.st_mode):
            total += tree_size(sftp, f"{path}/{entry.filename}")
        else:
            total += entry.st_size or 0
    return total


def sweep_stale(sftp: paramiko.SFTPClient, directory: str, prefix: str = "", max_age_s: float = STALE_AFTER_S) -> int:
    """Remove entries of ``directory`` starting with ``prefix`` whose mtime is older than ``max_age_s``."""
    try:
        entries = sftp.listdir_attr(directory)
    except FileNotFoundError:
        return 0
    now, removed = time.time(), 0
    for entry in entries:
        if entry.filename.startswith(prefix) and entry.st_mtime is not None and now - entry.st_mtime > max_age_s:
            rmtree(sftp, f"{directory}/{entry.filename}")
            removed += 1
    return removed


class RemoteCache:
    """The cache directory on a device.

    Args:
        sftp: an open SFTP client (the caller holds the deadline).
        root: absolute cache directory on the device.
        stats: counters updated on every hit, miss and uploaded file.
        progress: receives ``{"event": "phase", "phase": "upload", ...}`` before an upload.
    """

    def __init__(self, sftp: paramiko.SFTPClient, root: str, stats: TransferStats,
                 progress: Callable[[dict[str, Any]], None] | None = None,
                 limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.sftp = sftp
        self.root = root
        self.stats = stats
        self.progress = progress
        self.limit_bytes = limit_bytes
        self._swept = False

    def ensure(self, bundle: Bundle) -> str:
        """The entry's directory on the device, uploading the bundle first if it is not cached yet."""
        target = f"{self.root}/{bundle.key}"
        if self._hit(target):
            return target
        self._upload(bundle, target)
        self.evict(keep=bundle.key)
        return target

    def ensure_packed(self, bundle: Bundle, unpack: Callable[[str, str], None]) -> str:
        """As :meth:`ensure`, but a missing entry travels as one archive (:func:`pack`) that ``unpack(archive,
        directory)`` unpacks on the device (a command run with the device's Python): a few round trips whatever
        the number of files. Same entry layout, same key, so an entry either way is a hit for both."""
        target = f"{self.root}/{bundle.key}"
        if self._hit(target):
            return target
        data = pack(bundle)
        self._place(bundle, target, lambda tmp: self._put_archive(data, tmp, unpack))
        self.evict(keep=bundle.key, keep_bytes=bundle.size_bytes)
        return target

    def _hit(self, target: str) -> bool:
        if not _exists(self.sftp, target):
            return False
        self.stats.cache_hits += 1
        with contextlib.suppress(OSError):  # recency for eviction; a read-only cache still serves hits
            now = time.time()
            self.sftp.utime(target, (now, now))
        return True

    def _put_archive(self, data: bytes, tmp: str, unpack: Callable[[str, str], None]) -> None:
        reader = _HashingReader(io.BytesIO(data))
        attrs = self.sftp.putfo(reader, f"{tmp}/{ARCHIVE_NAME}", confirm=True)  # type: ignore[arg-type]
        if reader.digest.hexdigest() != hashlib.sha256(data).hexdigest() or attrs.st_size != len(data):
            raise InputError(f"the archive uploaded to {tmp} is not the one packed: run again")
        self.stats.uploaded_files += 1
        self.stats.uploaded_bytes += attrs.st_size or 0
        unpack(f"{tmp}/{ARCHIVE_NAME}", tmp)

    def evict(self, keep: str = "", now: float | None = None, keep_bytes: int | None = None) -> int:
        """Remove least recently used entries until the cache fits ``limit_bytes``; the number removed.

        ``keep`` (the entry just placed) and entries used within :data:`KEEP_RECENT_S` are never removed;
        ``keep_bytes``: ``keep``'s size when known (not walked again: a directory listing per folder in it).
        """
        now = time.time() if now is None else now

        def entry_size(name: str) -> int:
            if name == keep and keep_bytes is not None:
                return keep_bytes
            return tree_size(self.sftp, f"{self.root}/{name}")

        entries = [(e.st_mtime or 0, e.filename, entry_size(e.filename))
                   for e in self.sftp.listdir_attr(self.root) if not e.filename.startswith(".")]
        total, removed = sum(size for _, _, size in entries), 0
        for mtime, name, size in sorted(entries):
            if total <= self.limit_bytes:
                break
            if name == keep or now - mtime < KEEP_RECENT_S:
                continue
            rmtree(self.sftp, f"{self.root}/{name}")
            total -= size
            removed += 1
        self.stats.evicted += removed
        return removed

    def _put(self, local: Path, remote: str, tmp: str) -> str:
        """Upload one file; the SHA-256 of the bytes actually sent (the file may have changed since it was
        hashed: the entry's name must match what it holds)."""
        parent = str(PurePosixPath(remote).parent)
        if parent != tmp:
            makedirs(self.sftp, parent)
        with open(local, "rb") as fh:
            reader = _HashingReader(fh)
            attrs = self.sftp.putfo(reader, remote, confirm=True)  # type: ignore[arg-type]  # only .read is used
        self.stats.uploaded_files += 1
        self.stats.uploaded_bytes += attrs.st_size or 0
        return reader.digest.hexdigest()

    def _upload(self, bundle: Bundle, target: str) -> None:
        def put_each(tmp: str) -> None:
            digests = [self._put(local, f"{tmp}/{rel}", tmp) for local, rel in bundle.files]
            if bundle.key_of(digests) != bundle.key:
                changed = ", ".join(str(p) for p, _ in bundle.files)
                raise InputError(f"{changed} changed while it was being uploaded (its content no longer matches "
                                 "the hash taken before): run again once the file is completely written")

        self._place(bundle, target, put_each)

    def _place(self, bundle: Bundle, target: str, fill: Callable[[str], None]) -> None:
        """A fresh temp directory next to the entry, ``fill(tmp)``, then renamed into place (module docstring)."""
        self.stats.cache_misses += 1
        makedirs(self.sftp, self.root)
        if not self._swept:
            sweep_stale(self.sftp, self.root, prefix=".tmp-")
            self._swept = True
        if self.progress is not None:
            self.progress({"event": "phase", "phase": "upload", "files": len(bundle.files),
                           "bytes": bundle.size_bytes, "cache_key": bundle.key})
        tmp = f"{self.root}/.tmp-{bundle.key[:16]}-{uuid.uuid4().hex[:12]}"
        try:
            self.sftp.mkdir(tmp)
            fill(tmp)
            try:
                self.sftp.rename(tmp, target)
            except OSError:
                if not _exists(self.sftp, target):
                    raise
                rmtree(self.sftp, tmp)  # a concurrent job uploaded the same bundle first
        except BaseException:
            with contextlib.suppress(Exception):  # the link may be gone; the sweep removes it later
                rmtree(self.sftp, tmp)
            raise
