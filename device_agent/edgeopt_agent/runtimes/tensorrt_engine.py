"""TensorRT engine bookkeeping: the on-device engine cache (paths, hashes, atomic writes) and the per-layer
precision summary from the engine inspector. Pure Python: importable and testable without TensorRT."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from typing import Any, Dict, List, Optional

_LAYER_LIST_MAX = 500


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def engine_cache_path(model_path: str, model_sha256: str, precision: str, batch: int, trt_version: str,
                      cache_dir: Optional[str] = None, dla_core: Optional[int] = None) -> str:
    """Where the engine built from ``model_path`` is cached: one file per model hash, precision flags, batch
    profile, DLA core and TensorRT version (an engine from another TensorRT version does not load)."""
    directory = cache_dir or os.path.dirname(os.path.abspath(model_path))
    stem = os.path.splitext(os.path.basename(model_path))[0]
    parts = [stem, model_sha256[:16], precision, "b%d" % batch]
    if dla_core is not None:
        parts.append("dla%d" % int(dla_core))
    parts.append("trt" + trt_version)
    return os.path.join(str(directory), ".".join(parts) + ".engine")


def layer_precision(fmt: str) -> str:
    """Precision named by an engine inspector "Format/Datatype" string ("Row major linear FP16 format", "Int8")."""
    text = fmt.lower()
    for key, name in (("int8", "int8"), ("fp8", "fp8"), ("int4", "int4"), ("bf16", "bf16"), ("fp16", "fp16"),
                      ("half", "fp16"), ("int32", "int32"), ("int64", "int64"), ("bool", "bool"),
                      ("fp32", "fp32"), ("float", "fp32")):
        if key in text:
            return name
    return "unknown"


def inspector_layer_precision(layer: Dict[str, Any]) -> str:
    """A layer's precision in the engine inspector's JSON: the first of its output, then input, tensors whose
    format names one ("unknown" when none does)."""
    for tensor in list(layer.get("Outputs") or []) + list(layer.get("Inputs") or []):
        if not isinstance(tensor, dict):
            continue
        # "Format/Datatype" up to TensorRT 10; 11 splits it into "Format" and "DataType"
        for key in ("Format/Datatype", "Format/DataType", "DataType", "Format"):
            precision = layer_precision(str(tensor.get(key, "")))
            if precision != "unknown":
                return precision
    return "unknown"


def summarize_layers(info: Dict[str, Any]) -> Dict[str, Any]:
    """Per-layer precision from the inspector's JSON (needs an engine built with DETAILED profiling verbosity)."""
    layers = info.get("Layers") or []
    if not layers or not isinstance(layers[0], dict):
        return {"available": False,
                "reason": "the engine was built without DETAILED profiling verbosity: only layer names exist",
                "layer_count": len(layers)}
    counts: Dict[str, int] = {}
    rows: List[Dict[str, str]] = []
    for layer in layers:
        precision = inspector_layer_precision(layer)
        counts[precision] = counts.get(precision, 0) + 1
        rows.append({"name": str(layer.get("Name", "?")), "type": str(layer.get("LayerType", "?")),
                     "precision": precision})
    out: Dict[str, Any] = {"available": True, "layer_count": len(rows), "counts": counts,
                           "layers": rows[:_LAYER_LIST_MAX]}
    if len(rows) > _LAYER_LIST_MAX:
        out["layers_truncated"] = True
    return out
