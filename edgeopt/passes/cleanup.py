"""``cleanup``: make an exported model easy to quantize and fast to load, without changing what it computes.

Steps, each optional: ``Constant`` weight nodes -> initializers (Paddle exports store every weight as a
``Constant`` node, which quantizers skip: the "quantized" file even grew); stale ``value_info`` cleared (it
breaks onnxruntime quantization); opset upgrade to ``min_opset`` with ``onnx.version_converter`` (per-channel QDQ
needs opset >= 13: on opset 11/12 exports it failed with INVALID_GRAPH until upgraded); onnxruntime's offline
*basic* graph optimization (constant folding, redundant-node removal, Conv+BN/Add/Mul fusion: standard ONNX ops
only, so the result stays portable); ONNX shape inference last.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from pydantic import Field

from ..analysis.walk import iter_graphs
from ..errors import first_line
from .base import Artifact, Pass, PassConfig, PassContext, PassError, PassOutput
from .onnx_io import SINGLE_FILE_LIMIT_BYTES, check, load, opset, save

MAX_OPSET = onnx.defs.onnx_opset_version()
GROWTH_LIMIT = 1.02  # keep the unoptimized graph when optimization makes the file this much bigger...
GROWTH_MIN_BYTES = 16 * 1024  # ...and at least this many bytes (a fused bias on a toy model does not count)


class GraphOptimization(str, Enum):
    DISABLED = "disabled"
    BASIC = "basic"


class CleanupAdvanced(PassConfig):
    graph_optimization: GraphOptimization = Field(
        default=GraphOptimization.BASIC,
        description="onnxruntime offline optimization level: 'basic' (portable ONNX ops only) or 'disabled'. "
        "Higher levels write onnxruntime-only fused ops and are not offered.",
    )
    check_model: bool = Field(default=True, description="Run onnx.checker on the result.")


class CleanupConfig(PassConfig):
    constants_to_initializers: bool = Field(
        default=True, description="Turn Constant nodes holding tensors into initializers."
    )
    clear_value_info: bool = Field(default=True, description="Drop stored intermediate shapes (value_info).")
    min_opset: int | None = Field(
        default=None,
        ge=7,
        le=MAX_OPSET,
        description="Upgrade the default-domain opset to at least this version (None: keep). Per-channel INT8 "
        "needs >= 13; the int8 recipes use 17.",
    )
    fold_constants: bool = Field(default=True, description="Run onnxruntime's offline basic graph optimization.")
    shape_inference: bool = Field(default=True, description="Run ONNX shape inference on the result.")
    advanced: CleanupAdvanced = Field(default_factory=CleanupAdvanced, description="Rarely changed options.")


class CleanupPass(Pass[CleanupConfig]):
    name = "cleanup"
    summary = "constants to initializers, value_info cleared, opset upgrade, ORT basic folding, shape inference"
    config_class = CleanupConfig

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        cfg = self.config
        model = load(source)
        report: dict[str, object] = {"opset_before": opset(model)}
        if cfg.constants_to_initializers:
            report["constants_to_initializers"] = constants_to_initializers(model)
        if cfg.clear_value_info:
            report["value_info_cleared"] = len(model.graph.value_info)
            del model.graph.value_info[:]
        if cfg.min_opset is not None and opset(model) < cfg.min_opset:
            model = upgrade_opset(model, cfg.min_opset)
        report["opset_after"] = opset(model)
        nodes_before = len(model.graph.node)
        staged = save(model, ctx.work_dir / f"{self.name}.staged.onnx")
        if cfg.fold_constants and cfg.advanced.graph_optimization is GraphOptimization.BASIC:
            optimized_path = ort_basic_optimize(staged, ctx.work_dir / f"{self.name}.ort.onnx", model.ByteSize())
            optimized = onnx.load_model(str(optimized_path))
            growth = optimized.ByteSize() / max(model.ByteSize(), 1)
            if growth > GROWTH_LIMIT and optimized.ByteSize() - model.ByteSize() > GROWTH_MIN_BYTES:
                # seen on silero-vad: onnxruntime copies folded constants into each If branch (+39%)
                report["graph_optimization"] = f"skipped: it grew the model {growth:.2f}x"
            else:
                model = optimized
                drop_unused_opsets(model)
                report["graph_optimization"] = "basic"
        if cfg.shape_inference:
            model = _infer_shapes(model)
        report["nodes_before"] = nodes_before
        report["nodes_after"] = len(model.graph.node)
        save(model, ctx.output_path)
        if cfg.advanced.check_model:
            check(ctx.output_path, self.name)
        return PassOutput(path=ctx.output_path, precision=source.precision, report=report)


def constants_to_initializers(model: onnx.ModelProto) -> int:
    """Move the main graph's tensor-valued ``Constant`` nodes into initializers, in place; returns the count."""
    graph = model.graph
    keep: list[onnx.NodeProto] = []
    moved = 0
    graph_outputs = {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and node.output[0] not in graph_outputs:
            value = _constant_value(node)
            if value is not None:
                value.name = node.output[0]
                graph.initializer.append(value)
                moved += 1
                continue
        keep.append(node)
    del graph.node[:]
    graph.node.extend(keep)
    if model.ir_version < 4:
        model.ir_version = 4  # initializers no longer need to be graph inputs from IR 4 on
    return moved


def _constant_value(node: onnx.NodeProto) -> onnx.TensorProto | None:
    for attr in node.attribute:
        if attr.name == "value":
            tensor = onnx.TensorProto()
            tensor.CopyFrom(attr.t)
            return tensor
        if attr.name in ("value_float", "value_int", "value_floats", "value_ints"):
            raw = helper.get_attribute_value(attr)
            dtype = np.float32 if "float" in attr.name else np.int64
            return numpy_helper.from_array(np.asarray(raw, dtype=dtype))
    return None  # sparse_value / string values stay as nodes


def drop_unused_opsets(model: onnx.ModelProto) -> None:
    """Remove opset imports of domains no node uses (onnxruntime's saved model lists all of its own)."""
    used = {n.domain for g in iter_graphs(model.graph) for n in g.node}
    used |= {f.domain for f in model.functions} | {n.domain for f in model.functions for n in f.node}
    keep = [o for o in model.opset_import if o.domain in ("", "ai.onnx") or o.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(keep)


def upgrade_opset(model: onnx.ModelProto, version: int) -> onnx.ModelProto:
    """Convert ``model`` to default-domain opset ``version`` with onnx.version_converter.

    Raises:
        PassError: the converter failed (an op it cannot convert), naming both versions.
    """
    before = opset(model)
    try:
        converted = onnx.version_converter.convert_version(model, version)
    except Exception as exc:  # the converter raises RuntimeError/ValueError/ConvertError for unsupported ops
        first = first_line(exc, limit=None)
        raise PassError(
            f"cleanup: opset upgrade {before} -> {version} failed ({first}); set min_opset to a "
            f"lower version or null in the recipe's cleanup step"
        ) from exc
    return converted


def ort_basic_optimize(model_path: Path, out_path: Path, size_bytes: int) -> Path:
    """onnxruntime offline optimization at the basic level, saved with ``optimized_model_filepath``.

    Raises:
        PassError: onnxruntime rejects the model (the message names the node).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(out_path)
    if size_bytes >= SINGLE_FILE_LIMIT_BYTES:
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", f"{out_path.name}.data"
        )
    try:
        ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph/NotImplemented types
        first = first_line(exc, limit=None)
        raise PassError(
            f"cleanup: onnxruntime cannot load the model for optimization ({first}); set "
            "fold_constants: false in the cleanup step, or fix the model"
        ) from exc
    return out_path


def _infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    if model.ByteSize() >= SINGLE_FILE_LIMIT_BYTES:
        return model  # in-memory shape inference cannot serialize >2 GiB; the model stays valid without it
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # shape inference is a convenience: a model it cannot infer is still a valid model
        return model
