"""Progress lines (plain and live) and executor names: what a user sees before any device runs."""

from __future__ import annotations

import io
import sys

import pytest

from edgeopt.errors import InputError
from edgeopt.fleet import FleetProgress, FleetRow
from edgeopt.fleet.executors import LocalExecutor, make_executor
from edgeopt.fleet.progress import done_event


def _events(progress: FleetProgress) -> None:
    progress("pi-1", {"event": "state", "state": "queued"})
    progress("pi-1", {"event": "state", "state": "running"})
    progress("pi-1", {"event": "phase", "phase": "upload"})
    progress("pi-1", {"event": "phase", "phase": "upload"})  # the model after the agent: same phase, one line
    progress("pi-1", {"event": "progress", "done": 10, "target": 200, "elapsed_s": 0.5})
    row = FleetRow(device="pi-1", target="rpi5", runner="ssh:pi@h:22", status="error", error="[boom] gone",
                   error_kind="device", seconds=1.0)
    progress("pi-1", done_event(row))


def test_plain_lines_one_per_change_without_progress_ticks():
    out = io.StringIO()
    with FleetProgress(stream=out, live=False) as progress:
        _events(progress)
    lines = out.getvalue().splitlines()
    assert lines == ["edgeopt: pi-1: queued", "edgeopt: pi-1: running", "edgeopt: pi-1: running: upload",
                     "edgeopt: pi-1: error: device: [boom] gone"]


def test_live_table_renders_every_device_and_keeps_brackets_literal():
    out = io.StringIO()
    with FleetProgress(["pi-0"], stream=out, live=True) as progress:
        _events(progress)
    text = out.getvalue()
    assert "pi-0" in text and "pi-1" in text and "[boom] gone" in text


def test_executor_names():
    from edgeopt.config import Settings

    assert isinstance(make_executor("local"), LocalExecutor)
    client = make_executor("ray://10.0.0.5:10001")
    assert client.name == "ray://10.0.0.5:10001" and client.address == "ray://10.0.0.5:10001"
    assert make_executor("ray:auto").address == "auto"
    assert make_executor("ray:10.0.0.5:6379").address == "10.0.0.5:6379"
    assert make_executor("ray", Settings()).address is None  # a local cluster
    joined = make_executor("ray", Settings(ray_address="10.0.0.5:6379"))  # RAY_ADDRESS
    assert joined.address == "10.0.0.5:6379" and joined.name == "ray"
    with pytest.raises(InputError, match="--executor 'dask': use one of local, ray, ray:auto"):
        make_executor("dask")


def test_ray_missing_is_an_input_error_with_the_extra(monkeypatch: pytest.MonkeyPatch):
    from edgeopt.fleet.executors.ray_exec import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as when it is not installed
    with pytest.raises(InputError, match=r"pip install 'edgeopt\[ray\]'"):
        import_ray()
