"""The typed result of ``edgeopt inspect``: what a model is, how much work it does, and what bounds it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..enums import Precision
from .roofline import Roofline

ShapeDims = list[int | str]  # an int per fixed dim, the symbol (or "?") per dynamic dim


class TensorSpec(BaseModel):
    """One graph input or output as the model declares it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Tensor name.")
    dtype: str = Field(description="Element type, numpy-style: float32, float16, int64...")
    shape: ShapeDims | None = Field(description="Declared dims; a string is symbolic, '?' unknown; null: unknown rank.")


class SymbolicDim(BaseModel):
    """One input dim the model leaves open, and the value the counts used for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: str = Field(description="Input name.")
    axis: int = Field(ge=0, description="Dim index in the input's shape.")
    symbol: str | None = Field(description="The dim's symbol (dim_param), e.g. 'batch' or 'p2o.DynamicDimension.1'; "
                               "null for an unnamed dim or -1.")
    value: int | None = Field(description="Size the counts used; null: left open (the counts are then partial).")
    source: str | None = Field(description="Where the size came from: --shape, --batch, a target's "
                               "default_input_shape, the model's metadata; null when left open.")


class OpStats(BaseModel):
    """Nodes of one op type and the work they do together."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int = Field(ge=0, description="Number of nodes of this op type in the main graph.")
    macs: int = Field(ge=0, description="Multiply-accumulates of those nodes.")
    flops: int = Field(ge=0, description="Floating-point (or integer) operations of those nodes.")


class InspectResult(BaseModel):
    """Static analysis of one ONNX model; counting conventions are in ``docs/inspect.md``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="Model file as given.")
    sha256: str = Field(description="SHA-256 of the model file (external data files not included).")
    size_bytes: int = Field(ge=0, description="Model file plus its distinct external data files, in bytes.")
    ir_version: int = Field(description="ONNX IR version.")
    opset: int | None = Field(description="Opset of the default (ai.onnx) domain; null if none is imported.")
    producer: str = Field(description="Producer name and version, e.g. 'pytorch 2.3.0'; empty if unrecorded.")
    precision: Precision = Field(description="Precision the model likely runs in, guessed from ops and weights.")
    inputs: list[TensorSpec] = Field(description="Real graph inputs (initializers excluded), as declared.")
    outputs: list[TensorSpec] = Field(description="Graph outputs, as declared.")
    batch: int = Field(ge=1, description="Value given to symbolic first input dims.")
    input_shapes: dict[str, ShapeDims | None] = Field(description="Input dims the counts were computed with.")
    symbolic_dims: list[SymbolicDim] = Field(default_factory=list,
        description="Every input dim the model leaves open, with the value used and its source.")
    shape_hint: str | None = Field(default=None,
        description="The --shape to pass when dims are left open, e.g. '--shape x=1x3x640x640'.")
    params: int = Field(ge=0, description="Elements of all stored tensors (initializers, Constant values).")
    weight_bytes: int = Field(ge=0, description="Bytes of all stored tensors.")
    activation_bytes: int = Field(ge=0, description="Bytes of inputs and node outputs with static shapes.")
    macs: int | None = Field(ge=0, description="Multiply-accumulates per inference at counted_at; null when some "
                             "node that may carry MACs has unknown shapes (partial_macs has what was counted); "
                             "unresolved zero-MAC nodes (Add, Sigmoid...) leave it complete and only flops partial.")
    flops: int | None = Field(ge=0, description="Operations per inference (see docs/inspect.md for conventions); "
                              "null when the count is partial.")
    partial_macs: int | None = Field(default=None, ge=0,
        description="MACs of the nodes that could be counted, when macs is null (a lower bound).")
    partial_flops: int | None = Field(default=None, ge=0, description="FLOPs counted so far, when flops is null.")
    arithmetic_intensity: float | None = Field(ge=0, description="flops / (weight_bytes + activation_bytes), ops/B; "
                                               "null when flops is.")
    ops: dict[str, int] = Field(description="Op type -> node count in the main graph, most frequent first.")
    per_op: dict[str, OpStats] = Field(description="Op type -> count, MACs, FLOPs; most FLOPs first.")
    uncounted_ops: list[str] = Field(description="Op types whose work is not counted (counted as 0).")
    unresolved_nodes: list[str] = Field(description="Nodes counted as 0 because their shapes are not static.")
    subgraph_nodes: int = Field(ge=0, description="Nodes inside If/Loop/Scan bodies, not counted.")
    notes: list[str] = Field(description="Caveats of this analysis, each with what to do about it.")
    roofline: Roofline | None = Field(description="Roofline bound on the target; null without a target.")
