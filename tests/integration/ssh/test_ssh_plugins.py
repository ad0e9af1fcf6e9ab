"""``edgeopt devices check`` on a device whose Python has a plug-in runtime: the agent's probe reports it and the
host's plug-in descriptor judges it (install hint included); no edit to edgeopt."""

from __future__ import annotations

import json

from tests.integration.ssh.conftest import DEVICE_PYTHON
from tests.integration.ssh.test_ssh_cli import edgeopt_process as edgeopt  # the plug-in loads in that process
from tests.plugin_kit import runtime_plugin


def test_devices_check_reports_plugin_runtimes(device, tmp_path):
    plugin = runtime_plugin(tmp_path / "plugin")
    python = tmp_path / "python-with-plugin"  # the device's Python with the plug-in "installed"
    python.write_text(f'#!/bin/sh\nEDGEOPT_PLUGIN_PATH="{plugin}" exec "{DEVICE_PYTHON}" "$@"\n')
    python.chmod(0o755)
    p = edgeopt("devices", "check", "--host", device.sshd.spec, "--key", str(device.sshd.client_key),
                "--known-hosts", str(device.known_hosts), "--accept-new-host-key", "--python", str(python),
                "--target", "plugbox", "--json", env={"EDGEOPT_PLUGIN_PATH": str(plugin)})
    assert p.returncode == 0, p.stderr  # ready: ortplug and onnxruntime are there
    r = json.loads(p.stdout)
    by = {s["runtime"]: s for s in r["runtimes"]}
    assert list(by) == ["ortplug", "ghostrt", "onnxruntime"] and r["ready"] is True
    assert by["ortplug"]["available"] and by["ortplug"]["version"] == by["onnxruntime"]["version"]
    assert not by["ghostrt"]["available"]
    assert by["ghostrt"]["install"] == "pip install ghost-runtime-lib (the test plug-in's library)"
    assert any(line.startswith("ghostrt missing: pip install ghost-runtime-lib") for line in r["problems"])
    assert "ghost_runtime_lib" in r["packages"] and r["packages"]["ghost_runtime_lib"] is None
