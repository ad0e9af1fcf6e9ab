"""The declared inputs of an ``.onnx`` file, read from its protobuf wire format without the ``onnx`` package.

The agent needs a model's symbolic dim names before ONNX Runtime builds a session (free-dimension overrides are
session options), and the agent carries no ``onnx`` dependency. Only ``ModelProto.graph.input`` is decoded;
everything else (nodes, initializers, external data) is skipped by seeking past it, so a large model costs a
few reads. Field numbers are those of ``onnx.proto`` (stable since IR version 1).

Python 3.8, standard library only; never imports edgeopt.
"""

from __future__ import annotations

import io
from typing import BinaryIO, Iterator, List, Optional, Tuple, Union

Dim = Union[int, str, None]  # int: fixed; str: the dim_param symbol; None: unnamed dynamic dim (or -1)

_MODEL_GRAPH = 7
_GRAPH_INPUT = 11
_VALUE_NAME, _VALUE_TYPE = 1, 2
_TYPE_TENSOR = 1
_TENSOR_SHAPE = 2
_SHAPE_DIM = 1
_DIM_VALUE, _DIM_PARAM = 1, 2


class SignatureError(ValueError):
    """The file is not an ONNX protobuf this reader understands."""


def _varint(stream: BinaryIO) -> Optional[int]:
    shift = result = 0
    while True:
        byte = stream.read(1)
        if not byte:
            if shift:
                raise SignatureError("truncated varint")
            return None
        result |= (byte[0] & 0x7F) << shift
        if byte[0] < 0x80:
            return result
        shift += 7
        if shift > 63:
            raise SignatureError("varint too long")


def _fields(stream: BinaryIO, end: int) -> Iterator[Tuple[int, int, int]]:
    """``(field number, wire type, value)`` up to offset ``end``; for length-delimited fields the value is the
    length and the stream sits at the payload (the caller reads it or leaves it: the next step seeks past it)."""
    while stream.tell() < end:
        key = _varint(stream)
        if key is None:
            return
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, wire, _varint(stream) or 0
        elif wire == 1:
            stream.seek(8, io.SEEK_CUR)
        elif wire == 5:
            stream.seek(4, io.SEEK_CUR)
        elif wire == 2:
            length = _varint(stream) or 0
            start = stream.tell()
            yield number, wire, length
            stream.seek(start + length)
        else:
            raise SignatureError("unsupported wire type %d" % wire)


def _sub(stream: BinaryIO, length: int) -> BinaryIO:
    return io.BytesIO(stream.read(length))


def _dim(stream: BinaryIO, end: int) -> Dim:
    dim = None  # type: Dim
    for number, wire, value in _fields(stream, end):
        if number == _DIM_VALUE and wire == 0:
            signed = value - (1 << 64) if value >= 1 << 63 else value
            dim = signed if signed >= 0 else None  # Paddle writes -1 for a dynamic dim
        elif number == _DIM_PARAM and wire == 2:
            dim = stream.read(value).decode("utf-8", "replace") or None
    return dim


def _shape(stream: BinaryIO, end: int) -> Optional[List[Dim]]:
    """Dims of a ``TypeProto`` that holds a tensor with a shape; None for unknown rank or a non-tensor."""
    for number, wire, value in _fields(stream, end):
        if number != _TYPE_TENSOR or wire != 2:
            continue
        tensor = _sub(stream, value)
        for t_number, t_wire, t_value in _fields(tensor, value):
            if t_number != _TENSOR_SHAPE or t_wire != 2:
                continue
            shape = _sub(tensor, t_value)
            dims = []  # type: List[Dim]
            for s_number, s_wire, s_value in _fields(shape, t_value):
                if s_number == _SHAPE_DIM and s_wire == 2:
                    dims.append(_dim(_sub(shape, s_value), s_value))
            return dims
    return None


def _value_info(data: BinaryIO, end: int) -> Tuple[str, Optional[List[Dim]]]:
    name, dims = "", None  # type: Tuple[str, Optional[List[Dim]]]
    for number, wire, value in _fields(data, end):
        if number == _VALUE_NAME and wire == 2:
            name = data.read(value).decode("utf-8", "replace")
        elif number == _VALUE_TYPE and wire == 2:
            dims = _shape(_sub(data, value), value)
    return name, dims


def graph_inputs(path: str) -> List[Tuple[str, Optional[List[Dim]]]]:
    """``[(name, dims)]`` of every ``graph.input`` in file order (older exports list initializers too; their
    dims are all fixed). ``dims`` is None for an input of unknown rank.

    Raises:
        SignatureError: not a readable ONNX protobuf. OSError: the file cannot be read.
    """
    out = []  # type: List[Tuple[str, Optional[List[Dim]]]]
    with open(path, "rb") as f:
        size = f.seek(0, io.SEEK_END)
        f.seek(0)
        for number, wire, value in _fields(f, size):
            if number != _MODEL_GRAPH or wire != 2:
                continue
            graph_end = f.tell() + value
            for g_number, g_wire, g_value in _fields(f, graph_end):
                if g_number == _GRAPH_INPUT and g_wire == 2:
                    out.append(_value_info(_sub(f, g_value), g_value))
            break
    return out
