"""One template over every registered runtime: it profiles per layer (the runtimes whose class implements it) or says
plainly why not, as an input error listing the runtimes that can."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt_agent import runtimes
from edgeopt_agent.profile import profile
from edgeopt_agent.protocol import ERROR_INPUT, Request
from tests.contract.test_runtimes import GRAPH, MODELS


def _cls(name: str) -> type:
    return runtimes.runtime_class(name)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("profile-contract")


def test_profiling_runtimes_are_those_whose_class_implements_profile():
    capable = {n for n in runtimes.names() if _cls(n).profile_unsupported == ""}
    assert capable == set(runtimes.profiling()) == {"onnxruntime", "openvino", "tensorrt"}
    for name in set(runtimes.names()) - capable:  # each says why, in a sentence with the alternative
        assert len(_cls(name).profile_unsupported) > 20


@pytest.mark.parametrize("name", GRAPH)  # generative runtimes refuse too (their profile_unsupported), untested here
def test_runtime_profiles_or_refuses_plainly(name, model_dir):
    model = MODELS[name](model_dir)
    request = Request(model_path=str(model.path), runtime=name, iterations=4, warmup=1, progress_interval_s=0)
    if name not in runtimes.profiling():
        raw = profile(request, lambda e: None)
        assert not raw.ok and raw.error_kind == ERROR_INPUT
        assert f"runtime {name} cannot profile per layer" in raw.error
        assert "runtimes that can: onnxruntime, openvino, tensorrt" in raw.error
        return
    try:
        runtimes.create(name)
    except runtimes.RuntimeMissing as exc:
        why = ("TensorRT's IProfiler path needs tensorrt, cuda-python and an NVIDIA GPU (a Jetson), none here"
               if name == "tensorrt" else f"{name} not installed here")
        pytest.skip(f"{why}: {exc}")
    raw = profile(request, lambda e: None)
    assert raw.ok, raw.error
    layers = raw.profile["layers"]
    assert layers and raw.profile["iterations"] == 4 and len(raw.samples_ns) == 4
    assert abs(sum(r["share"] for r in layers) - 1.0) < 1e-6
    keys = {"name", "op_type", "impl", "provider", "precision", "original_names", "node_index", "executed",
            "median_us", "p90_us", "share", "calls", "order"}
    assert all(keys <= set(r) for r in layers)
