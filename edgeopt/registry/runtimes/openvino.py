"""OpenVINO: loads ONNX and OpenVINO IR (Intel CPUs, iGPUs, NPUs)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..runtime_spec import RuntimeDescriptor, SetupRule
from ..runtime_sweep import CliFlag, Int8Backend, LowPrecisionDefault


class OpenVinoDescriptor(RuntimeDescriptor):
    """OpenVINO; proves IR conversions on the host's CPU when the openvino package is installed."""

    def host_infer(self, path: Path, samples: Sequence[dict[str, np.ndarray]], module: str) -> list[list[np.ndarray]]:
        import openvino as ov

        compiled = ov.Core().compile_model(str(path), "CPU")
        request = compiled.create_infer_request()
        names = [i.get_any_name() for i in compiled.inputs]
        outs = []
        for feed in samples:
            result = request.infer(
                {n: feed[n] for n in names if n in feed} if set(names) <= set(feed) else list(feed.values())
            )
            outs.append([np.asarray(result[o]) for o in compiled.outputs])
        return outs


DESCRIPTOR = OpenVinoDescriptor(
    name="openvino",
    display_name="OpenVINO",
    delivers="openvino_ir",
    module_sets=(("openvino",),),
    install="pip install openvino",
    setup=(SetupRule(pip=("openvino",)),),
    validation_modules=("openvino",),
    # the sweep and the CLI: on CPUs with AVX512_BF16 or AMX it runs float parts in BF16 unless told f32
    reference_options={"inference_precision": "f32"},
    low_precision_default=LowPrecisionDefault(level="bf16", option="inference_precision", reports="bf16",
                                              cpu_flags=("avx512_bf16", "amx_bf16")),
    int8_backends=(Int8Backend.QDQ, Int8Backend.NNCF),
    cli_flags=(CliFlag(flag="--ov-device", option="device", metavar="DEVICE",
                       help="OpenVINO device: CPU, GPU, NPU, AUTO"),),
)
