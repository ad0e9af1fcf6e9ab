"""The agent killed on the device at each phase: the host says which signal, after how long, where; the next
run succeeds with no manual cleanup."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from edgeopt.errors import RunnerError
from edgeopt_agent.protocol import Request
from tests.faults.helpers import assert_device_clean, record, wait_for

# phase the kill waits for -> the words the error must use; the request makes that phase last long enough.
PHASES = {
    "lock_wait": ("waiting for the device lock", {}),
    "warmup": ("the warm-up", {"warmup_s": 30.0}),
    "timed": ("the timed loop", {"min_duration_s": 30.0}),
}


def _hold_lock(device) -> int:
    device.lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(device.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, json.dumps({"pid": os.getpid(), "since": time.time(), "host": "test"}).encode())
    return fd


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.parametrize("phase", list(PHASES))
def test_agent_killed_in_a_phase_is_reported_and_the_next_run_succeeds(shared_device, tiny_cnn, phase, sig):
    words, fields = PHASES[phase]
    held = _hold_lock(shared_device) if phase == "lock_wait" else None
    events: list[dict] = []

    def kill_in_phase(event: dict) -> None:
        events.append(event)
        if event.get("event") == "phase" and event.get("phase") == phase:
            os.kill(next(e["pid"] for e in events if e.get("event") == "start"), sig)

    request = Request(model_path="", iterations=10, max_duration_s=60, progress_interval_s=0,
                      **{"min_duration_s": 0.1, **fields})
    try:
        with pytest.raises(RunnerError) as info:
            shared_device.runner().run(request, tiny_cnn, kill_in_phase)
    finally:
        if held is not None:
            os.close(held)
    message = str(info.value)
    assert "\n" not in message
    assert re.search(rf"was killed by {sig.name} after \d+\.\d s in {words}; no result kept", message), message
    assert_device_clean(shared_device)
    assert shared_device.job_dirs() == []
    raw = shared_device.runner().run(Request(model_path="", iterations=10, min_duration_s=0.05), tiny_cnn)
    assert raw.ok
    record("agent killed (SIGKILL/SIGTERM) at a phase, over SSH")


def _memory_cgroup() -> Path | None:
    """This process's v1 memory cgroup directory when it can hold a child with a limit (root), else None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, rel = line.split(":", 2)
        if "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / rel.lstrip("/")
            return base if os.geteuid() == 0 and (base / "memory.limit_in_bytes").exists() else None
    return None


def _expand_model(path: Path, elements: int) -> Path:
    """y = sum(expand(x, [1, elements])): a tiny file whose first inference allocates elements * 4 bytes."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    shape = numpy_helper.from_array(np.array([1, elements], dtype=np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["big"]), helper.make_node("ReduceSum", ["big"], ["y"])],
        "oom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])], initializer=[shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _move_all(source: Path, to: Path) -> None:
    for pid in (source / "cgroup.procs").read_text().split():
        with contextlib.suppress(OSError):
            (to / "cgroup.procs").write_text(pid)


def test_agent_oom_killed_in_a_memory_limited_device_says_probably_out_of_memory(device, tmp_path, tiny_cnn):
    """A device whose memory cgroup allows 250 MB (a container's limit): the agent's first inference needs
    400 MB, the kernel OOM-kills it, and the host says so (the agent read the cgroup's headroom at start)."""
    parent = _memory_cgroup()
    if parent is None:
        pytest.skip("needs root and a cgroup v1 memory controller to give the device a memory limit")
    group = parent / f"edgeopt-oom-{os.getpid()}"
    group.mkdir()
    try:
        (group / "memory.limit_in_bytes").write_text(str(250 * 1024 * 1024))
        if (group / "memory.memsw.limit_in_bytes").exists():
            (group / "memory.memsw.limit_in_bytes").write_text(str(250 * 1024 * 1024))
        (group / "cgroup.procs").write_text(str(device.sshd.proc.pid))  # sessions (and agents) start in it
        model = _expand_model(tmp_path / "oom.onnx", 100_000_000)
        request = Request(model_path="", iterations=5, min_duration_s=0.1, max_duration_s=60)
        with pytest.raises(RunnerError) as info:
            device.runner().run(request, model)
        message = str(info.value)
        assert "\n" not in message
        assert re.search(r"was killed by SIGKILL after \d+\.\d s in [a-z -]+, probably out of memory \(only \d+ MB "
                         r"available at start\); no result kept: free memory on the device or measure a smaller "
                         r"model", message), message
        oom = dict(line.split() for line in (group / "memory.oom_control").read_text().splitlines())
        assert int(oom.get("oom_kill", "1")) >= 1  # the kernel's OOM killer did it (field absent: kernel < 4.13)
        assert_device_clean(device)
        assert device.job_dirs() == []
    finally:
        _move_all(group, parent)
        wait_for(lambda: not (group / "cgroup.procs").read_text().split(), 10)
        with contextlib.suppress(OSError):
            group.rmdir()
    raw = device.runner().run(Request(model_path="", iterations=10, min_duration_s=0.05), tiny_cnn)
    assert raw.ok  # the device, its limit gone, runs the next job without cleanup
    record("agent OOM-killed on a device with a 250 MB memory limit, over SSH")
