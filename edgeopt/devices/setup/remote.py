"""Setup's steps on the device, over one SSH session where every step has a deadline.

Everything is installed into ``<workdir>/venv``, created with ``--system-site-packages`` so vendor packages
from apt (JetPack's TensorRT, Coral's PyCoral) stay visible. Every pip command runs the venv's own interpreter
(checked to live under the work dir): the system Python is only ever used to create the venv.

Device layout added by setup::

    <workdir>/venv/                 the venv (bin/python is what later runs use)
    <workdir>/wheels/*.whl          wheels pushed by an offline setup, or a wheel built on another board of the
                                    same platform (kept: a re-run pushes nothing)
    <workdir>/built/*.whl           a source-only runtime compiled here (fetched back to the host's cache)
    <workdir>/setup.json            what setup did last: interpreter, packages, mode, time
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ... import jsonio
from ...errors import RunnerError
from ...runners.limits import PROBE_STDOUT_BYTES, ReadLimits
from ...runners.ssh_cache import makedirs
from ...runners.ssh_session import ExecResult, SshSession

REMOTE_PATH = "/usr/bin:/bin"
VENV_DIR = "venv"
WHEELS_DIR = "wheels"
BUILT_DIR = "built"
STATE_FILE = "setup.json"
STATE_MAX_BYTES = 1024 * 1024  # the setup record on the device: a few KiB
PIP_TIMEOUT_S = 1800.0
STEP_TIMEOUT_S = 300.0

# Run by the device's system interpreter (Python 3.8+, standard library only): what setup needs to know.
_FACTS = r"""
import json, os, platform, sys
def has(mod):
    try:
        __import__(mod)
        return True
    except Exception:
        return False
venv = sys.argv[1]
print(json.dumps({"libc": list(platform.libc_ver()), "machine": platform.machine(),
                  "python": "%d.%d.%d" % sys.version_info[:3], "venv_module": has("venv"),
                  "ensurepip": has("ensurepip"), "venv_exists": os.path.exists(os.path.join(venv, "bin", "python"))}))
