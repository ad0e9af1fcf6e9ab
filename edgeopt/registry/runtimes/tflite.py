"""TFLite / LiteRT: loads .tflite flatbuffers (Raspberry Pi, Coral with the Edge TPU delegate)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...enums import AcceleratorKind
from ..runtime_spec import ExtraPackage, InstallHint, RuntimeDescriptor, SetupRule


def to_tflite_input(x: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """An NCHW float feed made to fit a TFLite input: transposed to NHWC when needed, quantized for int8/uint8."""
    shape = tuple(int(s) for s in detail["shape"])
    if x.shape != shape and x.ndim == 4 and x.transpose(0, 2, 3, 1).shape == shape:
        x = x.transpose(0, 2, 3, 1)
    dtype = np.dtype(detail["dtype"])
    if dtype.kind in "iu":
        scale, zero = detail["quantization"]
        info = np.iinfo(dtype)
        x = np.clip(np.round(x / (scale or 1.0) + zero), info.min, info.max)
    return np.ascontiguousarray(x.astype(dtype))


def from_tflite_output(y: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """A TFLite output dequantized to float32."""
    if np.dtype(detail["dtype"]).kind in "iu":
        scale, zero = detail["quantization"]
        return (y.astype(np.float32) - zero) * (scale or 1.0)
    return np.asarray(y, dtype=np.float32)


class TfliteDescriptor(RuntimeDescriptor):
    """TFLite; proves conversions on the host with ai-edge-litert or tflite-runtime (reported by module name)."""

    def host_infer(self, path: Path, samples: Sequence[dict[str, np.ndarray]], module: str) -> list[list[np.ndarray]]:
        if module == "ai_edge_litert":
            from ai_edge_litert.interpreter import Interpreter
        else:
            from tflite_runtime.interpreter import Interpreter

        interp = Interpreter(model_path=str(path))
        interp.allocate_tensors()
        ins, outs_d = interp.get_input_details(), interp.get_output_details()
        results = []
        for feed in samples:
            values = list(feed.values())
            for k, d in enumerate(ins):
                x = np.asarray(feed.get(d["name"], values[k] if k < len(values) else None))
                interp.set_tensor(d["index"], to_tflite_input(x, d))
            interp.invoke()
            results.append([from_tflite_output(interp.get_tensor(d["index"]), d) for d in outs_d])
        return results


DESCRIPTOR = TfliteDescriptor(
    name="tflite",
    display_name="TFLite",
    delivers="tflite",
    module_sets=(("ai_edge_litert",), ("tflite_runtime",), ("tensorflow",)),
    install="pip install ai-edge-litert (or tflite-runtime on Python < 3.9)",
    install_hints=(
        InstallHint(accelerator=AcceleratorKind.EDGETPU,
                    text="install the Edge TPU runtime and PyCoral from Coral's apt repository: "
                         "apt-get install libedgetpu1-std python3-pycoral (brings tflite-runtime)"),
    ),
    extra_packages=(ExtraPackage(accelerator=AcceleratorKind.EDGETPU, package="pycoral",
                                 purpose="Edge TPU delegate"),),
    validation_modules=("ai_edge_litert", "tflite_runtime"),
    setup=(
        SetupRule(accelerator=AcceleratorKind.EDGETPU,
                  vendor="sudo apt-get install libedgetpu1-std python3-pycoral "
                         "(Coral's apt repository: https://coral.ai/software/#debian-packages)"),
        SetupRule(min_python=(3, 9), pip=("ai-edge-litert",)),
        SetupRule(pip=("tflite-runtime",)),  # LiteRT wheels start at Python 3.9
    ),
    setup_aliases=("ai-edge-litert", "litert", "tflite-runtime"),
)
