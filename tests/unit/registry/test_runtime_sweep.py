"""What a runtime descriptor declares for the sweep and the CLI (``edgeopt/registry/runtime_sweep.py``): the
built-ins keep the rules the sweep used to spell out per runtime, and a descriptor's declarations are checked."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edgeopt.registry import RuntimeDescriptor, get_runtime
from edgeopt.registry.runtime_sweep import Int8Backend, LowPrecisionDefault
from edgeopt.sweep.api import float_options
from edgeopt.sweep.int8.latency import int8_runtimes
from edgeopt.sweep.rank.recommend import complexity
from edgeopt.sweep.result import Level

BF16 = LowPrecisionDefault(level="bf16", option="inference_precision", reports="bf16",
                           cpu_flags=("avx512_bf16", "amx_bf16"))


def test_builtins_keep_the_sweeps_former_rules() -> None:
    rts = ["onnxruntime", "openvino", "tflite", "tensorrt", "coreml", "null"]
    assert float_options(rts) == {"openvino": {"inference_precision": "f32"}}
    assert float_options(["onnxruntime"]) == {}
    assert int8_runtimes(rts) == ["onnxruntime", "openvino"]
    assert int8_runtimes(rts, Int8Backend.NNCF) == ["openvino"]
    assert get_runtime("openvino").low_precision_default == BF16
    assert [r for r in rts if get_runtime(r).low_precision_default is not None] == ["openvino"]
    flags = {f.flag: (r, f.option, f.repeatable) for r in rts for f in get_runtime(r).cli_flags}
    assert flags == {"--provider": ("onnxruntime", "providers", True), "--ov-device": ("openvino", "device", False)}


def test_low_precision_is_tried_where_the_cpu_may_run_it() -> None:
    assert BF16.expected(["avx2", "amx_bf16"]) and BF16.expected(["avx512_bf16"])
    assert not BF16.expected(["avx2", "avx512f"])
    assert BF16.expected(None) and BF16.expected([])  # flags unknown: tried, the runtime's report decides
    assert LowPrecisionDefault(level="f16", option="p", reports="f16").expected(["neon"])  # no flags: any CPU
    assert BF16.ran_low({"inference_precision": "BF16"}) and not BF16.ran_low({"inference_precision": "f32"})
    assert not BF16.ran_low({})


def test_low_precision_option_must_be_a_reference_option() -> None:
    with pytest.raises(ValidationError, match="not one of its reference_options"):
        RuntimeDescriptor(name="lowrt", display_name="Low", low_precision_default=BF16)
    ok = RuntimeDescriptor(name="lowrt", display_name="Low", low_precision_default=BF16,
                           reference_options={"inference_precision": "f32"})
    assert ok.low_precision_default is BF16


def test_unknown_backend_and_bad_flag_are_refused() -> None:
    with pytest.raises(ValidationError):
        RuntimeDescriptor(name="x1", display_name="X1", int8_backends=("tensorrt_int8",))
    with pytest.raises(ValidationError):
        RuntimeDescriptor(name="x1", display_name="X1", cli_flags=({"flag": "-d", "option": "device",
                                                                     "help": "device"},))


def _level(recipe: str, runtime: str) -> Level:
    return Level(recipe=recipe, runtime=runtime, runtime_version="1", artifact="m.onnx", size_bytes=1,
                 latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None, energy_mj=None, energy_source=None,
                 metric="top1", metric_value=1.0,
                 retention=1.0, meets_retention=True, meets_budget=True, passed=True, valid=True, cached=False)


def test_ranking_ties_order_fp32_low_precision_recipe_search() -> None:
    got = [complexity(_level(r, rt)) for r, rt in [("fp32", "onnxruntime"), ("bf16", "openvino"),
                                                   ("fp16", "onnxruntime"), ("int8-search", "openvino")]]
    assert got == [0, 1, 2, 3]
