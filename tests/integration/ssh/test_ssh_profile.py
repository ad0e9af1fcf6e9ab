"""``edgeopt profile`` over SSH: the agent's profile command on the loopback sshd, same records as locally."""

from __future__ import annotations

from pathlib import Path

from edgeopt.profile import profile
from tests.integration.ssh.conftest import Device
from tests.profile_models import BIG, big_conv_model


def test_profile_over_ssh_maps_layers_like_local(shared_device: Device, tmp_path: Path) -> None:
    model = big_conv_model(tmp_path / "big.onnx")
    remote = profile(model, runtime="onnxruntime", iterations=6, warmup=1, runner=shared_device.runner())
    assert remote.runner.startswith("ssh:root@127.0.0.1:")
    top = remote.top(1)[0]
    assert BIG in top.onnx_nodes and top.share > 0.5 and top.flops and top.precision.value == "fp32"
    assert remote.unprofiled_p50_ms > 0 and remote.settings.profiled_iterations == 6
    local = profile(model, runtime="onnxruntime", iterations=3, warmup=0)
    assert {x.kernel for x in remote.layers} == {x.kernel for x in local.layers}  # same runtime, same layers
    assert not shared_device.job_dirs(), "the job directory is removed after the result is fetched"


def test_cli_profile_host_json(device: Device, tmp_path: Path) -> None:
    from edgeopt.profile.schema import ProfileResult
    from tests.integration.ssh.conftest import DEVICE_PYTHON
    from tests.integration.ssh.test_ssh_cli import edgeopt

    model = big_conv_model(tmp_path / "big.onnx")
    p = edgeopt("profile", str(model), "--host", device.sshd.spec, "--key", str(device.sshd.client_key),
                "--known-hosts", str(device.known_hosts), "--accept-new-host-key", "--python", DEVICE_PYTHON,
                "--runtime", "onnxruntime", "-n", "4", "--warmup", "1", "--json")
    assert p.returncode == 0, p.stderr
    result = ProfileResult.model_validate_json(p.stdout)
    assert result.runner == f"ssh:root@127.0.0.1:{device.sshd.port}" and BIG in result.top(1)[0].onnx_nodes
    assert "edgeopt: profiled..." in p.stderr  # the agent's phases streamed back from the device
