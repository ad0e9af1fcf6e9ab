"""TensorRT: builds an engine on the device from ONNX (or a TensorRT ONNX), or loads a serialized engine."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor, SetupRule

DESCRIPTOR = RuntimeDescriptor(
    name="tensorrt",
    display_name="TensorRT",
    delivers="tensorrt_onnx",
    module_sets=(("tensorrt", "cuda"),),
    install="TensorRT comes with JetPack: apt-get install python3-libnvinfer (a venv needs "
            "--system-site-packages), plus pip install cuda-python; on x86 with an NVIDIA GPU: pip install tensorrt",
    int8_symmetric=True,
    setup=(SetupRule(vendor="sudo apt-get install python3-libnvinfer (JetPack; the venv sees it through "
                            "--system-site-packages), then pip install cuda-python in the venv"),),
    setup_aliases=("trt",),
    not_installed_hint="TensorRT is not installed here: bench it on the Jetson (--device), where the engine is built",
)
