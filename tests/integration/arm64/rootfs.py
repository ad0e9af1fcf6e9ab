"""A cached Debian 12 arm64 root file system for the emulated board: qemu-user through binfmt_misc + debootstrap.

Two layers, each built into a temp directory and renamed into place, so an interrupted build never leaves a half
one behind (and the next run starts that layer again):

- base: ``debootstrap --arch=arm64 --variant=minbase --include=python3,openssh-server bookworm`` (~2.5 min,
  ~300 MB), at ``<cache>/arm64-rootfs-<BASE_RECIPE>``; a changed recipe string means a new directory.
- wheels: numpy and onnxruntime aarch64 wheels for CPython 3.11, installed from the host with
  ``pip --platform manylinux_2_28_aarch64 --target`` into ``/opt/edgeopt-wheels/<versions>`` inside the rootfs and
  put on Debian's ``sys.path`` by a ``.pth`` file (the agent runs with ``env -i``, so no PYTHONPATH from us).

Builds are serialized with a file lock in the cache directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

CACHE_DIR = Path(os.environ.get("EDGEOPT_ARM64_CACHE", "/var/cache/edgeopt-test"))
BASE_RECIPE = "bookworm-minbase-python3-openssh-v1"
MIRROR = "http://deb.debian.org/debian"
BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")
BINFMT_CONF = Path("/usr/lib/binfmt.d/qemu-aarch64.conf")
QEMU = Path("/usr/bin/qemu-aarch64-static")
DEVICE_PYTHON = "/usr/bin/python3"
PTH = "usr/lib/python3/dist-packages/edgeopt-wheels.pth"


class Unavailable(Exception):
    """This machine cannot host the emulated board (the tests skip with this message)."""


def _run(cmd: list[str], *, timeout_s: float, log: Path | None = None) -> None:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if log is not None:
        log.write_text(out.stdout + out.stderr)
    if out.returncode != 0:
        tail = (out.stdout + out.stderr)[-3000:]
        raise RuntimeError(f"`{' '.join(cmd[:3])} ...` exited with {out.returncode}:\n{tail}")


def preflight() -> None:
    """Raise :class:`Unavailable` unless root, debootstrap, qemu-user-static and aarch64 binfmt are all there."""
    if os.geteuid() != 0:
        raise Unavailable("the arm64 board needs root (debootstrap, chroot, binfmt_misc, network namespaces)")
    for tool, pkg in (("debootstrap", "debootstrap"), ("ip", "iproute2"), ("ssh-keygen", "openssh-client")):
        if not shutil.which(tool):
            raise Unavailable(f"{tool} is not installed: run `make test-arm64` as root (or apt-get install {pkg})")
    if not QEMU.exists() or not BINFMT_CONF.exists():
        raise Unavailable(f"{QEMU} or {BINFMT_CONF} missing: run `make test-arm64` as root "
                          "(or apt-get install qemu-user-static binfmt-support)")
    register_binfmt()


def register_binfmt() -> None:
    """Make the kernel run aarch64 ELF files through qemu (mount binfmt_misc, register qemu-aarch64, flags POF).

    Left registered afterwards: it is machine-wide state that other users of qemu may rely on.
    """
    entry = BINFMT_DIR / "qemu-aarch64"
    if not (BINFMT_DIR / "register").exists():
        out = subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT_DIR)], capture_output=True,
                             text=True, timeout=30)
        if out.returncode != 0:
            raise Unavailable(f"cannot mount binfmt_misc on {BINFMT_DIR}: {out.stderr.strip()}")
    if not entry.exists():
        line = next((ln for ln in BINFMT_CONF.read_text().splitlines() if ln.startswith(":")), "")
        try:
            (BINFMT_DIR / "register").write_text(line)
        except OSError as exc:
            raise Unavailable(f"cannot register qemu-aarch64 in binfmt_misc ({exc}): a container without "
                              "--privileged cannot; run on a VM or host") from exc
    if not entry.read_text().startswith("enabled"):
        raise Unavailable(f"{entry} is disabled: `echo 1 > {entry}` as root")


def require_network(host: str = "deb.debian.org", port: int = 80) -> None:
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise Unavailable(f"offline: cannot reach {host}:{port} to build the arm64 rootfs ({exc})") from exc


def _mounts_under(path: Path) -> list[str]:
    prefix = str(path.resolve()) + "/"
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1].startswith(prefix)]


def _remove_partial(path: Path) -> None:
    """Remove a half-built layer; unmount first whatever debootstrap left mounted there (never rm through /proc)."""
    for mount in sorted(_mounts_under(path), reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True, timeout=30)
    if _mounts_under(path):
        raise RuntimeError(f"{path} still has mounts inside ({_mounts_under(path)}); unmount them and delete it")
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        yield


def wheels_key() -> str:
    """The device's wheels follow the host's versions, so both sides run the same runtime."""
    return f"numpy-{version('numpy')}_onnxruntime-{version('onnxruntime')}"


def _build_base(final: Path, progress: list[str]) -> None:
    require_network()
    tmp = final.with_name(f".building-{final.name}")
    _remove_partial(tmp)
    start = time.monotonic()
    _run(["debootstrap", "--arch=arm64", "--variant=minbase", "--include=python3,openssh-server", "bookworm",
          str(tmp), MIRROR], timeout_s=1800, log=final.with_name(f"{final.name}.debootstrap.log"))
    if _mounts_under(tmp):
        raise RuntimeError(f"debootstrap left mounts under {tmp}: {_mounts_under(tmp)}")
    tmp.rename(final)
    progress.append(f"debootstrap {time.monotonic() - start:.0f} s")


def _install_wheels(rootfs: Path, progress: list[str]) -> None:
    key = wheels_key()
    final = rootfs / "opt" / "edgeopt-wheels" / key
    pth = rootfs / PTH
    if not final.is_dir():
        require_network("pypi.org", 443)
        tmp = final.with_name(f".building-{key}")
        shutil.rmtree(tmp, ignore_errors=True)
        start = time.monotonic()
        _run([sys.executable, "-m", "pip", "install", "-q", "--no-compile", "--target", str(tmp),
              "--platform", "manylinux_2_28_aarch64", "--platform", "manylinux2014_aarch64",
              "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", "--only-binary=:all:",
              f"numpy=={version('numpy')}", f"onnxruntime=={version('onnxruntime')}"],
             timeout_s=900)
        tmp.rename(final)
        progress.append(f"pip aarch64 wheels {time.monotonic() - start:.0f} s")
    want = f"/opt/edgeopt-wheels/{key}\n"
    if not pth.exists() or pth.read_text() != want:
        tmp_pth = pth.with_suffix(".tmp")
        tmp_pth.write_text(want)
        tmp_pth.rename(pth)


def ensure_rootfs(cache: Path = CACHE_DIR) -> tuple[Path, list[str]]:
    """The cached rootfs (built if missing) and what was built this time, with durations."""
    progress: list[str] = []
    final = cache / f"arm64-rootfs-{BASE_RECIPE}"
    with _locked(cache):
        if not final.is_dir():
            _build_base(final, progress)
        _install_wheels(final, progress)
    return final, progress
