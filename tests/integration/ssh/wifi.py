"""A Wi-Fi-like device: its sshd in its own network namespace, packet loss there (nftables), latency in front of it
(a :class:`~tests.integration.ssh.linkproxy.LinkProxy` on 127.0.0.1), both switchable while a run goes on.

Device ``i`` gets the namespace ``eo-w<pid><i>`` and the addresses 10.202.<i>.1 (host side) / 10.202.<i>.2 (device
side, sshd on port 22) on a veth pair: self-made addresses only, never used by the other netns fixtures (10.200.0.0/24
in test_netns.py, 10.201.0.0/24 for the arm64 board). The client connects to the proxy, so the inventory names
``127.0.0.1:<proxy port>``. Loss is ``numgen random mod 100 < N drop`` on the device's input to port 22 (100: the
link is down); the namespace, with its veth pair and rules, is deleted by :meth:`stop`. Needs root, ``ip`` and ``nft``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

from tests.integration.ssh.linkproxy import LinkProxy
from tests.integration.ssh.sshd import Sshd, unavailable_reason

TABLE = "edgeopt_wifi"


def netns_unavailable_reason() -> str | None:
    """Why a namespace device cannot run here (None: it can)."""
    reason = unavailable_reason()
    if reason:
        return reason
    for tool, pkg in (("ip", "iproute2"), ("nft", "nftables")):
        if not shutil.which(tool):
            return f"{tool} is not installed: run `make sysdeps` as root (or apt-get install {pkg})"
    return None


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


class WifiDevice:
    """One namespace device behind a proxy; :meth:`start` / :meth:`stop` (or a ``with`` block).

    Args:
        root: directory of the sshd's config, keys and log.
        index: 0-99, picks the subnet 10.202.<index>.0/24 and the interface names.
        client_alive: sshd drops a client silent for ~4 s (``ClientAliveInterval 2``, ``ClientAliveCountMax 2``);
            False keeps OpenSSH's default (never), as on most real boards.
    """

    def __init__(self, root: Path, index: int, *, client_alive: bool = False) -> None:
        tag = f"{os.getpid() % 100000}{index:02d}"
        self.ns, self.veth_host, self.veth_dev = f"eo-w{tag}", f"eowh{tag}", f"eowd{tag}"
        self.host_ip, self.device_ip = f"10.202.{index}.1", f"10.202.{index}.2"
        extra = ["ClientAliveInterval 2", "ClientAliveCountMax 2"] if client_alive else []
        # internal-sftp logs each file it opens (INFO): the tests see when the host starts fetching the result.
        self.sshd = Sshd(root, port=22, host=self.device_ip, prefix=["ip", "netns", "exec", self.ns],
                         extra_config=extra, sftp="internal-sftp -l INFO")
        self.proxy: LinkProxy | None = None
        self._guard: int | None = None

    @property
    def port(self) -> int:
        """The port the client connects to (the proxy's)."""
        assert self.proxy is not None, "start() first"
        return self.proxy.port

    def _network(self) -> None:
        if _ip("netns", "add", self.ns).returncode != 0:
            raise RuntimeError(f"`ip netns add {self.ns}` failed (needs root and network namespaces)")
        for step in [
            ("link", "add", self.veth_host, "type", "veth", "peer", "name", self.veth_dev),
            ("link", "set", self.veth_dev, "netns", self.ns),
            ("addr", "add", f"{self.host_ip}/24", "dev", self.veth_host),
            ("link", "set", self.veth_host, "up"),
            ("-n", self.ns, "addr", "add", f"{self.device_ip}/24", "dev", self.veth_dev),
            ("-n", self.ns, "link", "set", self.veth_dev, "up"),
            ("-n", self.ns, "link", "set", "lo", "up"),
        ]:
            out = _ip(*step)
            if out.returncode != 0:
                raise RuntimeError(f"ip {' '.join(step)}: {out.stderr.strip()}")
        self._nft(f"table inet {TABLE} {{\n  chain input {{\n    type filter hook input priority 0;\n  }}\n}}\n")

    def _nft(self, script: str) -> None:
        out = subprocess.run(["ip", "netns", "exec", self.ns, "nft", "-f", "-"], input=script, capture_output=True,
                             text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError(f"nft in {self.ns}: {out.stderr.strip()}")

    def loss(self, percent: int) -> None:
        """Drop ``percent`` % of the packets reaching the device's sshd (0: none, 100: the link is down)."""
        rule = ("" if percent <= 0 else "tcp dport 22 drop" if percent >= 100
                else f"tcp dport 22 numgen random mod 100 < {percent} drop")
        self._nft(f"flush chain inet {TABLE} input\n" + (f"add rule inet {TABLE} input {rule}\n" if rule else ""))

    def rules(self) -> str:
        """The namespace's current nftables rules (to show that a loss was really in force)."""
        return subprocess.run(["ip", "netns", "exec", self.ns, "nft", "list", "table", "inet", TABLE],
                              capture_output=True, text=True, timeout=30).stdout

    def start(self) -> WifiDevice:
        # Fixed addresses per index: another test process using the same index waits here.
        self._guard = os.open(f"/tmp/edgeopt-wifi-{self.device_ip}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._guard, fcntl.LOCK_EX)
        try:
            self._network()
            self.sshd.start(timeout_s=30)
            self.proxy = LinkProxy((self.device_ip, 22)).start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        self.sshd.stop()
        _ip("netns", "del", self.ns)  # takes the veth pair and the rules with it
        _ip("link", "del", self.veth_host)  # in case the pair was made but never moved
        if self._guard is not None:
            os.close(self._guard)
            self._guard = None

    def __enter__(self) -> WifiDevice:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
