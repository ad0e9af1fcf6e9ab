"""``edgeopt bench --host/--device`` and ``edgeopt devices`` as a user runs them: real sshd; the first bench as a
real process, the other commands through the CLI's ``main`` in this process (tests/cli_here.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from tests.cli_here import edgeopt_here
from tests.integration.ssh.conftest import DEVICE_PYTHON
from tests.integration.test_cli_bench import BENCH_KEYS


def edgeopt_process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A real process: what a user's shell sees, and a plug-in's modules and ``sys.path`` stay in that process."""
    clean = {k: v for k, v in os.environ.items() if k != "EDGEOPT_INVENTORY"}
    return subprocess.run([sys.executable, "-m", "edgeopt.cli.main", *args], capture_output=True, text=True,
                          timeout=300, env={**clean, **(env or {})})


def edgeopt(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """In this process (tests/cli_here.py), without the user's ``EDGEOPT_INVENTORY``."""
    return edgeopt_here(*args, env=env, unset=("EDGEOPT_INVENTORY",), cwd=cwd)


def _inventory(path: Path, device, name: str = "lab-box", target: str = "local", **extra: object) -> Path:
    entry = {"name": name, "host": "127.0.0.1", "port": device.sshd.port, "user": "root",
             "key": str(device.sshd.client_key), "target": target, "python": DEVICE_PYTHON,
             "workdir": str(device.workdir), **extra}
    lines = ["devices:", f"  - name: {entry.pop('name')}"] + [f"    {k}: {v}" for k, v in entry.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bench_host_json_end_to_end(device, tiny_cnn):
    args = ["bench", str(tiny_cnn), "--host", device.sshd.spec, "--key", str(device.sshd.client_key),
            "--known-hosts", str(device.known_hosts), "--python", DEVICE_PYTHON, "--min-duration", "0.3",
            "--fps", "30", "--json"]
    p = edgeopt_process(*args)  # the user's process: the exit codes, stdout only JSON, the device's progress
    assert p.returncode == 4 and "--accept-new-host-key" in p.stderr and json.loads(p.stdout)["exit_code"] == 4  # trust
    p = edgeopt_process(*args, "--accept-new-host-key")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert set(r) >= BENCH_KEYS and r["valid"] is True and r["fps_budget"]["passed"] is True
    assert r["runner"] == f"ssh:root@127.0.0.1:{device.sshd.port}"
    assert "edgeopt: timed" in p.stderr  # progress streamed back from the device, on stderr
    assert f"[127.0.0.1]:{device.sshd.port} ssh-ed25519" in device.known_hosts.read_text()


def test_bench_device_from_inventory(device, tiny_cnn, tmp_path):
    inv = _inventory(tmp_path / "devices.yaml", device, target="rpi5")
    common = ["--known-hosts", str(device.known_hosts), "--accept-new-host-key", "--min-duration", "0.2",
              "--no-budget", "--json", "--no-energy"]
    p = edgeopt("bench", str(tiny_cnn), "--device", "lab-box", "--inventory", str(inv), *common)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["target"] == "rpi5" and r["runner"].startswith("ssh:root@127.0.0.1:")  # the device's target
    # the loopback "device" is this x86 machine, not a Pi: the result says so (issue 16, item 2)
    assert any(m.startswith("architecture: the device is x86_64, target rpi5 is aarch64") for m in r["target_mismatch"])
    assert r["warnings"][0].startswith("TARGET MISMATCH")
    p = edgeopt("bench", str(tiny_cnn), "--device", "lab-box", "--inventory", str(inv), *common[:-2], "--no-energy")
    assert p.returncode == 0 and "TARGET MISMATCH" in p.stdout, p.stderr
    # ./devices.yaml is the default inventory; EDGEOPT_INVENTORY overrides it.
    p = edgeopt("bench", str(tiny_cnn), "--device", "lab-box", "--target", "local", *common, cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout)["target"] == "local", p.stderr
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    p = edgeopt("bench", str(tiny_cnn), "--device", "lab-box", *common, cwd=elsewhere,
                env={"EDGEOPT_INVENTORY": str(inv)})
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("text,needles", [
    ("devices:\n  - name: a\n    host: 10.0.0.2\n    port: 70000\n    user: pi\n    target: rpi5\n",
     ["devices[0] (a).port", "70000"]),
    ("devices:\n  - name: a\n    host: 10.0.0.2\n    user: pi\n", ["devices[0] (a).target", "Field required"]),
    ("devices:\n  - name: a\n    host: 10.0.0.2\n    user: pi\n    target: rpi5\n    passwd: x\n",
     ["devices[0] (a).passwd", "Extra inputs"]),
    ("devices:\n  - name: a\n    host: 10.0.0.2\n    user: pi\n    target: rpi5\n    python: python3\n",
     ["devices[0] (a).python", "absolute path"]),
    ("devices:\n  - name: a\n   host: x\n", ["YAML syntax error at line"]),
    ("- just a list\n", ["expected a mapping"]),
])
def test_bad_inventory_exits_2_naming_file_and_key(tmp_path, tiny_cnn, text, needles, capsys):
    inv = tmp_path / "devices.yaml"
    inv.write_text(text)
    for args in (["bench", str(tiny_cnn), "--device", "a"], ["devices", "list"]):
        code = main([*args, "--inventory", str(inv)])  # in-process: the same entry point, without a start-up
        lines = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and str(inv) in lines[0], lines
        assert all(n in lines[0] for n in needles), lines[0]


def test_missing_inventory_and_unknown_device_exit_2(tmp_path, tiny_cnn, device, capsys, monkeypatch):
    monkeypatch.delenv("EDGEOPT_INVENTORY", raising=False)
    monkeypatch.chdir(tmp_path)
    inv = str(_inventory(tmp_path / "lab.yaml", device))
    cases = [
        (["--device", "x"], "devices.yaml not found"),
        (["--device", "lab-bx", "--inventory", inv], "did you mean 'lab-box'"),
        (["--device", "lab-box", "--host", "pi@1.2.3.4", "--inventory", inv], "pick one"),
        (["--host", "1.2.3.4"], "USER@ADDRESS"),
        (["--key", "k"], "apply to a remote device"),
    ]
    for args, needle in cases:
        code = main(["bench", str(tiny_cnn), *args])
        err = capsys.readouterr().err
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, (args, err)


def test_devices_list_json(tmp_path, device):
    inv = _inventory(tmp_path / "devices.yaml", device, key="keys/id_ed25519")
    p = edgeopt("devices", "list", "--inventory", str(inv), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["inventory"] == str(inv) and [d["name"] for d in out["devices"]] == ["lab-box"]
    assert out["devices"][0]["key"] == str(tmp_path / "keys" / "id_ed25519")  # relative to the inventory file
    p = edgeopt("devices", "list", "--inventory", str(inv))
    assert p.returncode == 0 and "lab-box" in p.stdout and "root@127.0.0.1" in p.stdout


def test_devices_check_ready_device(tmp_path, device):
    inv = _inventory(tmp_path / "devices.yaml", device)
    p = edgeopt("devices", "check", "lab-box", "--inventory", str(inv), "--known-hosts", str(device.known_hosts),
                "--accept-new-host-key", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["ready"] is True and r["problems"] == [] and r["target"] == "local"
    assert r["arch"] == os.uname().machine and r["python"] == ".".join(map(str, sys.version_info[:3]))
    assert r["packages"]["numpy"] and r["packages"]["onnxruntime"]
    assert r["runtimes"][0] == {"runtime": "onnxruntime", "available": True,
                                "version": r["packages"]["onnxruntime"], "install": None}
    assert r["workdir"] == str(device.workdir) and r["disk_free_mb"] > 0 and r["memory_total_mb"] > 0
    assert isinstance(r["power_sensors"], list) and "governor" in r and "temperature_c" in r
    p = edgeopt("devices", "check", "lab-box", "--inventory", str(inv), "--known-hosts", str(device.known_hosts))
    assert p.returncode == 0 and "ready" in p.stdout and "power sensors" in p.stdout, p.stderr


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="needs the system /usr/bin/python3")
def test_devices_check_bare_python_says_what_to_install(device):
    probe = subprocess.run(["/usr/bin/python3", "-c", "import numpy"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("the system python3 has numpy: this test needs a bare one")
    base = ["devices", "check", "--host", device.sshd.spec, "--key", str(device.sshd.client_key),
            "--known-hosts", str(device.known_hosts), "--accept-new-host-key", "--python", "/usr/bin/python3"]
    p = edgeopt(*base, "--target", "rpi5", "--json")
    assert p.returncode == 1, p.stderr
    r = json.loads(p.stdout)
    assert r["ready"] is False and r["packages"]["numpy"] is None and r["python_executable"] == "/usr/bin/python3"
    problems = " | ".join(r["problems"])
    assert "python3-numpy" in problems and "pip install onnxruntime" in problems and "ai-edge-litert" in problems
    p = edgeopt(*base, "--target", "jetson-orin-nano")
    assert p.returncode == 1 and "JetPack" in p.stdout and "Jetson Zoo" in p.stdout, p.stdout
    p = edgeopt(*base[:-1], "/nonexistent/python3")
    assert p.returncode == 3 and "--python" in p.stderr
