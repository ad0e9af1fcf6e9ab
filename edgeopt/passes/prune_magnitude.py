"""``prune_magnitude``: unstructured magnitude pruning of ONNX weight initializers to a target sparsity.

The smallest-magnitude weights of each Conv/MatMul/Gemm weight tensor are set to zero (per layer, or with one
threshold across layers). Dense runtimes do not run zeros faster: what shrinks is the *compressed* file (zip,
gzip, an OTA update), which the report measures, with the real sparsity per layer and overall. Without
fine-tuning accuracy drops as sparsity grows: check the fidelity table.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from pydantic import Field

from .base import Artifact, Pass, PassConfig, PassContext, PassOutput
from .graph_edit import weight_inputs
from .onnx_io import check, load, save


class PruneScope(str, Enum):
    PER_LAYER = "per_layer"
    GLOBAL = "global"


class PruneMagnitudeAdvanced(PassConfig):
    gzip_level: int = Field(default=6, ge=1, le=9, description="gzip level of the compressed-size measurement.")
    skip_depthwise: bool = Field(default=True, description="Leave depthwise Conv weights (group == channels) dense.")


class PruneMagnitudeConfig(PassConfig):
    sparsity_ratio: float = Field(default=0.5, gt=0, lt=1, description="Fraction of each weight tensor set to zero.")
    scope: PruneScope = Field(default=PruneScope.PER_LAYER, description="per_layer or one global threshold.")
    op_types: list[str] = Field(
        default_factory=lambda: ["Conv", "MatMul", "Gemm"], description="Ops whose weight (input 1) is pruned."
    )
    min_weight_elements: int = Field(
        default=256, ge=1, description="Smaller weight tensors (first convs, tiny heads) stay dense."
    )
    nodes_to_exclude: list[str] = Field(default_factory=list, description="Node names whose weights stay dense.")
    advanced: PruneMagnitudeAdvanced = Field(default_factory=PruneMagnitudeAdvanced, description="Rare options.")


class PruneMagnitudePass(Pass[PruneMagnitudeConfig]):
    name = "prune_magnitude"
    summary = "unstructured magnitude pruning to a target sparsity; reports real sparsity and compressed size"
    config_class = PruneMagnitudeConfig

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        cfg = self.config
        model = load(source)
        inits = {t.name: t for t in model.graph.initializer}
        chosen: dict[str, str] = {}
        for node, name in weight_inputs(model.graph, cfg.op_types):
            tensor = inits[name]
            elements = int(np.prod(tensor.dims))
            if node.name in cfg.nodes_to_exclude or elements < cfg.min_weight_elements or name in chosen:
                continue
            if cfg.advanced.skip_depthwise and _is_depthwise(node, tensor.dims):
                continue
            if tensor.data_type != 1:  # only float32 weights (quantized or fp16 weights: prune before converting)
                continue
            chosen[name] = node.name or name
        warnings = []
        if not chosen:
            warnings.append(
                "prune_magnitude found no float weight to prune (check op_types and min_weight_elements; "
                "Paddle Constant weights need the cleanup pass first)"
            )
            ctx.reporter.warn(warnings[-1])
        arrays = {name: numpy_helper.to_array(inits[name]).astype(np.float32) for name in chosen}
        threshold = _global_threshold(arrays, cfg.sparsity_ratio) if cfg.scope is PruneScope.GLOBAL else None
        layers: list[dict[str, Any]] = []
        for i, (name, w) in enumerate(arrays.items()):
            limit = threshold if threshold is not None else _threshold(w, cfg.sparsity_ratio)
            pruned = np.where(np.abs(w) <= limit, np.float32(0), w).astype(np.float32)
            inits[name].CopyFrom(numpy_helper.from_array(pruned, name))
            layers.append(
                {
                    "node": chosen[name],
                    "weight": name,
                    "elements": int(w.size),
                    "sparsity_before": _sparsity(w),
                    "sparsity_after": _sparsity(pruned),
                }
            )
            ctx.reporter.progress("pruning weights", i + 1, len(arrays))
        save(model, ctx.output_path)
        check(ctx.output_path, self.name)
        total = sum(layer["elements"] for layer in layers)
        zeros = sum(layer["elements"] * layer["sparsity_after"] for layer in layers)
        all_weights = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == 1)
        report = {
            "layers_pruned": len(layers),
            "sparsity_pruned_layers": round(zeros / total, 4) if total else 0.0,
            "sparsity_all_float_weights": round(zeros / all_weights, 4) if all_weights else 0.0,
            "size_bytes_before": Path(source.path).stat().st_size,
            "gzip_bytes_before": gzip_size(Path(source.path), cfg.advanced.gzip_level),
            "gzip_bytes_after": gzip_size(ctx.output_path, cfg.advanced.gzip_level),
            "per_layer": layers,
        }
        return PassOutput(path=ctx.output_path, precision=source.precision, report=report, warnings=warnings)


def gzip_size(path: Path, level: int = 6) -> int:
    """Bytes of ``path`` gzip-compressed at ``level``: what a zip download or OTA update would carry."""
    return len(gzip.compress(path.read_bytes(), compresslevel=level, mtime=0))


def _threshold(w: np.ndarray, ratio: float) -> float:
    k = int(round(w.size * ratio))
    if k <= 0:
        return -1.0
    return float(np.partition(np.abs(w).ravel(), k - 1)[k - 1])


def _global_threshold(arrays: dict[str, np.ndarray], ratio: float) -> float:
    if not arrays:
        return -1.0
    return _threshold(np.concatenate([np.abs(w).ravel() for w in arrays.values()]), ratio)


def _sparsity(w: np.ndarray) -> float:
    return round(float(np.count_nonzero(w == 0)) / max(w.size, 1), 4)


def _is_depthwise(node: onnx.NodeProto, dims: Sequence[int]) -> bool:
    if node.op_type != "Conv":
        return False
    group = next((helper.get_attribute_value(a) for a in node.attribute if a.name == "group"), 1)
    return int(group) > 1 and len(dims) > 1 and int(dims[1]) == 1
