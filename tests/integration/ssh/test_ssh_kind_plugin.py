"""A plug-in model kind measured on an SSH device: the generic engine runs the kind's agent command through the
SSH runner (the same agent as locally), on a device whose Python has the plug-in installed; no edit to edgeopt."""

from __future__ import annotations

import json

from tests.integration.ssh.conftest import DEVICE_PYTHON
from tests.integration.ssh.test_ssh_cli import edgeopt_process as edgeopt  # the plug-in loads in that process
from tests.plugin_kit import kind_plugin


def test_a_plug_in_kind_benches_over_ssh_with_its_workload_and_cells(device, tmp_path):
    plugin = kind_plugin(tmp_path / "plugin")
    python = tmp_path / "python-with-plugin"  # the device's Python with the plug-in "installed"
    python.write_text(f'#!/bin/sh\nEDGEOPT_PLUGIN_PATH="{plugin}" exec "{DEVICE_PYTHON}" "$@"\n')
    python.chmod(0o755)
    model = tmp_path / "encoder.stream"
    model.write_text(json.dumps({"frame_samples": 160, "state": 64}))
    p = edgeopt("bench", str(model), "--host", device.sshd.spec, "--key", str(device.sshd.client_key),
                "--known-hosts", str(device.known_hosts), "--accept-new-host-key", "--python", str(python),
                "--workload", "frame_ms=20", "--iterations", "50", "--min-duration", "0", "--warmup", "1",
                "--no-energy", "--no-history", "--json", env={"EDGEOPT_PLUGIN_PATH": str(plugin)})
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["runner"].startswith("ssh:") and r["runtime"]["name"] == "streamrt" and r["valid"]
    (cell,) = r["cells"]
    assert cell["key"] == "frame20ms" and {s["metric"] for s in cell["series"]} == {"rtf", "frame_latency_ms"}
