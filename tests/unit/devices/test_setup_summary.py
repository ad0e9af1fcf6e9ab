"""``devices setup`` says which runtime a device is ready with, never 'ready' for one it lacks (issue 23, item 7)."""

from __future__ import annotations

from edgeopt.devices.setup import SetupReport


def _report(runtimes: dict[str, bool], vendor: dict[str, str] | None = None, numpy: str | None = "1.26.4"):
    return SetupReport(device="orin", arch="aarch64", base_python="/usr/bin/python3", python="/w/venv/bin/python",
                       python_version="3.8.10", mode="none", changed=False, actions=[],
                       packages={"numpy": numpy}, runtimes=runtimes, vendor=vendor or {}, device_state="/w/setup.json",
                       message="already provisioned: nothing changed")


def test_ready_names_the_runtime_a_bench_uses_and_what_is_missing():
    rep = _report({"tensorrt": False, "onnxruntime": True}, {"tensorrt": "sudo apt install python3-libnvinfer"})
    assert not rep.ready  # the target's first choice is absent...
    assert rep.summary == ("ready with onnxruntime; tensorrt missing (vendor-only: sudo apt install "
                           "python3-libnvinfer)")  # ...but a bench will run, on onnxruntime
    assert rep.model_dump()["summary"] == rep.summary  # in --json too


def test_nothing_loadable_or_no_numpy_is_not_ready():
    assert _report({"onnxruntime": False}).summary == "NOT READY: onnxruntime missing"
    assert _report({"onnxruntime": True}, numpy=None).summary == "NOT READY: numpy missing"
    assert _report({"onnxruntime": True}).summary == "ready with onnxruntime"
