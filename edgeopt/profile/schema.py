"""Typed results of ``edgeopt profile``: per-layer records joined with the ONNX graph, and a layer-by-layer
comparison of two artifacts. Documented in ``docs/profile.md``; bump ``SCHEMA_VERSION`` on incompatible change."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..analysis.roofline import Roofline
from ..enums import Bound
from ..metrics.result import DeploymentRef

SCHEMA_VERSION = "1.0"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KernelPrecision(str, Enum):
    """The precision a runtime says a layer ran in (the agent's ``layer_events.PRECISIONS``)."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    INT32 = "int32"
    INT64 = "int64"
    BOOL = "bool"
    UNKNOWN = "unknown"

    @property
    def is_float(self) -> bool:
        return self in (KernelPrecision.FP32, KernelPrecision.FP16, KernelPrecision.BF16)

    @classmethod
    def parse(cls, value: Any) -> KernelPrecision:
        try:
            return cls(str(value))
        except ValueError:
            return cls.UNKNOWN


class LayerOrigin(str, Enum):
    """Where a runtime layer comes from."""

    ONNX = "onnx"  # it covers one or more nodes of the ONNX graph
    INSERTED = "inserted"  # a reorder, transpose, convert or copy the runtime added (covers no ONNX node)
    UNMAPPED = "unmapped"  # its name matches no ONNX node (or no ONNX graph was given)


class LayerRecord(_Frozen):
    """One layer as the runtime executed it, with the ONNX nodes it covers and their cost."""

    kernel: str = Field(description="The runtime's name of the executed layer (fused layers keep one name).")
    op_type: str = Field(description="The runtime's type of the layer (QLinearConv, Convolution, Reorder...).")
    impl: str = Field(description="Implementation the runtime chose: OpenVINO exec_type, ORT kernel, TRT tactic.")
    provider: str = Field(description="ORT execution provider, OpenVINO device, or GPU/DLA for TensorRT.")
    precision: KernelPrecision = Field(description="Precision the runtime says the layer ran in.")
    origin: LayerOrigin = Field(description="onnx, inserted (by the runtime) or unmapped.")
    onnx_nodes: list[str] = Field(description="ONNX nodes this layer covers (fused ones included), graph order.")
    onnx_op_types: list[str] = Field(description="Op type of each of onnx_nodes, same order.")
    onnx_node_flops: list[int] = Field(default_factory=list, description="FLOPs each of onnx_nodes carries in this "
                                       "layer, same order (0 for nodes whose cost another layer carries).")
    primary_op: str = Field(description="Op type of the covered node with the most FLOPs (the runtime's type "
                                        "for inserted layers).")
    executed: bool = Field(description="False for layers listed but not run (fused into another, in place).")
    order: int = Field(ge=0, description="Position of the layer's first run in an inference.")
    calls: int = Field(ge=0, description="Runs of this layer per inference (loops run a layer several times).")
    median_ms: float = Field(ge=0, description="Median time per inference over the profiled iterations, ms.")
    p90_ms: float = Field(ge=0, description="90th percentile (nearest rank) time per inference, ms.")
    mean_ms: float = Field(ge=0, description="Mean time per inference, ms.")
    share: float = Field(ge=0, le=1, description="median_ms / sum of every layer's median_ms.")
    macs: int | None = Field(description="Multiply-accumulates of the ONNX nodes it owns; null without a graph.")
    flops: int | None = Field(description="Operations of the ONNX nodes it owns; null without a graph.")
    bytes_moved: int | None = Field(description="Bytes of the tensors entering and leaving its nodes (weights "
                                                "included), at their ONNX types; null when unknown.")
    achieved_gops: float | None = Field(description="flops / median time, in GOP/s.")
    arithmetic_intensity: float | None = Field(description="flops / bytes_moved, in ops per byte.")
    bound: Bound | None = Field(description="Roof the layer sits under on the target: compute or memory.")
    roof_gops: float | None = Field(description="Attainable GOP/s at its intensity: min(peak, intensity x bandwidth).")
    roof_fraction: float | None = Field(description="achieved_gops / roof_gops (1.0 = on the roof).")
    quantized_in_onnx: bool = Field(description="Its compute nodes read DequantizeLinear outputs (QDQ around them).")


_QDQ = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear")


def _split_weights(layer: LayerRecord) -> list[float]:
    """How a layer's time is split over its ONNX nodes (see :meth:`ProfileResult.node_times_ms`)."""
    compute = [op not in _QDQ for op in layer.onnx_op_types]
    flops = layer.onnx_node_flops if len(layer.onnx_node_flops) == len(layer.onnx_nodes) else [0] * len(compute)
    if any(compute):
        if any(f > 0 for f, c in zip(flops, compute, strict=True) if c):
            return [float(f) if c else 0.0 for f, c in zip(flops, compute, strict=True)]
        return [1.0 if c else 0.0 for c in compute]
    return [1.0] * len(compute)


class OpTypeSummary(_Frozen):
    """Layers grouped by their primary ONNX op type (inserted ones by the runtime's type)."""

    op_type: str = Field(description="Primary ONNX op type, or '<runtime type> (inserted)'.")
    layers: int = Field(ge=0, description="Number of executed layers.")
    median_ms: float = Field(ge=0, description="Sum of their median times, ms.")
    share: float = Field(ge=0, le=1, description="Share of the sum of every layer's median.")
    flops: int | None = Field(description="Sum of their FLOPs; null without a graph.")
    achieved_gops: float | None = Field(description="flops / median_ms, GOP/s.")


class TraceEvent(_Frozen):
    """One layer of the median profiled inference, for a timeline."""

    kernel: str
    op_type: str
    start_us: float = Field(description="Offset from the inference's start, microseconds.")
    duration_us: float = Field(ge=0, description="Duration, microseconds.")


class ModelRef(_Frozen):
    path: str
    sha256: str
    size_bytes: int
    format: str


class ProfileSettings(_Frozen):
    """Settings of the profile call, echoed from the request the agent ran."""

    warmup: int = Field(description="Warm-up inferences before each phase (unprofiled, profiled).")
    iterations: int = Field(description="Inferences asked for in each phase.")
    profiled_iterations: int = Field(description="Profiled inferences the layer statistics come from.")
    threads: int
    batch: int
    seed: int
    shapes: dict[str, list[int]]
    runtime_options: dict[str, Any]


class ProfileResult(_Frozen):
    """Per-layer profile of one artifact on one runtime and device (``edgeopt profile``)."""

    schema_version: str = SCHEMA_VERSION
    model: ModelRef
    graph: str | None = Field(description="ONNX file the layers were joined with; null when none.")
    target: str
    runner: str
    runtime: dict[str, Any] = Field(description="name, version and the runtime's details (providers, device...).")
    settings: ProfileSettings
    profiled_ms: float = Field(description="Median wall time of one profiled inference, ms.")
    layers_ms: float = Field(description="Sum of every layer's median time, ms.")
    unprofiled_p50_ms: float = Field(description="Median latency without the profiler, same call, ms.")
    overhead: float = Field(description="profiled_ms / unprofiled_p50_ms: what the profiler itself costs.")
    layers: list[LayerRecord] = Field(description="Every layer the runtime reported, most time first.")
    per_op_type: list[OpTypeSummary] = Field(description="Executed layers by primary op type, most time first.")
    unmapped_onnx_nodes: list[str] = Field(description="ONNX nodes no layer covers (folded away at load).")
    roofline: Roofline | None = Field(description="Whole-model roofline on the target; null without one.")
    trace: list[TraceEvent] = Field(description="Layers of the median profiled inference (for --trace).")
    trace_source: str = Field(description="runtime: start times from the runtime; sequential: laid end to end.")
    notes: list[str]
    environment: dict[str, Any]
    agent_version: str
    edgeopt_version: str
    started_at: str
    deployment: DeploymentRef | None = Field(
        default=None, description="The deployment profiled (its settings applied); null for a plain model file.")
    valid: bool = Field(default=True, description="False when the device reported numbers that cannot be true "
                        "(edgeopt.profile.physics): those records are left out and invalid_reasons says why.")
    invalid_reasons: list[str] = Field(default_factory=list, description="Why the profile is invalid.")

    def top(self, n: int) -> list[LayerRecord]:
        """The ``n`` executed layers with the most time."""
        return [layer for layer in self.layers if layer.executed][:n]

    def by_onnx_node(self) -> dict[str, LayerRecord]:
        """ONNX node name -> the executed layer that covers it (the slowest one when several do)."""
        out: dict[str, LayerRecord] = {}
        for layer in self.layers:  # most time first: the first layer seen for a node wins
            if layer.executed:
                for name in layer.onnx_nodes:
                    out.setdefault(name, layer)
        return out

    def node_times_ms(self) -> dict[str, float]:
        """ONNX node name -> its part of the median time of the layer covering it.

        A fused layer's time is split over its nodes in proportion to their FLOPs (equally when none has any);
        QuantizeLinear/DequantizeLinear nodes get a part only in a layer that covers nothing else. A node two layers
        cover belongs to the slower one. Every executed layer's time lands on its nodes, so the values add up to the
        time of the layers that map to the graph (``origin == onnx``).
        """
        owners = self.by_onnx_node()
        out = dict.fromkeys(owners, 0.0)
        for layer in (x for x in self.layers if x.executed and x.onnx_nodes):
            mine = [(name, w) for name, w in zip(layer.onnx_nodes, _split_weights(layer), strict=True)
                    if owners.get(name) is layer]
            total = sum(w for _, w in mine)
            for name, weight in mine:
                out[name] += layer.median_ms * (weight / total if total > 0 else 1.0 / len(mine))
        return out


class LayerDelta(_Frozen):
    """The same ONNX nodes in two profiles: the layers of A and of B that cover them."""

    onnx_nodes: list[str] = Field(description="Compute nodes (Q/DQ left out) both sides' layers cover.")
    op_type: str = Field(description="Primary op type.")
    a_kernels: list[str]
    b_kernels: list[str]
    a_ms: float
    b_ms: float
    delta_ms: float = Field(description="b_ms - a_ms (positive: B is slower here).")
    ratio: float | None = Field(description="b_ms / a_ms; null when a_ms is 0.")
    a_precision: str
    b_precision: str
    a_impl: str
    b_impl: str
    precision_changed: bool
    b_quantized_in_onnx: bool = Field(description="B's nodes here have QDQ around them in B's ONNX.")
    b_float_kernel: bool = Field(description="Quantized in B's ONNX, yet B's runtime ran a float kernel.")
    a_quantized_in_onnx: bool = Field(default=False, description="A's nodes here have QDQ around them in A's ONNX.")
    a_float_kernel: bool = Field(default=False, description="Quantized in A's ONNX, yet A's runtime ran a float "
                                                            "kernel (A the INT8 model, B the FP32 one).")


class ExtraLayer(_Frozen):
    """A layer only one side has: a runtime-inserted reorder/convert, or a kernel of Q/DQ nodes."""

    side: str = Field(description="a or b.")
    kernel: str
    op_type: str
    kind: str = Field(description="inserted (by the runtime), quantize (Q/DQ nodes), or unmapped.")
    median_ms: float


class Headline(_Frozen):
    """A vs B without the profiler, measured in interleaved rounds (A, B, B, A...: one slow phase of the machine hits
    both), with the bootstrap interval of the paired per-round ratio. Two back-to-back measurements of the same pair
    gave 1.30x and 3.59x; this is the number to quote."""

    rounds: int = Field(ge=1, description="Interleaved rounds; each runs A and B once, the order rotated.")
    iterations_per_round: int = Field(ge=1, description="Timed inferences of each side per round (at least).")
    a_p50_ms: float = Field(description="A: median of its round medians, ms.")
    a_low_ms: float
    a_high_ms: float
    b_p50_ms: float = Field(description="B: median of its round medians, ms.")
    b_low_ms: float
    b_high_ms: float
    speedup: float = Field(description="A / B latency, median of the per-round ratios (above 1: B is faster).")
    speedup_low: float = Field(description="Lower end of the speedup's 95 % bootstrap interval.")
    speedup_high: float = Field(description="Upper end of the speedup's 95 % bootstrap interval.")
    paired: bool = Field(description="Per-round paired ratios (false: too few rounds, pooled samples).")
    within_noise: bool = Field(description="The interval covers 1: neither side is faster beyond noise.")


class ProfileComparison(_Frozen):
    """Layer-by-layer comparison of two profiles (``edgeopt profile A --vs B``)."""

    schema_version: str = SCHEMA_VERSION
    a: ProfileResult
    b: ProfileResult
    speedup: float = Field(description="A's latency / B's (above 1: B is faster): the headline's interleaved rounds "
                                       "when measured, else the two unprofiled p50s.")
    headline: Headline | None = Field(default=None, description="A vs B measured in interleaved rounds, with its "
                                      "interval; null when not measured (--rounds 0, or compare_profiles alone).")
    layers: list[LayerDelta] = Field(description="Matched layers, largest |delta_ms| first.")
    extra: list[ExtraLayer] = Field(description="Layers one side has and the other does not, most time first.")
    extra_a_ms: float
    extra_b_ms: float
    precision_changed: list[str] = Field(description="Primary nodes of the layers whose precision changed.")
    float_despite_qdq: list[str] = Field(description="B layers quantized in the ONNX that ran a float kernel.")
    float_despite_qdq_a: list[str] = Field(default_factory=list,
                                           description="A layers quantized in the ONNX that ran a float kernel.")
    explanation: list[str] = Field(description="What the comparison shows, in sentences.")
