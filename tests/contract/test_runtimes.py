"""One template run against every runtime registered in the agent: each must load, infer and be timed alike.

A runtime whose library is not installed here is skipped with the package to install.
"""

from __future__ import annotations

import pytest

from edgeopt_agent import runtimes
from edgeopt_agent.harness import run
from edgeopt_agent.protocol import Request


@pytest.mark.parametrize("name", runtimes.names())
def test_runtime_contract(name, tiny_cnn):
    try:
        rt = runtimes.create(name)
    except runtimes.RuntimeMissing as exc:
        pytest.skip(f"{name} not installed here: {exc}")
    assert rt.name == name and rt.version()
    raw = run(Request(model_path=str(tiny_cnn), runtime=name, iterations=20, min_duration_s=0, warmup=2),
              lambda e: None)
    assert raw.ok, raw.error
    assert raw.runtime["name"] == name and raw.runtime["version"] == rt.version()
    assert len(raw.samples_ns) == 20 and all(s > 0 for s in raw.samples_ns)
    assert raw.load_ms is not None and raw.first_inference_ms is not None
    if name != "null":  # a real runtime reports the model's real tensors
        assert raw.inputs[0]["shape"] == [1, 3, 32, 32] and raw.outputs[0]["shape"] == [1, 10]


def test_registry_unknown_name_lists_known():
    with pytest.raises(KeyError, match="known runtimes: .*onnxruntime"):
        runtimes.create("tensorflow-js")