"""


class DeviceShell:
    """Setup's commands on one device.

    Args:
        session: a connected session.
        base_python: the device's system interpreter (only used to create the venv and read facts).
        workdir: the absolute agent work dir on the device.
    """

    def __init__(self, session: SshSession, base_python: str, workdir: str) -> None:
        self.s = session
        self.base_python = base_python
        self.workdir = workdir
        self.venv = f"{workdir}/{VENV_DIR}"
        self.venv_python = f"{self.venv}/bin/python"
        self.wheels = f"{workdir}/{WHEELS_DIR}"

    def _run(self, words: Sequence[str], *, what: str, timeout_s: float = STEP_TIMEOUT_S, clean_env: bool = True,
             check: bool = True, env: Sequence[tuple[str, str]] = ()) -> ExecResult:
        prefix = ["env", "-i", f"PATH={REMOTE_PATH}", "PIP_DISABLE_PIP_VERSION_CHECK=1"] if clean_env else []
        if env:
            prefix = [*(prefix or ["env"]), *(f"{k}={v}" for k, v in env)]
        command = "exec " + " ".join(shlex.quote(w) for w in [*prefix, *words])
        result = self.s.execute(command, what=what, timeout_s=timeout_s, limits=ReadLimits.for_setup())
        if check and result.status != 0:
            raise RunnerError(f"{what} failed on {self.s.where} (exit {result.status}): "
                              f"{result.stderr_tail or result.stdout.strip()[-300:] or '(no output)'}")
        return result

    def facts(self) -> dict[str, Any]:
        """libc, machine, Python version, whether ``venv``/``ensurepip`` exist and the venv is already there."""
        out = self._run([self.base_python, "-c", _FACTS, self.venv], what="reading the device's Python facts")
        try:
            data: Any = jsonio.loads(out.stdout.strip().splitlines()[-1], max_bytes=PROBE_STDOUT_BYTES)
        except (ValueError, IndexError, RecursionError):
            raise RunnerError(f"{self.base_python} on {self.s.where} printed no facts: it needs Python 3.8+") from None
        return data if isinstance(data, dict) else {}

    def venv_works(self) -> bool:
        return self._run([self.venv_python, "-c", "import sys"], what="checking the venv", check=False).status == 0

    def create_venv(self, *, with_pip: bool) -> None:
        """``<base> -m venv --system-site-packages [--without-pip] --clear <workdir>/venv``."""
        flags = ["--system-site-packages", "--clear", *([] if with_pip else ["--without-pip"])]
        self._run([self.base_python, "-m", "venv", *flags, self.venv], what="creating the venv")

    def has_pip(self) -> bool:
        return self._run([self.venv_python, "-m", "pip", "--version"], what="looking for pip in the venv",
                         check=False).status == 0

    def index_reachable(self) -> bool:
        """Whether the venv's pip can query a package index (with the login's own pip configuration)."""
        res = self._run([self.venv_python, "-m", "pip", "index", "versions", "numpy", "--timeout", "10",
                         "--retries", "0"], what="asking the package index", timeout_s=60, clean_env=False,
                        check=False)
        return res.status == 0

    def push_wheels(self, wheels: Sequence[Path]) -> int:
        """Upload wheels not already there (same name and size); each into a temp name, then renamed."""
        with self.s.step(f"uploading wheels to {self.s.where}", PIP_TIMEOUT_S):
            makedirs(self.s.sftp, self.wheels)
            there = {a.filename: a.st_size for a in self.s.sftp.listdir_attr(self.wheels)}
            pushed = 0
            for wheel in wheels:
                if there.get(wheel.name) == wheel.stat().st_size:
                    continue
                tmp = f"{self.wheels}/.tmp-{uuid.uuid4().hex[:8]}-{wheel.name}"
                self.s.sftp.put(str(wheel), tmp, confirm=True)
                self.s.sftp.posix_rename(tmp, f"{self.wheels}/{wheel.name}")
                pushed += 1
        return pushed

    def pip_install(self, requirements: Sequence[str], *, offline: bool, pip_wheel: str | None = None) -> None:
        """Install into the venv: from the pushed wheels only (offline) or from the device's index.

        ``pip_wheel``: a pushed pip wheel to run pip from, for a venv made without pip (no ensurepip there).
        """
        if not self.venv_python.startswith(f"{self.workdir}/"):  # never the system interpreter
            raise RunnerError(f"refusing to pip install with {self.venv_python}: not a venv under {self.workdir}")
        pip = [self.venv_python, f"{pip_wheel}/pip"] if pip_wheel else [self.venv_python, "-m", "pip"]
        source = ["--no-index", "--find-links", self.wheels] if offline else []
        self._run([*pip, "install", "--disable-pip-version-check", "--no-input", *source, *requirements],
                  what=f"pip install {' '.join(requirements)}", timeout_s=PIP_TIMEOUT_S, clean_env=not offline)

    def build_wheel(self, requirement: str, env: Sequence[tuple[str, str]]) -> str:
        """Compile ``requirement`` (a source-only package) into a wheel under ``<workdir>/built`` with the venv's
        pip and the device's own compiler (``pip wheel --no-deps``; minutes for llama.cpp); its remote path.

        Raises:
            RunnerError: the build failed (pip's last lines), or it made no wheel.
        """
        built = f"{self.workdir}/{BUILT_DIR}"
        with self.s.step(f"preparing {built} on {self.s.where}", STEP_TIMEOUT_S):
            makedirs(self.s.sftp, built)
            before = set(self.s.sftp.listdir(built))
        self._run([self.venv_python, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--no-input",
                   "-w", built, requirement], what=f"building a wheel of {requirement} (compiles on the device)",
                  timeout_s=PIP_TIMEOUT_S, clean_env=False, env=env)
        with self.s.step(f"listing {built} on {self.s.where}", STEP_TIMEOUT_S):
            made = sorted(n for n in set(self.s.sftp.listdir(built)) - before if n.endswith(".whl"))
            made = made or sorted(n for n in self.s.sftp.listdir(built) if n.endswith(".whl"))
        if not made:
            raise RunnerError(f"pip wheel {requirement} on {self.s.where} finished but left no wheel in {built}")
        return f"{built}/{made[-1]}"

    def fetch(self, remote: str, local: Path) -> Path:
        """Copy a file from the device to ``local`` (a temp name, then renamed: never half a wheel)."""
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f".tmp-{uuid.uuid4().hex[:8]}-{local.name}")
        with self.s.step(f"fetching {remote} from {self.s.where}", PIP_TIMEOUT_S):
            self.s.sftp.get(remote, str(tmp))
        tmp.replace(local)
        return local

    def remote_wheel(self, prefix: str) -> str | None:
        """The pushed wheel whose name starts with ``prefix`` (e.g. ``pip-``), or None."""
        with self.s.step(f"listing wheels on {self.s.where}", STEP_TIMEOUT_S):
            try:
                names = sorted(self.s.sftp.listdir(self.wheels))
            except FileNotFoundError:
                return None
        found = [n for n in names if n.startswith(prefix) and n.endswith(".whl")]
        return f"{self.wheels}/{found[-1]}" if found else None

    def read_state(self) -> dict[str, Any] | None:
        with self.s.step(f"reading {STATE_FILE} on {self.s.where}", STEP_TIMEOUT_S):
            try:
                with self.s.sftp.open(f"{self.workdir}/{STATE_FILE}", "r") as fh:
                    data: Any = jsonio.loads(fh.read(STATE_MAX_BYTES + 1).decode("utf-8", "replace"),
                                             max_bytes=STATE_MAX_BYTES)
            except (FileNotFoundError, ValueError):
                return None
        return data if isinstance(data, dict) else None

    def write_state(self, data: dict[str, Any]) -> str:
        """Write ``<workdir>/setup.json`` atomically (temp file + rename); returns its path."""
        path = f"{self.workdir}/{STATE_FILE}"
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
        with self.s.step(f"writing {STATE_FILE} on {self.s.where}", STEP_TIMEOUT_S):
            makedirs(self.s.sftp, str(PurePosixPath(path).parent))
            with self.s.sftp.open(tmp, "w") as fh:
                fh.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
            self.s.sftp.posix_rename(tmp, path)
        return path
