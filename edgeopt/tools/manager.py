"""Create, check and call the isolated tool venvs under ``<tools_dir>/<tool>`` (default
``~/.cache/edgeopt/tools``; ``EDGEOPT_TOOLS_DIR`` or ``XDG_CACHE_HOME`` override it, read in :mod:`edgeopt.config`).

A tool env is a plain venv with the pinned ``<tool>-requirements.txt`` shipped in this package installed; a
``.edgeopt-tool.json`` stamp written last (atomically) records the requirements' hash, so a half-finished
install or one with other pins reads as "not installed".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .. import jsonio
from ..config import from_environment
from ..errors import EdgeoptError, InputError
from ..fsutil import atomic_write_text
from ..inbound import read_json

HERE = Path(__file__).parent
STAMP = ".edgeopt-tool.json"
REPLY_MAX_BYTES = 1024 * 1024  # a tool driver's one-line JSON reply
# tool name -> (requirements file, driver script), both in this package.
TOOLS: dict[str, tuple[str, str]] = {"tflite": ("tflite-requirements.txt", "tflite_driver.py")}


class ToolNotInstalledError(InputError):
    """A converter's tool environment is missing or stale."""


class ToolError(EdgeoptError):
    """A tool env install or a tool run failed."""


class ToolStatus(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Tool name.")
    path: str = Field(description="The tool's venv directory.")
    installed: bool = Field(description="The venv exists with the pinned requirements installed.")
    stale: bool = Field(description="Installed with other pins than this edgeopt's (reinstall).")
    size_bytes: int | None = Field(default=None, description="Disk use of the venv.")
    install_seconds: float | None = Field(default=None, description="How long the install took.")
    requirements: list[str] = Field(description="Pinned requirements.")


def _check(name: str) -> tuple[str, str]:
    if name not in TOOLS:
        raise InputError(f"unknown tool {name!r}; known tools: {', '.join(TOOLS)}")
    return TOOLS[name]


def tools_dir() -> Path:
    """Root of the tool envs (from the environment, see :mod:`edgeopt.config`)."""
    return from_environment().tools_dir or Path.home() / ".cache" / "edgeopt" / "tools"


def requirements(name: str) -> list[str]:
    """The pinned requirement lines of ``name``."""
    text = (HERE / _check(name)[0]).read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def _pins_hash(name: str) -> str:
    return hashlib.sha256("\n".join(requirements(name)).encode()).hexdigest()[:16]


def _python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def tool_status(name: str, *, root: Path | None = None, measure: bool = False) -> ToolStatus:
    """Whether tool ``name`` is installed (and with this edgeopt's pins)."""
    _check(name)
    env = (root or tools_dir()) / name
    stamp: dict[str, object] = {}
    with contextlib.suppress(OSError, ValueError):
        stamp = read_json(env / STAMP)
    installed = bool(stamp) and _python(env).exists()
    size = sum(p.stat().st_size for p in env.rglob("*") if p.is_file() and not p.is_symlink()) if (
        measure and installed) else None
    seconds = stamp.get("install_seconds")
    return ToolStatus(name=name, path=str(env), installed=installed,
                      stale=installed and stamp.get("pins") != _pins_hash(name), size_bytes=size,
                      install_seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
                      requirements=requirements(name))


def install_tool(name: str, *, root: Path | None = None, python: str | None = None, log: object = None) -> ToolStatus:
    """Create the venv of ``name`` and install its pinned requirements (pip from PyPI).

    Raises:
        ToolError: venv creation or pip failed (pip's last lines in the message).
    """
    _check(name)
    env = (root or tools_dir()) / name
    env.parent.mkdir(parents=True, exist_ok=True)
    (env / STAMP).unlink(missing_ok=True)
    started = time.perf_counter()
    steps = [
        [python or sys.executable, "-m", "venv", "--clear", str(env)],
        [str(_python(env)), "-m", "pip", "install", "--disable-pip-version-check", "-q",
         "-r", str(HERE / TOOLS[name][0])],
    ]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])[:400]
            raise ToolError(f"installing tool {name} into {env} failed ({tail}); check network access to PyPI "
                            f"and rerun: edgeopt tools install {name}")
    seconds = round(time.perf_counter() - started, 1)
    atomic_write_text(env / STAMP, json.dumps({"pins": _pins_hash(name), "install_seconds": seconds}) + "\n")
    return tool_status(name, root=root, measure=True)


def run_tool(name: str, request: dict[str, object], *, root: Path | None = None, timeout_s: float = 1800) -> dict[
        str, object]:
    """Run tool ``name``'s driver in its venv with ``request`` (JSON on stdin); return its JSON reply.

    Raises:
        ToolNotInstalledError: the env is missing or stale ("run: edgeopt tools install NAME").
        ToolError: the driver failed or timed out.
    """
    status = tool_status(name, root=root)
    if not status.installed or status.stale:
        why = "is not installed" if not status.installed else "was installed with other pins"
        raise ToolNotInstalledError(f"the {name} converter environment {why} ({status.path}); run: edgeopt tools "
                                    f"install {name}")
    driver = HERE / TOOLS[name][1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1")
    try:
        proc = subprocess.run([str(_python(Path(status.path))), str(driver)], input=json.dumps(request),
                              capture_output=True, text=True, timeout=timeout_s, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ToolError(f"tool {name} timed out after {timeout_s:.0f} s") from exc
    lines = [ln for ln in proc.stdout.strip().splitlines() if ln.startswith("{")]
    try:
        reply: dict[str, object] = jsonio.loads(lines[-1], max_bytes=REPLY_MAX_BYTES) if lines else {}
    except ValueError:
        reply = {}
    if proc.returncode != 0 or not reply.get("ok"):
        err = reply.get("error") or " ".join(proc.stderr.strip().splitlines()[-3:])[:500]
        raise ToolError(f"tool {name} failed: {err}")
    return reply
