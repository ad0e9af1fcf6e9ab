"""The one schema of a per-layer event, whatever runtime measured it, and the precision names it uses.

An event is a plain dict (JSON as it is) with these keys:

- ``name``: the runtime's name of the executed layer (ORT's node name, often fused; OpenVINO's execution-graph
  node; TensorRT's layer).
- ``op_type``: the runtime's type of that layer (``QLinearConv``, ``Convolution``, ``Reorder``...).
- ``impl``: the implementation the runtime chose: OpenVINO's ``exec_type`` (``jit_avx2_I8``, ``ref_any``), ORT's
  kernel (op type and domain), TensorRT's tactic.
- ``provider``: where it ran: ORT execution provider, OpenVINO device, ``GPU``/``DLA`` for TensorRT.
- ``precision``: the precision it ran in, one of :data:`PRECISIONS`.
- ``original_names``: names the runtime gives for the source-graph nodes it covers (OpenVINO's
  ``originalLayersNames``; for ORT and TensorRT the layer name itself, which the host resolves).
- ``node_index``: ORT's index of the node in the source graph (None elsewhere, or for nodes ORT created).
- ``executed``: False for layers the runtime lists but did not run (fused, in-place).
- ``duration_us``: time of this layer in this inference, microseconds.
- ``start_us``: start offset from the inference's start, microseconds; None when the runtime gives no start times.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int8", "int4", "int32", "int64", "bool", "unknown")

_ALIASES = (
    ("bfloat16", "bf16"), ("bf16", "bf16"), ("float16", "fp16"), ("fp16", "fp16"), ("f16", "fp16"), ("half", "fp16"),
    ("fp8", "fp8"), ("f8", "fp8"), ("float8", "fp8"), ("int4", "int4"), ("uint4", "int4"), ("u4", "int4"),
    ("i4", "int4"), ("int8", "int8"), ("uint8", "int8"), ("u8", "int8"), ("i8", "int8"), ("int32", "int32"),
    ("i32", "int32"), ("int64", "int64"), ("i64", "int64"), ("boolean", "bool"), ("bool", "bool"),
    ("float", "fp32"), ("fp32", "fp32"), ("f32", "fp32"), ("double", "fp32"),
)


def precision_name(raw: Any) -> str:
    """One of :data:`PRECISIONS` for a runtime's type string (``u8`` -> int8, ``tensor(float)`` -> fp32)."""
    text = str(raw or "").strip().lower()
    if text.startswith("tensor(") and text.endswith(")"):
        text = text[7:-1]
    for key, name in _ALIASES:
        if text == key:
            return name
    for key, name in _ALIASES:  # suffixes of kernel names: brgconv_avx512_I8, jit_avx2_f32
        if len(key) >= 2 and text.endswith("_" + key):
            return name
    return "unknown"


def layer_event(name: str, *, op_type: str, impl: str, provider: str, precision: str, duration_us: float,
                original_names: Optional[List[str]] = None, node_index: Optional[int] = None,
                executed: bool = True, start_us: Optional[float] = None) -> Dict[str, Any]:
    """An event dict with every key of the schema (module docstring)."""
    return {"name": name, "op_type": op_type, "impl": impl, "provider": provider,
            "precision": precision if precision in PRECISIONS else "unknown",
            "original_names": list(original_names if original_names is not None else [name]),
            "node_index": node_index, "executed": bool(executed), "duration_us": float(duration_us),
            "start_us": None if start_us is None else float(start_us)}
