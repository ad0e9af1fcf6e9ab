"""The agent's memory headroom at start: the machine's MemAvailable, or its memory cgroup's limit when smaller
(an OOM kill in a container is judged from it)."""

from __future__ import annotations

from pathlib import Path

from edgeopt_agent import probe

MB = 1024 * 1024


def _root(tmp_path: Path, cgroup: str, files: dict[str, str]) -> str:
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "meminfo").write_text("MemTotal:       8000000 kB\nMemAvailable:   6000000 kB\n")
    (tmp_path / "proc" / "self" / "cgroup").write_text(cgroup)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return str(tmp_path)


def test_v1_memory_limit_bounds_the_headroom(tmp_path):
    root = _root(tmp_path, "4:memory:/box\n0::/\n", {
        "sys/fs/cgroup/memory/box/memory.limit_in_bytes": str(250 * MB),
        "sys/fs/cgroup/memory/box/memory.usage_in_bytes": str(50 * MB)})
    assert probe.cgroup_memory_mb(root) == (250.0, 200.0)
    assert probe.memory_headroom_mb(root) == (200.0, 250.0)


def test_v2_memory_max_bounds_the_headroom(tmp_path):
    root = _root(tmp_path, "0::/app\n", {"sys/fs/cgroup/app/memory.max": str(1000 * MB),
                                          "sys/fs/cgroup/app/memory.current": str(1100 * MB)})
    assert probe.memory_headroom_mb(root) == (0.0, 1000.0)  # over the limit: nothing left


def test_no_limit_keeps_the_machine_figures(tmp_path):
    root = _root(tmp_path, "0::/app\n4:memory:/\n", {
        "sys/fs/cgroup/app/memory.max": "max", "sys/fs/cgroup/app/memory.current": "1",
        "sys/fs/cgroup/memory/memory.limit_in_bytes": str((1 << 63) - 4096)})
    assert probe.cgroup_memory_mb(root) is None
    available, total = probe.memory_headroom_mb(root)
    assert round(available or 0) == 5859 and round(total or 0) == 7812
