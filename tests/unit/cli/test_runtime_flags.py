"""Runtime flags of ``bench`` and ``profile`` come from the descriptors' ``cli_flags``; the runtime they imply."""

from __future__ import annotations

import pytest

from edgeopt.cli.bench_cmd import bench
from edgeopt.cli.profile_cmd import profile_cmd
from edgeopt.cli.runtime_flags import runtime_choice
from edgeopt.errors import InputError


@pytest.mark.parametrize("command", [bench, profile_cmd])
def test_commands_take_every_runtimes_flags(command) -> None:
    opts = {o: p for p in command.params for o in p.opts}
    assert opts["--provider"].multiple and not opts["--ov-device"].multiple
    assert "implies --runtime openvino" in (opts["--ov-device"].help or "")


def test_a_flag_implies_its_runtime_and_wins_over_runtime_options() -> None:
    got = runtime_choice(None, {"openvino": {"device": "GPU"}}, ("device=CPU", "num_streams=2"))
    assert got == {"runtime": "openvino", "runtime_options": {"device": "GPU", "num_streams": 2}}
    got = runtime_choice(None, {"onnxruntime": {"providers": ["CPUExecutionProvider"]}}, ())
    assert got == {"runtime": "onnxruntime", "runtime_options": {"providers": ["CPUExecutionProvider"]}}
    assert runtime_choice(None, {}, ()) == {"runtime": None, "runtime_options": {}}


def test_a_named_runtime_wins_and_two_runtimes_flags_are_refused() -> None:
    got = runtime_choice("openvino", {"onnxruntime": {"providers": ["X"]}}, ())
    assert got == {"runtime": "openvino", "runtime_options": {"providers": ["X"]}}  # the agent names the bad option
    with pytest.raises(InputError, match="flags of several runtimes given .onnxruntime, openvino."):
        runtime_choice(None, {"onnxruntime": {"providers": ["X"]}, "openvino": {"device": "CPU"}}, ())
