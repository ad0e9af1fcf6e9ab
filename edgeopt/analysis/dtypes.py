"""ONNX element types as the numpy names users know, and their storage size in bits."""

from __future__ import annotations

import onnx

_SUB_BYTE_BITS = {
    "INT4": 4,
    "UINT4": 4,
    "FLOAT4E2M1": 4,
    "INT2": 2,
    "UINT2": 2,
    "FLOAT6E2M3": 6,
    "FLOAT6E3M2": 6,
}
_NO_SIZE = {"UNDEFINED", "STRING"}


def _onnx_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return "UNDEFINED"


def dtype_name(elem_type: int) -> str:
    """Numpy-style name of an ONNX element type (``float32``, ``bfloat16``...); ``undefined`` if unknown."""
    name = _onnx_name(elem_type)
    if name == "UNDEFINED":
        return "undefined"
    if name == "STRING":
        return "string"
    try:
        return str(onnx.helper.tensor_dtype_to_np_dtype(elem_type).name)
    except (KeyError, ValueError, TypeError):
        return name.lower()


def bits_per_element(elem_type: int) -> int:
    """Storage bits of one element; 0 for strings and unknown types, whose size the type does not tell."""
    name = _onnx_name(elem_type)
    if name in _NO_SIZE:
        return 0
    if name in _SUB_BYTE_BITS:
        return _SUB_BYTE_BITS[name]
    try:
        return int(onnx.helper.tensor_dtype_to_np_dtype(elem_type).itemsize) * 8
    except (KeyError, ValueError, TypeError):
        return 0


def tensor_bytes(numel: int, elem_type: int) -> int:
    """Bytes taken by ``numel`` packed elements of ``elem_type`` (rounded up to whole bytes)."""
    return (numel * bits_per_element(elem_type) + 7) // 8
