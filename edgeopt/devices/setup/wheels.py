"""Wheels for a device that cannot reach a package index: downloaded on the host for the device's platform.

``pip download --only-binary=:all: --python-version X.Y --implementation cp --abi cpXY --platform <tags>``
resolves numpy and the runtimes (with their dependencies) for the device's CPython, glibc and architecture
into a cache directory per platform, so a second device of the same kind needs no download at all.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ...errors import InputError, RunnerError

# Oldest manylinux each architecture has wheels for (manylinux1 = glibc 2.5; manylinux2014 = 2.17).
_OLDEST_GLIBC_MINOR = {"x86_64": 5, "i686": 5, "aarch64": 17, "armv7l": 17, "ppc64le": 17, "s390x": 17}
_LEGACY = {5: "manylinux1", 12: "manylinux2010", 17: "manylinux2014"}
DOWNLOAD_TIMEOUT_S = 1800.0


def platform_tags(arch: str, libc: Sequence[str]) -> list[str]:
    """The manylinux platform tags a device with this architecture and C library can install, newest first.

    Raises:
        InputError: not glibc (e.g. musl/Alpine) or an architecture without manylinux wheels.
    """
    name, version = (list(libc) + ["", ""])[:2]
    if name != "glibc" or not version:
        raise InputError(f"the device's C library is {name or 'unknown'} {version}: offline setup downloads "
                         "manylinux (glibc) wheels only; pass --wheels DIR with wheels built for the device")
    if arch not in _OLDEST_GLIBC_MINOR:
        raise InputError(f"no manylinux wheels exist for {arch}: pass --wheels DIR with wheels for the device")
    major, minor = (int(x) for x in version.split(".")[:2])
    oldest = _OLDEST_GLIBC_MINOR[arch]
    tags = []
    for m in range(minor, oldest - 1, -1):
        tags.append(f"manylinux_{major}_{m}_{arch}")
        if m in _LEGACY and major == 2:
            tags.append(f"{_LEGACY[m]}_{arch}")
    return tags


def cache_dir(root: Path, *, python: tuple[int, int], arch: str, libc: Sequence[str]) -> Path:
    """``<root>/cp311-aarch64-glibc2.36``: one directory per device platform."""
    return Path(root) / f"cp{python[0]}{python[1]}-{arch}-{libc[0]}{libc[1]}"


def download(requirements: Sequence[str], dest: Path, *, python: tuple[int, int], arch: str, libc: Sequence[str],
             host_python: str | None = None, timeout_s: float = DOWNLOAD_TIMEOUT_S) -> list[Path]:
    """Download wheels for ``requirements`` (and their dependencies) for the device's platform into ``dest``.

    Raises:
        InputError: an unsupported platform (use --wheels DIR).
        RunnerError: pip failed (no index reachable, no wheel for this platform): the message has pip's last line.
    """
    dest.mkdir(parents=True, exist_ok=True)
    py = f"{python[0]}{python[1]}"
    cmd = [host_python or sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--dest", str(dest),
           "--only-binary=:all:", "--python-version", f"{python[0]}.{python[1]}", "--implementation", "cp",
           "--abi", f"cp{py}", "--abi", "abi3", "--abi", "none"]
    for tag in platform_tags(arch, libc):
        cmd += ["--platform", tag]
    try:
        out = subprocess.run([*cmd, *requirements], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RunnerError(f"pip download for the device did not finish within {timeout_s:.0f} s: check the host's "
                          "network, or pass --wheels DIR") from None
    if out.returncode != 0:
        last = [line for line in (out.stderr or out.stdout).splitlines() if line.strip()][-1:] or ["(no output)"]
        raise RunnerError(f"pip download of {' '.join(requirements)} for cp{py} {arch} failed on the host: "
                          f"{last[0].strip()}; pass --wheels DIR with wheels for the device")
    return local_wheels(dest)


def local_wheels(directory: Path) -> list[Path]:
    """The ``.whl`` files of a directory (what is pushed to the device).

    Raises:
        InputError: the directory does not exist or holds no wheels.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"--wheels {directory}: no such directory; give a directory of .whl files")
    wheels = sorted(directory.glob("*.whl"))
    if not wheels:
        raise InputError(f"--wheels {directory}: no .whl files there; fill it with pip download (docs/fleet.md)")
    return wheels
