"""``tensorrt_prepare``: ship the ONNX for an on-device TensorRT engine build (engines are specific to one GPU and
TensorRT version, so the agent's ``tensorrt`` runtime builds the engine on the Jetson).

Host side, the pass copies the ONNX (INT8 stays explicit QDQ, which TensorRT 8.5+ builds as INT8), records the
builder precision flag (``fp16`` / ``int8``) in the report, and checks every op and the opset against
TensorRT's ONNX parser support for the target's TensorRT version, warning (or failing, ``strict: true``) when the
engine build would reject the model.
"""

from __future__ import annotations

from pydantic import Field

from ..enums import Precision
from ..targets.schema import Target
from .base import Artifact, ArtifactFormat, PassConfig, PassContext, PassError, PassOutput
from .convert_base import ConvertPass
from .onnx_io import load, save

# ONNX ops the TensorRT ONNX parser imports (onnx-tensorrt docs/operators.md), common to 8.5, 8.6 and 10.x.
_TRT_COMMON = frozenset(
    [
        "Abs",
        "Acos",
        "Acosh",
        "Add",
        "And",
        "ArgMax",
        "ArgMin",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "AveragePool",
        "BatchNormalization",
        "Cast",
        "Ceil",
        "Celu",
        "Clip",
        "Concat",
        "Constant",
        "ConstantOfShape",
        "Conv",
        "ConvTranspose",
        "Cos",
        "Cosh",
        "CumSum",
        "DepthToSpace",
        "DequantizeLinear",
        "Div",
        "Dropout",
        "Einsum",
        "Elu",
        "Equal",
        "Erf",
        "Exp",
        "Expand",
        "EyeLike",
        "Flatten",
        "Floor",
        "Gather",
        "GatherElements",
        "GatherND",
        "Gemm",
        "GlobalAveragePool",
        "GlobalLpPool",
        "GlobalMaxPool",
        "Greater",
        "GreaterOrEqual",
        "GRU",
        "HardSigmoid",
        "Hardmax",
        "Identity",
        "If",
        "InstanceNormalization",
        "IsInf",
        "IsNaN",
        "LeakyRelu",
        "Less",
        "LessOrEqual",
        "Log",
        "LogSoftmax",
        "Loop",
        "LpNormalization",
        "LpPool",
        "LRN",
        "LSTM",
        "MatMul",
        "Max",
        "MaxPool",
        "Mean",
        "Min",
        "Mod",
        "Mul",
        "Neg",
        "NonMaxSuppression",
        "NonZero",
        "Not",
        "OneHot",
        "Or",
        "Pad",
        "ParametricSoftplus",
        "Pow",
        "PRelu",
        "QuantizeLinear",
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
        "Range",
        "Reciprocal",
        "ReduceL1",
        "ReduceL2",
        "ReduceLogSum",
        "ReduceLogSumExp",
        "ReduceMax",
        "ReduceMean",
        "ReduceMin",
        "ReduceProd",
        "ReduceSum",
        "ReduceSumSquare",
        "Relu",
        "Reshape",
        "Resize",
        "ReverseSequence",
        "RNN",
        "RoiAlign",
        "Round",
        "ScaledTanh",
        "Scan",
        "Scatter",
        "ScatterElements",
        "ScatterND",
        "Selu",
        "Shape",
        "Shrink",
        "Sigmoid",
        "Sign",
        "Sin",
        "Sinh",
        "Size",
        "Slice",
        "Softmax",
        "Softplus",
        "Softsign",
        "SpaceToDepth",
        "Split",
        "Sqrt",
        "Squeeze",
        "Sum",
        "Tan",
        "Tanh",
        "ThresholdedRelu",
        "Tile",
        "TopK",
        "Transpose",
        "Trilu",
        "Unsqueeze",
        "Upsample",
        "Where",
        "Xor",
    ]
)
# Version -> (supported ops, max ONNX opset of its parser).
TRT_SUPPORT: dict[str, tuple[frozenset[str], int]] = {
    "8.5": (_TRT_COMMON, 17),
    "8.6": (
        _TRT_COMMON
        | {"GroupNormalization", "LayerNormalization", "BlackmanWindow", "HannWindow", "HammingWindow", "DFT"},
        17,
    ),
    "10": (
        _TRT_COMMON
        | {
            "GroupNormalization",
            "LayerNormalization",
            "BlackmanWindow",
            "HannWindow",
            "HammingWindow",
            "DFT",
            "Gelu",
            "Mish",
            "BitShift",
            "Col2Im",
            "Compress",
        },
        20,
    ),
}
# Which TensorRT a JetPack target ships (JetPack 4.6: TRT 8.2 -> checked against 8.5's table; 5.1: 8.5; 6: 8.6/10).
_TARGET_TRT = {"jetson-nano": "8.5", "jetson-orin-nano": "10", "jetson-orin-nx": "10", "jetson-agx-orin": "10"}


