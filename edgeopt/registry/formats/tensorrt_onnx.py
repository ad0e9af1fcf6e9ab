"""TensorRT ONNX: an ONNX file prepared for TensorRT (explicit QDQ, S8/S8); the agent builds the engine on the
device, since an engine is specific to one GPU and TensorRT version."""

from __future__ import annotations

from ..format_spec import FormatDescriptor

DESCRIPTOR = FormatDescriptor(
    name="tensorrt_onnx",
    summary="ONNX prepared for TensorRT (explicit QDQ, S8/S8); the engine is built on the device",
    loads_as="onnx",
    wrong_runtime_hint="a TensorRT ONNX runs only on TensorRT: bench it on the Jetson (--device) or pass "
                       "--runtime tensorrt",
    converter="tensorrt_prepare",
    validated_by=("onnxruntime",),
)
