"""Runtimes that exist only as source (llama-cpp-python is an sdist: pip compiles llama.cpp on the device, 15-30
minutes on a 4-core ARM board): compiled once per platform, kept on the host, pushed to every other board like it.

The host keeps each built wheel under ``<wheels cache>/built/<key>/`` with a sidecar ``<wheel>.json`` saying which
device built it, when, from which requirement and in how many seconds. The key is the device's CPython version,
architecture and C library plus a hash of its CPU model, its CPU flags and the build's environment (e.g.
``CMAKE_ARGS``): llama.cpp's default build targets the CPU it is compiled on (``GGML_NATIVE``), so a wheel is only
pushed to boards that report the same CPU; pip's own wheel cache keys on the sdist alone and would not tell.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ...errors import InputError
from ...inbound import read_json
from ...untrusted import clean_text
from .remote import DeviceShell

BUILT = "built"
_SPLIT = re.compile(r"[<>=!~;\[ @(]")


@dataclass(frozen=True)
class BuildTarget:
    """What a built wheel must match to be pushed to a device: its platform and CPU, and the build's environment."""

    python: tuple[int, int]
    arch: str
    libc: tuple[str, ...]
    cpu: str
    cpu_flags: tuple[str, ...]
    build_env: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, python: tuple[int, int], env: dict[str, Any], libc: Sequence[str],
           build_env: Sequence[tuple[str, str]]) -> BuildTarget:
        """From the agent probe's ``environment`` (``machine``, ``cpu``, ``cpu_flags``) and setup's facts."""
        return cls(python, str(env.get("machine", "?")), tuple(str(x) for x in libc), str(env.get("cpu") or "?"),
                   tuple(sorted(str(f) for f in env.get("cpu_flags") or ())), tuple(build_env))

    @property
    def key(self) -> str:
        """``cp311-aarch64-glibc2.36-<12 hex>``: the directory of the wheels built for it."""
        digest = hashlib.sha256(json.dumps([self.cpu, self.cpu_flags, self.build_env]).encode()).hexdigest()[:12]
        libc = "".join(self.libc[:2]) or "unknown-libc"
        return f"cp{self.python[0]}{self.python[1]}-{self.arch}-{libc}-{digest}"


def project_of(requirement: str) -> str:
    """The normalised project name of a requirement (``llama-cpp-python==0.3.36`` -> ``llama_cpp_python``), or of an
    sdist path (``/x/probe_pkg-1.0.tar.gz`` -> ``probe_pkg``), as wheel file names spell it."""
    text = requirement.strip()
    if "/" in text or text.endswith((".tar.gz", ".zip")):
        text = PurePosixPath(text).name.rsplit("-", 1)[0]
    return re.sub(r"[-_.]+", "_", _SPLIT.split(text, maxsplit=1)[0]).lower()


def _pinned(requirement: str) -> str | None:
    m = re.search(r"==\s*([A-Za-z0-9_.+!-]+)", requirement)
    return m.group(1) if m else None


def cached_wheel(directory: Path, requirement: str) -> Path | None:
    """The newest wheel of ``requirement``'s project (its pinned version, when pinned) in ``directory``, or None."""
    project, version = project_of(requirement), _pinned(requirement)
    found = [w for w in directory.glob("*.whl") if w.name.split("-")[0].lower() == project
             and (version is None or w.name.split("-")[1] == version)]
    return max(found, key=lambda w: w.stat().st_mtime) if found else None


def requires(wheel: Path) -> list[str]:
    """The unconditional dependencies a wheel declares (``Requires-Dist`` without an ``extra`` marker)."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8", "replace") if meta else ""
    out = []
    for line in text.splitlines():
        if line.startswith("Requires-Dist:") and "extra ==" not in line:
            out.append(line.split(":", 1)[1].split(";")[0].strip())
    return out


def _origin(wheel: Path) -> str:
    try:
        info = read_json(wheel.with_name(wheel.name + ".json"))
        return f"built on {clean_text(str(info['device']), limit=80)} in {float(info['seconds']):.0f} s"
    except (OSError, ValueError, KeyError, TypeError):
        return "built earlier"


def install_compiled(shell: DeviceShell, requirements: Sequence[str], target: BuildTarget, cache_root: Path, *,
                     device: str, offline: bool, say: Callable[[str], None]) -> list[str]:
    """Install source-only ``requirements`` into the device's venv: the host's wheel for this platform and CPU when
    it has one (pushed; nothing compiles), else compiled on the device once and kept on the host. The actions.

    Raises:
        InputError: offline, with no wheel built for this platform yet (a build needs the device's index).
        RunnerError: the build or the install failed on the device.
    """
    directory = cache_root / BUILT / target.key
    actions = []
    for req in requirements:
        wheel = cached_wheel(directory, req) if directory.is_dir() else None
        if wheel is not None:
            say(f"pushing {wheel.name} ({_origin(wheel)}) instead of compiling {req}")
            shell.push_wheels([wheel])
            shell.pip_install([f"{shell.wheels}/{wheel.name}"], offline=offline)  # a wheel file is a requirement
            actions.append(f"installed {wheel.name} from the host ({_origin(wheel)}; {directory}): nothing compiled")
            continue
        if offline:
            raise InputError(f"{req} compiles from source, which needs a package index on {device} (its build tools), "
                             f"and no wheel of it was built for {target.key} yet: run devices setup online once on "
                             "one board of this kind; its wheel is then pushed to offline boards (docs/devices.md)")
        say(f"compiling {req} on {device} (llama.cpp: 15-30 min on a 4-core ARM board); the wheel is kept on the host "
            "for every board of the same platform and CPU")
        start = time.monotonic()
        remote = shell.build_wheel(req, target.build_env)
        seconds = time.monotonic() - start
        local = shell.fetch(remote, directory / PurePosixPath(remote).name)
        sidecar = {"device": device, "seconds": round(seconds, 1), "requirement": req,
                   "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "build_env": dict(target.build_env)}
        tmp = local.with_name(f".tmp-{local.name}.json")
        tmp.write_text(json.dumps(sidecar, indent=2) + "\n")
        tmp.replace(local.with_name(local.name + ".json"))
        shell.pip_install([remote], offline=False)
        actions.append(f"compiled {local.name} on {device} in {seconds:.0f} s; kept in {directory} for boards of the "
                       "same platform and CPU")
    return actions
