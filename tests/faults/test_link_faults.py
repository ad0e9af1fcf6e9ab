"""The link to the device misbehaves during ``edgeopt bench --device``: it turns slow or lossy mid-run, or drops
(100% loss) at each step of the remote run.

The device is a Wi-Fi-like one (tests/integration/ssh/wifi.py): its sshd in its own network namespace with
nftables loss rules, reached through a user-space proxy that adds latency (no ``tc netem`` in this kernel). Its
sshd keeps OpenSSH's defaults (no ClientAlive), as on most boards: when the link dies, only the agent itself can
notice (the host's heartbeat on its stdin stops). Each case asserts the exit code, at most one error line that
names the fix, no traceback, an end within the documented deadlines (``--ssh-timeout``), nothing left running or
locked on the device once the link is back, and that the next run succeeds. The namespace cases are marked
``netns``; two more (the proxy stalling or resetting the link in front of a loopback sshd) need only root.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.conftest import make_matmul_model
from tests.faults.helpers import assert_one_line, edgeopt_popen, lock_is_free, record, wait_for
from tests.integration.ssh.conftest import DEVICE_PYTHON
from tests.integration.ssh.linkproxy import LinkProxy
from tests.integration.ssh.sshd import processes_mentioning
from tests.integration.ssh.wifi import WifiDevice, netns_unavailable_reason

# Short deadlines so that a dead link is given up on in seconds (the defaults are in docs/devices.md).
TIMEOUTS = {"connect": 4, "keepalive": 1, "dead_after": 6, "fetch": 6, "cleanup": 3, "upload": 30, "lock_wait": 60,
            "run_grace": 30}
# The longest any case may take from the fault to the exit: the largest step deadline that can be in force,
# plus margin for a loaded 2-core machine. A run still going after this hangs.
HANG_S = 60.0


@dataclass
class WifiDut:
    """The Wi-Fi-like device, its work dir on the "device", and the host-side files naming it."""

    wifi: WifiDevice
    workdir: Path
    known_hosts: Path
    inventory: Path
    stderr: list[str] = field(default_factory=list)

    @property
    def lock_file(self) -> Path:
        return self.workdir / "locks" / "device.lock"

    def agent_running(self) -> bool:
        return bool(processes_mentioning(f"{self.workdir}/"))

    def link_back(self) -> None:
        self.wifi.loss(0)
        assert self.wifi.proxy is not None
        self.wifi.proxy.normal()


@pytest.fixture()
def dut(tmp_path: Path) -> Iterator[WifiDut]:
    reason = netns_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with WifiDevice(tmp_path / "server", 40) as wifi:
        inv = tmp_path / "inv" / "devices.yaml"
        inv.parent.mkdir()
        workdir = tmp_path / "device"
        inv.write_text(yaml.safe_dump({"devices": [{
            "name": "wifi", "host": "127.0.0.1", "port": wifi.port, "user": "root", "key": str(wifi.sshd.client_key),
            "target": "local", "python": DEVICE_PYTHON, "workdir": str(workdir)}]}))
        yield WifiDut(wifi, workdir, tmp_path / "known_hosts", inv)


def _bench(tmp_path: Path, dut: WifiDut, model: Path, *flags: str) -> subprocess.Popen[str]:
    timeouts = [arg for step, s in TIMEOUTS.items() for arg in ("--ssh-timeout", f"{step}={s}")]
    return edgeopt_popen("bench", str(model), "--device", "wifi", "--inventory", str(dut.inventory),
                         "--known-hosts", str(dut.known_hosts), "--accept-new-host-key", "--iterations", "5",
                         "--min-duration", "0.05", "--max-duration", "60", "--no-energy", "--no-history", *timeouts,
                         *flags, cwd=tmp_path)


def _collect(proc: subprocess.Popen[str], lines: list[str]) -> threading.Thread:
    """Read the CLI's stderr line by line as it comes (the progress lines say which phase the run is in)."""

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def _said(dut: WifiDut, prefix: str) -> Callable[[], bool]:
    return lambda: any(line.startswith(prefix) for line in dut.stderr)


def _uploading(dut: WifiDut) -> bool:
    cache = dut.workdir / "cache"
    return cache.is_dir() and any(p.name.startswith(".tmp-") and (p / "model.onnx").exists() for p in cache.iterdir())


def _result_written(dut: WifiDut) -> bool:
    """The agent wrote its result and ended, and the host has not heard yet: once the agent has loaded the model,
    the link is made slow (1 s each way), so its exit status reaches the host a second after the device wrote the
    result; the link drops in that second, and the host's requests for the result are the ones lost."""
    proxy = dut.wifi.proxy
    assert proxy is not None
    if proxy.condition.delay_s == 0 and _said(dut, "edgeopt: load")():
        proxy.slow(1.0)
    jobs = dut.workdir / "jobs"
    done = jobs.is_dir() and any((job / "result.json").exists() for job in jobs.iterdir())
    return done and not dut.agent_running()


