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
    params: int = Field(ge=0, description="Elements of all stored tensors (initializers, Constant values).")
    weight_bytes: int = Field(ge=0, description="Bytes of all stored tensors.")
    activation_bytes: int = Field(ge=0, description="Bytes of inputs and node outputs with static shapes.")
    macs: int = Field(ge=0, description="Multiply-accumulates per inference.")
    flops: int = Field(ge=0, description="Operations per inference (see docs/inspect.md for conventions).")
    arithmetic_intensity: float = Field(ge=0, description="flops / (weight_bytes + activation_bytes), ops/B.")
    ops: dict[str, int] = Field(description="Op type -> node count in the main graph, most frequent first.")
    per_op: dict[str, OpStats] = Field(description="Op type -> count, MACs, FLOPs; most FLOPs first.")
    uncounted_ops: list[str] = Field(description="Op types whose work is not counted (counted as 0).")
    unresolved_nodes: list[str] = Field(description="Nodes counted as 0 because their shapes are not static.")
    subgraph_nodes: int = Field(ge=0, description="Nodes inside If/Loop/Scan bodies, not counted.")
    notes: list[str] = Field(description="Caveats of this analysis, each with what to do about it.")
    roofline: Roofline | None = Field(description="Roofline bound on the target; null without a target.")
