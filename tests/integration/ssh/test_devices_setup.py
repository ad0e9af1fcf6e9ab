"""``edgeopt devices setup --offline`` on a loopback device whose Python is the bare system one.

The device is an sshd on 127.0.0.1 whose inventory entry names no ``python:``, so the agent runs with
``/usr/bin/python3`` (Debian's, without numpy here). Setup builds ``<workdir>/venv`` from it and installs numpy +
onnxruntime from a local wheel directory pushed over SFTP; afterwards ``edgeopt bench --device`` runs there
without ``--python``, and the system interpreter is exactly as it was.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from edgeopt.devices.setup.wheels import download
from edgeopt.errors import EdgeoptError
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

SYSTEM_PYTHON = "/usr/bin/python3"


def _python_facts() -> tuple[tuple[int, int], bool]:
    out = subprocess.run([SYSTEM_PYTHON, "-c", "import sys, importlib.util as u; print(sys.version_info[0], "
                          "sys.version_info[1], u.find_spec('numpy') is not None, u.find_spec('venv') is not None)"],
                         capture_output=True, text=True, timeout=30)
    major, minor, has_numpy, has_venv = out.stdout.split()
    if has_venv != "True":
        pytest.skip(f"{SYSTEM_PYTHON} has no venv module (apt-get install python3-venv)")
    return (int(major), int(minor)), has_numpy == "True"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """numpy + onnxruntime (and dependencies) for the system Python, through the host's pip and its index."""
    if not Path(SYSTEM_PYTHON).exists():
        pytest.skip(f"{SYSTEM_PYTHON} does not exist here")
    version, _ = _python_facts()
    dest = tmp_path_factory.mktemp("wheels")
    try:
        download(["numpy", "onnxruntime"], dest, python=version, arch=platform.machine(),
                 libc=list(platform.libc_ver()), timeout_s=600)
    except EdgeoptError as exc:
        pytest.skip(f"no wheels for the system Python could be downloaded (offline?): {exc}")
    return dest


@pytest.fixture()
def bare(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 1, python=None) as lab:
        yield lab


def _cli(lab: Lab, *args: str) -> list[str]:
    return [*args, "--inventory", str(lab.inventory), "--known-hosts", str(lab.known_hosts)]


@pytest.mark.heavy  # a pip install on the device: make test-heavy (in CI)
def test_offline_setup_then_bench_without_python(bare: Lab, wheels: Path, tiny_cnn: Path, capsys):
    _, system_has_numpy = _python_facts()
    device = bare["lab-00"]
    bench = _cli(bare, "bench", str(tiny_cnn), "--device", "lab-00", "-n", "10", "--min-duration", "0.1",
                 "--no-energy", "--no-history", "--json")
    if not system_has_numpy:  # a fresh board: one line naming the fix, exit 3, no traceback
        assert main(bench) == 3
        err = capsys.readouterr().err
        assert f"numpy is not installed for {SYSTEM_PYTHON} on " in err and "edgeopt devices setup" in err
        errors = [line for line in err.splitlines() if not line.endswith("...")]  # progress lines: upload...
        assert "Traceback" not in err and len(errors) == 1 and errors[0].startswith("edgeopt: error: numpy")

    setup = _cli(bare, "devices", "setup", "lab-00", "--offline", "--wheels", str(wheels), "--runtimes",
                 "onnxruntime", "--json")
    assert main(setup) == 0
    report = json.loads(capsys.readouterr().out)["devices"][0]["report"]
    venv_python = f"{device.workdir}/venv/bin/python"
    assert report["python"] == venv_python and report["changed"] and report["mode"] in ("offline", "none")
    assert report["packages"]["numpy"] and report["packages"]["onnxruntime"] and report["runtimes"]["onnxruntime"]
    assert json.loads((device.workdir / "setup.json").read_text())["python"] == venv_python
    state = json.loads(bare.inventory.with_name("devices.state.json").read_text())
    assert state["devices"]["lab-00"]["python"] == venv_python
    assert "python" not in bare.inventory.read_text()  # devices.yaml is never rewritten

    assert main(setup) == 0  # idempotent: nothing to do the second time, and it says so
    again = json.loads(capsys.readouterr().out)["devices"][0]["report"]
    assert again["changed"] is False and again["actions"] == [] and "nothing changed" in again["message"]

    assert main(bench) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["environment"]["python_executable"] == venv_python and result["valid"]
    still = subprocess.run([SYSTEM_PYTHON, "-c", "import numpy"], capture_output=True, timeout=30).returncode == 0
    assert still == system_has_numpy  # the system interpreter was not touched