# step -> (extra bench flags, "the run is in that step now", what the error line must say)
STEPS: dict[str, tuple[list[str], Callable[[WifiDut], bool], str]] = {
    "connect": ([], lambda d: True, "connecting to"),
    "upload": ([], _uploading, "uploading the model"),
    "lock": ([], WifiDut.agent_running, "died during the agent run"),
    "warmup": (["--warmup-s", "30"], lambda d: _said(d, "edgeopt: warmup")(), "died during the agent run"),
    "timed": (["--min-duration", "30"], lambda d: _said(d, "edgeopt: timed")(), "died during the agent run"),
    "fetch": (["--min-duration", "2"], _result_written, "fetching the result"),
}


def _hold_lock(dut: WifiDut) -> int:
    """Another job holds the device: the agent waits in the lock."""
    dut.lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dut.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, json.dumps({"pid": os.getpid(), "since": time.time(), "host": "test"}).encode())
    return fd


def _assert_clean_after_link_back(dut: WifiDut) -> None:
    """The agent ended itself (its host went silent), the lock is free, the job dirs are swept by the next run."""
    assert wait_for(lambda: not dut.agent_running(), 30), processes_mentioning(f"{dut.workdir}/")
    assert wait_for(lambda: lock_is_free(dut), 10)  # type: ignore[arg-type]
    cache = dut.workdir / "cache"
    if cache.is_dir():
        assert all(any(e.iterdir()) for e in cache.iterdir() if not e.name.startswith(".")), "empty cache entry"


def _next_run_succeeds(tmp_path: Path, dut: WifiDut, model: Path) -> None:
    jobs = dut.workdir / "jobs"
    before = set(jobs.iterdir()) if jobs.is_dir() else set()  # a dead run's job dir stays until a day old
    again = _bench(tmp_path, dut, model, "--json")
    out, err = again.communicate(timeout=180)
    assert again.returncode in (0, 1) and "edgeopt: error" not in err, err  # 1: too few samples for p99
    assert json.loads(out)["run"]["samples"] >= 5
    assert wait_for(lambda: not dut.agent_running(), 20)
    assert set(jobs.iterdir()) <= before, "the next run left its job dir"


@pytest.mark.netns
@pytest.mark.parametrize("step", list(STEPS))
def test_link_dropped_at_a_step_fails_cleanly_and_the_next_run_succeeds(dut, tmp_path, step):
    flags, in_step, words = STEPS[step]
    model = make_matmul_model(tmp_path / "m.onnx", k=2048, n=2048 if step == "upload" else 64)
    held = _hold_lock(dut) if step == "lock" else None
    if step == "connect":
        dut.wifi.loss(100)
    proc = _bench(tmp_path, dut, model, *flags)
    reader = _collect(proc, dut.stderr)
    try:
        assert wait_for(lambda: in_step(dut) or proc.poll() is not None, 90, 0.002), dut.stderr
        assert proc.poll() is None, f"the run ended before the {step} step: {dut.stderr}"
        dut.wifi.loss(100)
        cut = time.monotonic()
        proc.wait(timeout=HANG_S)
        took = time.monotonic() - cut
    finally:
        if proc.poll() is None:
            proc.kill()
        if held is not None:
            os.close(held)
    reader.join(timeout=10)
    err = "\n".join(dut.stderr)
    assert proc.returncode == 3, err
    # The drop is one-way (the device's input): if the agent's own silence timer wins the race against the
    # host's verdict, its exit status still reaches the host, which then fails fetching the result. Both are right.
    line = assert_one_line(err, f"root@127.0.0.1:{dut.wifi.port}")
    assert words in line or (words == "died during the agent run" and "fetching the result" in line), line
    assert "network" in line, line  # the fix: check the network (the link), as the line says
    assert took < HANG_S
    # While the link is still down, the agent notices its host went silent and ends itself, releasing the lock.
    silence_s = TIMEOUTS["dead_after"] + 3 * TIMEOUTS["keepalive"]  # the agent's --host-silence-s
    assert wait_for(lambda: not dut.agent_running(), silence_s + 15), "agent still running"
    print(f"link dropped at {step}: exit 3 {took:.1f} s after the drop; no agent running "
          f"{time.monotonic() - cut:.1f} s after it, link still down: {line}")
    dut.link_back()
    _assert_clean_after_link_back(dut)
    _next_run_succeeds(tmp_path, dut, model)
    record(f"link dropped (100% loss, netns) at a step of a remote run ({step})")



# condition -> (one-way delay s, loss %) applied once the timed loop runs
CONDITIONS = {"slow 500 ms": (0.5, 0), "lossy 30%": (0.0, 30), "slow 500 ms + lossy 30%": (0.5, 30)}


