"""Host keys and authentication against a real sshd: unknown refused, TOFU recorded, changed key refused."""

from __future__ import annotations

import paramiko
import pytest

from edgeopt.errors import ExitCode, InputError, RunnerError
from edgeopt.runners.ssh_hostkeys import HostKeyError, fingerprint
from edgeopt_agent.protocol import Request
from tests.integration.ssh.sshd import keygen

FAST = {"iterations": 20, "min_duration_s": 0.1}


def _host_fingerprint(device) -> str:
    return fingerprint(paramiko.Ed25519Key.from_private_key_file(str(device.sshd.host_key)))


def test_unknown_host_is_refused_with_its_fingerprint(device, tiny_cnn):
    with pytest.raises(HostKeyError) as info:
        device.runner(accept=False).run(Request(model_path="", **FAST), tiny_cnn)
    message = str(info.value)
    assert info.value.exit_code == ExitCode.TRUST == 4 and "\n" not in message
    assert "--accept-new-host-key" in message and _host_fingerprint(device) in message
    assert not device.known_hosts.exists()  # nothing recorded
    assert not (device.workdir / "cache").exists()  # nothing uploaded to an unverified host


def test_accepted_key_is_recorded_then_a_changed_key_is_refused(device, tiny_cnn):
    other = "example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB1n1oYt5K9z8pA2xHq2v0ccsL+4OQ/7yJnYlkzPt1Jq"
    device.known_hosts.write_text(f"# my hosts\n{other}\n")
    assert device.runner(accept=True).run(Request(model_path="", **FAST), tiny_cnn).ok
    lines = device.known_hosts.read_text().splitlines()
    assert lines[:2] == ["# my hosts", lines[1]] and lines[1].startswith("example.org ")  # kept what was there
    entry = f"[127.0.0.1]:{device.sshd.port}"
    assert lines[2].startswith(f"{entry} ssh-ed25519 ")
    # Known now: works without the flag.
    assert device.runner(accept=False).run(Request(model_path="", **FAST), tiny_cnn).ok
    recorded = device.known_hosts.read_text()

    device.sshd.stop()
    device.sshd.new_host_key()
    device.sshd.start()
    for accept in (False, True):  # a changed key is refused even with --accept-new-host-key
        with pytest.raises(HostKeyError, match="HOST KEY CHANGED") as info:
            device.runner(accept=accept).run(Request(model_path="", **FAST), tiny_cnn)
        assert _host_fingerprint(device) in str(info.value) and "ssh-keygen -R" in str(info.value)
    assert device.known_hosts.read_text() == recorded  # never overwritten


def test_wrong_key_fails_authentication_clearly(shared_device, tiny_cnn, tmp_path):
    stranger = keygen(tmp_path / "stranger")
    with pytest.raises(RunnerError, match="authentication as root .* failed with key .*stranger.*authorized_keys"):
        shared_device.runner(key=stranger).run(Request(model_path="", **FAST), tiny_cnn)


def test_missing_key_file_is_an_input_error(shared_device, tiny_cnn, tmp_path):
    with pytest.raises(InputError, match="no such private key"):
        shared_device.runner(key=tmp_path / "nope").run(Request(model_path="", **FAST), tiny_cnn)


def test_passphrase_key_is_not_prompted_for(shared_device, tiny_cnn, tmp_path):
    import subprocess

    locked = tmp_path / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(locked)], check=True)
    with pytest.raises(RunnerError, match="passphrase.*ssh-add"):
        shared_device.runner(key=locked).run(Request(model_path="", **FAST), tiny_cnn)


def test_nothing_listening_is_a_runner_error_within_the_connect_timeout(shared_device, tiny_cnn):
    from tests.integration.ssh.sshd import free_port

    with pytest.raises(RunnerError, match="connecting to root@127.0.0.1:.* failed"):
        shared_device.runner(port=free_port()).run(Request(model_path="", **FAST), tiny_cnn)
