"""A real OpenSSH server as a test "device": its own config, host key and authorized key in a temp dir.

Used by the SSH tests' fixtures and by ``benchmarks/ssh_overhead.py``. The server is a tracked child process
(``sshd -D -e``), stopped by its PID; killing it "hard" also kills the per-connection sshd processes it forked
(found through /proc by parent PID), which is what a device whose sshd dies looks like to a client.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"


def unavailable_reason() -> str | None:
    """Why a loopback sshd cannot run here, or None when it can."""
    if not Path(SSHD).exists():
        return f"{SSHD} is not installed (run `make sysdeps` as root, or apt-get install openssh-server)"
    if not Path(SSH_KEYGEN).exists():
        return "ssh-keygen is not installed (apt-get install openssh-client)"
    if os.geteuid() != 0:
        return "the test sshd runs as root (privilege separation needs it); run the tests as root"
    return None


# Ports handed to test servers come from below the kernel's ephemeral range (so no client connection can take one
# between the pick and the server's bind), and each pytest-xdist worker picks from a slice of its own (so two workers
# never pick the same port; a restarted sshd gets its old port back).
_PORT_FLOOR, _PORT_CEILING = 20000, 32768
_picked: set[int] = set()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def worker_ports() -> range:
    """The ports this process may pick: its xdist worker's slice of [20000, the ephemeral range)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    count = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1))
    ceiling = min(_PORT_CEILING, _ephemeral_low())
    width = (ceiling - _PORT_FLOOR) // count
    if width < 50:  # an unusual ephemeral range: fall back to the kernel's pick
        return range(0)
    return range(_PORT_FLOOR + index * width, _PORT_FLOOR + (index + 1) * width)


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now and that this process has not handed out before (see :func:`worker_ports`)."""
    ports = worker_ports()
    if ports:
        start = random.randrange(len(ports))  # two test sessions at once (two checkouts) rarely start together
        for i in range(len(ports)):
            port = ports[(start + i) % len(ports)]
            if port not in _picked and _bindable(host, port):
                _picked.add(port)
                return port
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> Path:
    """An unencrypted ed25519 key pair at ``path`` / ``path.pub``."""
    path.unlink(missing_ok=True)
    Path(f"{path}.pub").unlink(missing_ok=True)
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "edgeopt-test", "-f", str(path)], check=True)
    return path


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            kids.append(int(entry.name))
    return kids


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(_children(p))
    return out


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line contains ``text`` (e.g. a device work dir)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if text in cmdline:
                found.append(int(entry.name))
    return found


@dataclass
class Sshd:
    """One sshd listening on ``host:port``, configured from files in ``root``.

    Args:
        root: directory for config, keys, log and pid file.
        port: port to listen on (default: a free one).
        host: listen address.
        prefix: command prefix, e.g. ``["ip", "netns", "exec", "ns1"]`` to run it in a namespace.
        extra_config: more sshd_config lines.
        rc_files: let the login shell read ~/.bashrc before each command (as sshd normally makes bash do).
            Off by default: ``SetEnv SHLVL=1`` makes bash treat the command shell as nested and skip it, like
            a device whose .bashrc returns early for non-interactive shells (Debian's and Raspberry Pi OS's
            default). A developer box's .bashrc (pyenv, conda) can add ~0.4 s to every command otherwise.
        sftp: the sftp subsystem command (``internal-sftp -l INFO`` logs each file opened to ``log``).
        log_level: sshd's ``LogLevel`` (INFO with ``internal-sftp -l INFO``: the log shows SFTP file opens).
    """

    root: Path
    port: int = 0
    host: str = "127.0.0.1"
    prefix: Sequence[str] = ()
    extra_config: Sequence[str] = ()
    rc_files: bool = False
    sftp: str = "internal-sftp"
    log_level: str = "ERROR"
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port(self.host)
        self.host_key = self.root / "host_ed25519"
        self.client_key = self.root / "client_ed25519"
        self.authorized_keys = self.root / "authorized_keys"
        self.config = self.root / "sshd_config"
        self.log = self.root / "sshd.log"
        if not self.client_key.exists():
            keygen(self.client_key)
            self.authorized_keys.write_text(Path(f"{self.client_key}.pub").read_text())
        if not self.host_key.exists():
            keygen(self.host_key)

    @property
    def user(self) -> str:
        return "root"

    @property
    def spec(self) -> str:
        """``root@host:port``, as for ``--host``."""
        return f"{self.user}@{self.host}:{self.port}"

    def new_host_key(self) -> None:
        """Replace the host key (takes effect at the next start)."""
        keygen(self.host_key)

    def write_config(self) -> None:
        lines = [
            f"Port {self.port}", f"ListenAddress {self.host}", f"HostKey {self.host_key}",
            f"AuthorizedKeysFile {self.authorized_keys}", f"PidFile {self.root / 'sshd.pid'}",
            "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password", "UsePAM no", "StrictModes no", "PrintMotd no",
            f"Subsystem sftp {self.sftp}", f"LogLevel {self.log_level}", *([] if self.rc_files else ["SetEnv SHLVL=1"]),
            *self.extra_config,
        ]
        self.config.write_text("\n".join(lines) + "\n")

    def start(self, timeout_s: float = 10.0) -> Sshd:
        """Start sshd and wait until it accepts connections."""
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        self.write_config()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([*self.prefix, SSHD, "-D", "-e", "-f", str(self.config)],
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            if self._accepts():
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"sshd did not listen on {self.host}:{self.port} within {timeout_s} s")

    def _accepts(self) -> bool:
        """The SSH banner arrives (from a namespace: through its routing, as a client would see it)."""
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5) as s:
                return s.recv(4).startswith(b"SSH-")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the listener (SIGTERM, then SIGKILL) by its PID; open sessions are left alone."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def kill_hard(self) -> list[int]:
        """SIGKILL the listener and every sshd process forked from it (the live sessions), by PID.

        Processes the sessions started (the agent) are not touched: they must notice and end themselves.
        """
        if self.proc is None:
            return []
        victims = [p for p in process_tree(self.proc.pid) if p == self.proc.pid or comm(p) == "sshd"]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()
        return victims

    def __enter__(self) -> Sshd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
