"""ONNX Runtime: loads ONNX everywhere; execution providers follow the target's accelerator."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...enums import AcceleratorKind, Arch
from ..runtime_spec import InstallHint, ProviderRule, RuntimeDescriptor, SetupRule
from ..runtime_sweep import CliFlag, Int8Backend

CPU_EP = "CPUExecutionProvider"
JETSON_ZOO = ("pip install the onnxruntime-gpu wheel matching your JetPack from the Jetson Zoo "
              "(https://elinux.org/Jetson_Zoo#ONNX_Runtime)")
_FLOAT_TYPES: dict[str, type[np.floating]] = {"tensor(float)": np.float32, "tensor(float16)": np.float16,
                                               "tensor(double)": np.float64}


def _cast(feed: dict[str, np.ndarray], wants: dict[str, type[np.floating] | None]) -> dict[str, np.ndarray]:
    """Float samples in the float type each input declares (other dtypes are passed as they are)."""
    out = {}
    for name, value in feed.items():
        want = wants.get(name)
        arr = np.asarray(value)
        out[name] = arr.astype(want) if want is not None and arr.dtype.kind == "f" and arr.dtype != want else arr
    return out


class OnnxRuntimeDescriptor(RuntimeDescriptor):
    """ONNX Runtime, which also proves ONNX and TensorRT ONNX conversions on the host (CPU provider)."""

    def available_providers(self) -> list[str] | None:
        import onnxruntime

        return list(onnxruntime.get_available_providers())

    def host_infer(self, path: Path, samples: Sequence[dict[str, np.ndarray]], module: str) -> list[list[np.ndarray]]:
        import onnxruntime as ort

        sess = ort.InferenceSession(str(path), providers=[CPU_EP])
        # a float model with float16 I/O (fp16 keep_io_types: false) gets the same samples, cast
        wants = {i.name: _FLOAT_TYPES.get(i.type) for i in sess.get_inputs()}
        return [[np.asarray(o) for o in sess.run(None, _cast(feed, wants))] for feed in samples]


DESCRIPTOR = OnnxRuntimeDescriptor(
    name="onnxruntime",
    display_name="ONNX Runtime",
    module_sets=(("onnxruntime",),),
    install="pip install onnxruntime",
    install_hints=(
        InstallHint(accelerator=AcceleratorKind.NVIDIA_GPU, arch=Arch.AARCH64,
                    text=f"{JETSON_ZOO}; CPU only: pip install onnxruntime"),
    ),
    setup=(
        # JetPack's CUDA/TensorRT providers come only in NVIDIA's build: named, not installed
        SetupRule(accelerator=AcceleratorKind.NVIDIA_GPU, arch=Arch.AARCH64,
                  vendor=f"{JETSON_ZOO}, then pip install it into the venv (CPU only: pip install onnxruntime)"),
        SetupRule(pip=("onnxruntime",)),
    ),
    setup_aliases=("onnxruntime-gpu",),
    providers=(
        ProviderRule(accelerator=AcceleratorKind.NVIDIA_GPU,
                     providers=("TensorrtExecutionProvider", "CUDAExecutionProvider")),
        ProviderRule(accelerator=AcceleratorKind.INTEL_GPU, providers=("OpenVINOExecutionProvider",)),
    ),
    fallback_provider=CPU_EP,
    providers_option="providers",
    validation_modules=("onnxruntime",),
    # the sweep and the CLI
    int8_backends=(Int8Backend.QDQ,),
    cli_flags=(CliFlag(flag="--provider", option="providers", repeatable=True, metavar="EP",
                       help="ONNX Runtime execution provider, repeatable"),),
)
