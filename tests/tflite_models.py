"""Tiny real ``.tflite`` models written with the ``flatbuffers`` builder alone (no TensorFlow, no converter).

The slot numbers below are the field order of TensorFlow Lite's ``schema.fbs`` (``Model``, ``SubGraph``,
``Tensor``, ``Operator``...); the interpreter that loads the file is the check that they are right.
``flatbuffers`` is always installed here: onnxruntime depends on it.
"""

from __future__ import annotations

from pathlib import Path

import flatbuffers
import numpy as np

# schema.fbs enums
_TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int8": 9}
_FULLY_CONNECTED = 9
_FC_OPTIONS = 8  # BuiltinOptions.FullyConnectedOptions
_FILE_ID = b"TFL3"


def _int_vector(b: flatbuffers.Builder, values: list[int]) -> int:
    return b.CreateNumpyVector(np.asarray(values, dtype=np.int32))


def _table(b: flatbuffers.Builder, fields: int, slots: list[tuple[str, int, object]]) -> int:
    """One table: ``slots`` are (kind, slot, value) with kind 'off', 'u32', 'i32', 'i8', 'u8', 'bool'."""
    b.StartObject(fields)
    for kind, slot, value in slots:
        if kind == "off":
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        elif kind == "u32":
            b.PrependUint32Slot(slot, value, 0)
        elif kind == "i32":
            b.PrependInt32Slot(slot, value, -12345)  # a default never used: the value is always written
        elif kind == "i8":
            b.PrependInt8Slot(slot, value, -123)
        elif kind == "u8":
            b.PrependUint8Slot(slot, value, 255)
        elif kind == "bool":
            b.PrependBoolSlot(slot, value, not value)
    return b.EndObject()


def _table_vector(b: flatbuffers.Builder, offsets: list[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _buffer(b: flatbuffers.Builder, data: bytes | None) -> int:
    if not data:
        return _table(b, 3, [])
    b.StartVector(1, len(data), 16)  # schema: data (force_align: 16)
    b.head = b.head - len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    vec = b.EndVector()
    return _table(b, 3, [("off", 0, vec)])


def _quant(b: flatbuffers.Builder, scale: float, zero_point: int) -> int:
    scales = b.CreateNumpyVector(np.asarray([scale], dtype=np.float32))
    zps = b.CreateNumpyVector(np.asarray([zero_point], dtype=np.int64))
    return _table(b, 7, [("off", 2, scales), ("off", 3, zps)])


def write_fully_connected(
    path: Path, *, n_in: int = 16, n_out: int = 4, dtype: str = "float32", dynamic_batch: bool = True, seed: int = 0
) -> Path:
    """``y = x @ W.T + b`` as one FULLY_CONNECTED op; input ``x`` [1, n_in] (batch -1 in the signature).

    ``dtype`` float32, int8 (symmetric int8 weights, int32 bias: the full-integer layout a Coral model has)
    or uint8 (the older asymmetric uint8 layout).
    """
    rng = np.random.default_rng(seed)
    b = flatbuffers.Builder(1024)
    quant = dtype != "float32"
    if dtype == "float32":
        weights = rng.standard_normal((n_out, n_in)).astype(np.float32)
        bias = rng.standard_normal(n_out).astype(np.float32)
        w_type, b_type = "float32", "float32"
        q_in = q_w = q_b = q_out = None
    else:
        info = np.iinfo(np.dtype(dtype))
        weights = rng.integers(-100 if dtype == "int8" else 28, 100 if dtype == "int8" else 228,
                               size=(n_out, n_in)).astype(dtype)
        bias = rng.integers(-500, 500, size=n_out).astype(np.int32)
        w_type, b_type = dtype, "int32"
        in_scale, w_scale = 0.05, 0.02
        in_zp = 0 if dtype == "int8" else 128
        q_in = (in_scale, in_zp)
        q_w = (w_scale, 0 if dtype == "int8" else 128)
        q_b = (in_scale * w_scale, 0)
        q_out = (0.25, (info.min + info.max + 1) // 2)

    names = [b.CreateString(s) for s in ("x", "W", "b", "y")]
    shapes = [[1, n_in], [n_out, n_in], [n_out], [1, n_out]]
    types = [dtype, w_type, b_type, dtype]
    buffers = [0, 1, 2, 0]
    quants = [q_in, q_w, q_b, q_out]
    tensors = []
    for i in range(4):
        shape = _int_vector(b, shapes[i])
        slots = [("off", 0, shape), ("i8", 1, _TYPES[types[i]]), ("u32", 2, buffers[i]), ("off", 3, names[i])]
        if quant and quants[i] is not None:
            scale, zp = quants[i]  # type: ignore[misc]
            slots.append(("off", 4, _quant(b, scale, zp)))
        if dynamic_batch and i in (0, 3):
            slots.append(("off", 7, _int_vector(b, [-1] + shapes[i][1:])))
        tensors.append(_table(b, 11, slots))

    fc_options = _table(b, 6, [("i8", 0, 0)])  # fused activation NONE
    op = _table(b, 14, [
        ("u32", 0, 0), ("off", 1, _int_vector(b, [0, 1, 2])), ("off", 2, _int_vector(b, [3])),
        ("u8", 3, _FC_OPTIONS), ("off", 4, fc_options),
    ])
    subgraph = _table(b, 6, [
        ("off", 0, _table_vector(b, tensors)), ("off", 1, _int_vector(b, [0])), ("off", 2, _int_vector(b, [3])),
        ("off", 3, _table_vector(b, [op])), ("off", 4, b.CreateString("main")),
    ])
    opcode = _table(b, 4, [("i8", 0, _FULLY_CONNECTED), ("i32", 2, 1), ("i32", 3, _FULLY_CONNECTED)])
    buffer_offsets = [_buffer(b, None), _buffer(b, weights.tobytes()), _buffer(b, bias.tobytes())]
    model = _table(b, 10, [
        ("u32", 0, 3), ("off", 1, _table_vector(b, [opcode])), ("off", 2, _table_vector(b, [subgraph])),
        ("off", 3, b.CreateString("edgeopt test model")), ("off", 4, _table_vector(b, buffer_offsets)),
    ])
    b.Finish(model, file_identifier=_FILE_ID)
    path = Path(path)
    path.write_bytes(bytes(b.Output()))
    return path


def reference_fully_connected(path_seed: int, x: np.ndarray, n_in: int = 16, n_out: int = 4) -> np.ndarray:
    """The float model's expected output for input ``x`` (same seeded weights as :func:`write_fully_connected`)."""
    rng = np.random.default_rng(path_seed)
    weights = rng.standard_normal((n_out, n_in)).astype(np.float32)
    bias = rng.standard_normal(n_out).astype(np.float32)
    return x @ weights.T + bias
