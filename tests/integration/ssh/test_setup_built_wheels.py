"""A source-only runtime (llama-cpp-python is an sdist) compiles on the first board of a platform only: the host
keeps the wheel and pushes it to the next board of the same platform and CPU, which compiles nothing.

Two loopback devices (real sshd, SFTP, each with its own venv made by setup's own shell); the "runtime" is a
real sdist built here (a small setuptools package), compiled by the device's pip exactly as llama-cpp-python is.
Needs a package index for pip's isolated build (setuptools), as a board compiling llama.cpp does.
"""

from __future__ import annotations

import io
import json
import tarfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.devices.loader import load_inventory
from edgeopt.devices.setup.built_wheels import BUILT, BuildTarget, cached_wheel, install_compiled
from edgeopt.devices.setup.remote import BUILT_DIR, DeviceShell
from edgeopt.errors import InputError
from edgeopt.runners.ssh_session import SshSession
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

pytestmark = pytest.mark.heavy  # LLM exports or a device's pip install: make test-heavy (in CI)

ENV = {"machine": "x86_64", "cpu": "Test CPU 9000", "cpu_flags": ["avx2", "fma"]}


def _sdist(where: Path) -> Path:
    """``probe_built-1.0.tar.gz``: a setup.py package whose module says it was built."""
    files = {
        "probe_built-1.0/setup.py": "from setuptools import setup\nsetup(name='probe_built', version='1.0', "
                                    "py_modules=['probe_built'])\n",
        "probe_built-1.0/probe_built.py": "BUILT = 'yes'\n",
        "probe_built-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: probe_built\nVersion: 1.0\n",
    }
    path = where / "probe_built-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = textwrap.dedent(text).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 2) as lab:
        yield lab


def _shell(lab: Lab, name: str, session: SshSession) -> DeviceShell:
    shell = DeviceShell(session, str(lab[name].python), str(lab[name].workdir))
    shell.create_venv(with_pip=True)
    if not shell.index_reachable():
        pytest.skip("no package index reachable: pip's isolated build of an sdist needs setuptools from it")
    return shell


def _imports(shell: DeviceShell) -> str:
    out = shell._run([shell.venv_python, "-c", "import probe_built; print(probe_built.BUILT)"], what="import")
    return out.stdout.strip()


def test_the_first_board_compiles_and_the_next_one_gets_the_wheel(lab: Lab, tmp_path: Path):
    sdist = _sdist(tmp_path)
    cache = tmp_path / "host-wheels"
    target = BuildTarget.of((3, 11), ENV, ["glibc", "2.36"], [("CMAKE_ARGS", "-DLLAVA_BUILD=OFF")])
    devices = load_inventory(lab.inventory, setup_state=False)
    said: list[str] = []
    for name in ("lab-00", "lab-01"):
        address = devices.get(name).address()
        with SshSession(address, known_hosts=lab.known_hosts) as session:
            shell = _shell(lab, name, session)
            actions = install_compiled(shell, [str(sdist)], target, cache, device=name, offline=False,
                                       say=said.append)
            assert _imports(shell) == "yes"
        if name == "lab-00":  # compiled there, fetched back with who built it and how long it took
            assert actions[0].startswith("compiled probe_built-1.0-") and "on lab-00 in" in actions[0]
            assert (lab["lab-00"].workdir / BUILT_DIR).is_dir()
            wheel = cached_wheel(cache / BUILT / target.key, str(sdist))
            assert wheel is not None and wheel.name.startswith("probe_built-1.0-")
            origin = json.loads(wheel.with_name(wheel.name + ".json").read_text())
            assert origin["device"] == "lab-00" and origin["seconds"] >= 0
            assert origin["build_env"] == {"CMAKE_ARGS": "-DLLAVA_BUILD=OFF"}
        else:  # pushed, nothing compiled on the second board
            assert actions[0].startswith(f"installed {wheel.name} from the host (built on lab-00 in")
            assert actions[0].endswith("nothing compiled")
            assert not (lab["lab-01"].workdir / BUILT_DIR).exists()
            assert (lab["lab-01"].workdir / "wheels" / wheel.name).is_file()
    assert any(line.startswith("compiling ") for line in said) and any(line.startswith("pushing ") for line in said)


def test_the_cache_keys_on_the_cpu_and_the_build_env_and_offline_needs_a_built_wheel(lab: Lab, tmp_path: Path):
    base = BuildTarget.of((3, 11), ENV, ["glibc", "2.36"], [])
    other_cpu = BuildTarget.of((3, 11), {**ENV, "cpu_flags": ["avx2"]}, ["glibc", "2.36"], [])
    other_env = BuildTarget.of((3, 11), ENV, ["glibc", "2.36"], [("CMAKE_ARGS", "-DGGML_NATIVE=OFF")])
    assert len({base.key, other_cpu.key, other_env.key}) == 3 and base.key.startswith("cp311-x86_64-glibc2.36-")
    devices = load_inventory(lab.inventory, setup_state=False)
    with SshSession(devices.get("lab-00").address(), known_hosts=lab.known_hosts) as session:
        shell = DeviceShell(session, str(lab["lab-00"].python), str(lab["lab-00"].workdir))
        with pytest.raises(InputError) as info:
            install_compiled(shell, ["llama-cpp-python==0.3.36"], base, tmp_path / "empty", device="lab-00",
                             offline=True, say=lambda _: None)
    message = str(info.value)
    assert "llama-cpp-python==0.3.36 compiles from source" in message and base.key in message
    assert "run devices setup online once on one board of this kind" in message and "\n" not in message
