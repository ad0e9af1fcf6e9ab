"""The emulated board on the network: the rootfs's own sshd, chrooted, in a network namespace with its own address.

Host side 10.201.0.1/24, board side 10.201.0.2/24 on a veth pair (the netns SSH tests use 10.200.0.0/24, so
the two never clash). ``ip netns exec`` gives the command a private mount namespace, so the ``/proc`` mounted
into the rootfs for sshd and the agent disappears with the processes and never shows on the host.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.ssh.sshd import keygen

HOST_IP, BOARD_IP = "10.201.0.1", "10.201.0.2"
SSH_DIR = "etc/ssh/edgeopt-test"  # inside the rootfs; regenerated each session


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@dataclass
class Board:
    """A namespace ``eo-arm{pid}`` holding the rootfs's sshd on BOARD_IP:22; :meth:`stop` removes everything."""

    rootfs: Path
    client_dir: Path
    ns: str = field(default_factory=lambda: f"eo-arm{os.getpid() % 100000}")
    proc: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        suffix = self.ns.removeprefix("eo-arm")
        self.veth_host, self.veth_board = f"eoah{suffix}", f"eoab{suffix}"
        self.client_key = self.client_dir / "client_ed25519"
        self.known_hosts = self.client_dir / "known_hosts"
        self.log = self.client_dir / "sshd.log"

    @property
    def spec(self) -> str:
        return f"root@{BOARD_IP}:22"

    def _network(self) -> None:
        if _ip("netns", "add", self.ns).returncode != 0:
            raise RuntimeError(f"`ip netns add {self.ns}` failed (needs root and network namespaces)")
        for step in [
            ("link", "add", self.veth_host, "type", "veth", "peer", "name", self.veth_board),
            ("link", "set", self.veth_board, "netns", self.ns),
            ("addr", "add", f"{HOST_IP}/24", "dev", self.veth_host),
            ("link", "set", self.veth_host, "up"),
            ("-n", self.ns, "addr", "add", f"{BOARD_IP}/24", "dev", self.veth_board),
            ("-n", self.ns, "link", "set", self.veth_board, "up"),
            ("-n", self.ns, "link", "set", "lo", "up"),
        ]:
            out = _ip(*step)
            if out.returncode != 0:
                raise RuntimeError(f"ip {' '.join(step)}: {out.stderr.strip()}")

    def _ssh_files(self) -> None:
        """Fresh host and client keys; the config's paths are as sshd sees them inside the chroot."""
        self.client_dir.mkdir(parents=True, exist_ok=True)
        ssh_dir = self.rootfs / SSH_DIR
        shutil.rmtree(ssh_dir, ignore_errors=True)
        ssh_dir.mkdir(parents=True)
        keygen(self.client_key)
        keygen(ssh_dir / "host_ed25519")
        (ssh_dir / "authorized_keys").write_text(Path(f"{self.client_key}.pub").read_text())
        (ssh_dir / "sshd_config").write_text("\n".join([
            "Port 22", f"ListenAddress {BOARD_IP}", f"HostKey /{SSH_DIR}/host_ed25519",
            f"AuthorizedKeysFile /{SSH_DIR}/authorized_keys", "PubkeyAuthentication yes",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password",
            "UsePAM no", "StrictModes no", "PrintMotd no", "Subsystem sftp internal-sftp", "LogLevel ERROR",
            "SetEnv SHLVL=1", "",
        ]))
        (self.rootfs / "run" / "sshd").mkdir(mode=0o755, parents=True, exist_ok=True)

    def start(self, timeout_s: float = 120.0) -> Board:
        """Start sshd (an aarch64 binary under qemu: seconds, not milliseconds) and wait for its banner."""
        self._ssh_files()
        self._network()
        script = 'mount -t proc proc "$0/proc" && exec chroot "$0" /usr/sbin/sshd -D -e -f "$1"'
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", self.ns, "sh", "-c", script, str(self.rootfs), f"/{SSH_DIR}/sshd_config"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the board's sshd exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                with socket.create_connection((BOARD_IP, 22), timeout=2) as s:
                    s.settimeout(10)
                    if s.recv(4).startswith(b"SSH-"):
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"the board's sshd did not answer on {BOARD_IP}:22 within {timeout_s} s")

    def stop(self) -> None:
        """Stop sshd by its PID, then delete the namespace (which takes the veth pair and its mounts with it)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _ip("netns", "del", self.ns)
        _ip("link", "del", self.veth_host)  # in case the pair was made but never moved
