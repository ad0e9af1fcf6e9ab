"""TensorRT engine: a serialized engine, specific to one GPU and TensorRT version (benchmarked, never made)."""

from __future__ import annotations

from edgeopt_agent.runtimes.tensorrt_rt import TensorRtRuntime

from ..format_spec import FormatDescriptor

DESCRIPTOR = FormatDescriptor(
    name="tensorrt_engine",
    summary="Serialized TensorRT engine (.engine / .plan / .trt), specific to one GPU and TensorRT version",
    suffixes=TensorRtRuntime.engine_suffixes,  # the agent decides build-or-load by these: declared there once
)