class TensorRtPrepareConfig(PassConfig):
    trt_version: str | None = Field(
        default=None, description="TensorRT version to check against (8.5, 8.6, 10); None: from the target."
    )
    strict: bool = Field(default=False, description="Fail (instead of warn) when an op or the opset is unsupported.")


class TensorRtPreparePass(ConvertPass):
    name = "tensorrt_prepare"
    summary = "ONNX for an on-device TensorRT engine build; checks ops/opset against TensorRT 8.5/8.6/10"
    config_class = TensorRtPrepareConfig
    output_format = ArtifactFormat.TENSORRT_ONNX
    suffix = ".trt.onnx"

    def for_target(self, target: Target) -> TensorRtPreparePass:
        if self.config.trt_version is not None:
            return self
        version = _TARGET_TRT.get(target.name, "10")
        return TensorRtPreparePass(self.config.model_copy(update={"trt_version": version}))

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        version = self.config.trt_version or "10"
        if version not in TRT_SUPPORT:
            raise PassError(f"tensorrt_prepare trt_version {version!r} unknown; use one of {', '.join(TRT_SUPPORT)}")
        model = load(source)
        problems = check_tensorrt(model, version)
        if problems and self.config.strict:
            raise PassError(f"{source.path} will not build on TensorRT {version}: {'; '.join(problems)}")
        out = ctx.output_path.with_suffix(".onnx")
        save(model, out)
        flag = {Precision.INT8: "int8", Precision.FP16: "fp16"}.get(source.precision, "fp16")
        return PassOutput(
            path=out,
            precision=source.precision,
            format=ArtifactFormat.TENSORRT_ONNX,
            report={
                "trt_version_checked": version,
                "builder_flag": flag,
                "unsupported": problems,
                "engine": "built on the device by the agent's tensorrt runtime",
            },
            warnings=[f"TensorRT {version}: {p}" for p in problems],
        )


def check_tensorrt(model: object, version: str) -> list[str]:
    """Problems TensorRT ``version``'s ONNX parser would have with ``model`` (empty when none)."""
    ops, max_opset = TRT_SUPPORT[version]
    problems = []
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)  # type: ignore[attr-defined]
    if opset > max_opset:
        problems.append(f"opset {opset} > {max_opset} (TensorRT {version}'s parser); re-export with opset {max_opset}")
    bad = sorted({n.op_type for n in model.graph.node if n.domain in ("", "ai.onnx") and n.op_type not in ops})  # type: ignore[attr-defined]
    custom = sorted({f"{n.domain}.{n.op_type}" for n in model.graph.node if n.domain not in ("", "ai.onnx")})  # type: ignore[attr-defined]
    if bad:
        problems.append(f"ops not supported: {', '.join(bad)}")
    if custom:
        problems.append(f"custom-domain ops need a TensorRT plugin: {', '.join(custom)}")
    return problems