@pytest.mark.netns
@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_link_turning_slow_or_lossy_mid_run_finishes_or_times_out_within_the_deadlines(dut, tmp_path, condition):
    delay_s, loss = CONDITIONS[condition]
    model = make_matmul_model(tmp_path / "m.onnx", k=64, n=64)
    proc = _bench(tmp_path, dut, model, "--min-duration", "4", "--max-duration", "20", "--json")
    reader = _collect(proc, dut.stderr)
    out = ""
    try:
        assert wait_for(lambda: _said(dut, "edgeopt: timed")() or proc.poll() is not None, 90, 0.01), dut.stderr
        assert dut.wifi.proxy is not None
        dut.wifi.proxy.slow(delay_s)
        dut.wifi.loss(loss)
        assert (f"mod 100 < {loss} drop" in dut.wifi.rules()) == bool(loss)  # the loss is really in force
        changed = time.monotonic()
        assert proc.stdout is not None
        out = proc.stdout.read()  # the JSON result, if any (stdout closes when the process ends)
        proc.wait(timeout=HANG_S * 2)
        took = time.monotonic() - changed
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    err = "\n".join(dut.stderr)
    # Bound: the rest of the agent run (max-duration 20 s + run_grace) or a dead link (dead_after), then the fetch
    # and clean-up deadlines; never more.
    bound = 20 + TIMEOUTS["run_grace"] + TIMEOUTS["fetch"] + TIMEOUTS["cleanup"] + 10
    assert took < bound, (took, err)
    assert "Traceback" not in err, err
    if not loss:  # latency alone: the result is fetched with pipelined reads, ~1 round trip (not one per 32 KiB)
        assert proc.returncode in (0, 1), err
    if proc.returncode in (0, 1):  # finished: a complete result, measured before the link degraded
        result = json.loads(out)
        assert result["run"]["samples"] >= 5 and result["run"]["timed_s"] >= 4, result["run"]
        outcome = "finished"
    else:
        assert proc.returncode == 3, err
        line = assert_one_line(err, f"root@127.0.0.1:{dut.wifi.port}")
        assert "network" in line or "--ssh-timeout" in line or "--max-duration" in line, line
        outcome = "timed out"
    print(f"{condition}: {outcome} {took:.1f} s after the link changed (bound {bound} s)")
    dut.link_back()
    _assert_clean_after_link_back(dut)
    _next_run_succeeds(tmp_path, dut, model)
    record(f"link turned slow or lossy mid-run ({condition}), finished or timed out in time")


@pytest.mark.parametrize("how", ["stall", "cut"])
def test_link_stalled_or_reset_by_the_proxy_mid_run_without_namespaces(device, tmp_path, how):
    """The same dead link where namespaces are unavailable: a loopback sshd behind the proxy, which stalls (nothing
    passes, as with 100% loss) or cuts (every connection reset) in the timed loop."""
    with LinkProxy(("127.0.0.1", device.sshd.port)) as proxy:
        inv = tmp_path / "inv" / "devices.yaml"
        inv.parent.mkdir()
        inv.write_text(yaml.safe_dump({"devices": [{
            "name": "wifi", "host": "127.0.0.1", "port": proxy.port, "user": "root",
            "key": str(device.sshd.client_key), "target": "local", "python": DEVICE_PYTHON,
            "workdir": str(device.workdir)}]}))
        dut = WifiDut(None, device.workdir, device.known_hosts, inv)  # type: ignore[arg-type]
        model = make_matmul_model(tmp_path / "m.onnx", k=64, n=64)
        proc = _bench(tmp_path, dut, model, "--min-duration", "30")
        reader = _collect(proc, dut.stderr)
        try:
            assert wait_for(lambda: _said(dut, "edgeopt: timed")() or proc.poll() is not None, 90, 0.01)
            assert proc.poll() is None, dut.stderr
            proxy.stall() if how == "stall" else proxy.cut()
            cut = time.monotonic()
            proc.wait(timeout=HANG_S)
            took = time.monotonic() - cut
        finally:
            if proc.poll() is None:
                proc.kill()
        reader.join(timeout=10)
        err = "\n".join(dut.stderr)
        assert proc.returncode == 3, err
        words = "died during the agent run" if how == "stall" else "lost the connection"
        line = assert_one_line(err, words, f"root@127.0.0.1:{proxy.port}")
        assert "network" in line or "link dropped" in line, line
        assert took < HANG_S
        assert wait_for(lambda: not dut.agent_running(), TIMEOUTS["dead_after"] + 15), "agent still running"
        proxy.normal()
        _assert_clean_after_link_back(dut)
        _next_run_succeeds(tmp_path, dut, model)
    record(f"link {'stalled' if how == 'stall' else 'reset'} by the proxy mid-run (no namespace)")
