"""Load an ONNX model file, turning every way it can be wrong into a one-line :class:`ModelLoadError`.

Loading happens in two steps so that a crafted file cannot make us read arbitrary files: the protobuf is
parsed with ``load_external_data=False``, every external-data location is checked to stay inside the model's
directory (:mod:`.external_data`), and only then is the data read.
"""

from __future__ import annotations

from pathlib import Path

import onnx

from ..errors import ModelLoadError, first_line
from .external_data import external_files, load_external_data

# Leading bytes of formats people often pass by mistake, with the fix for each.
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"PK\x03\x04", "it is a zip archive, e.g. a PyTorch checkpoint: export it with torch.onnx.export"),
    (4, b"TFL3", "it is a TFLite model: convert it with tf2onnx"),
    (0, b"GGUF", "it is a GGUF file: export the original model to ONNX"),
    (0, b"\x89HDF", "it is a Keras HDF5 file: convert it with tf2onnx"),
)


# Bytes per element of the fixed-size ONNX tensor types (strings and sub-byte types are not checked).
_ITEMSIZE = {t: onnx.helper.tensor_dtype_to_np_dtype(t).itemsize for t in (
    onnx.TensorProto.FLOAT, onnx.TensorProto.UINT8, onnx.TensorProto.INT8, onnx.TensorProto.UINT16,
    onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64, onnx.TensorProto.BOOL,
    onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64)}


def _looks_like_onnx(head: bytes) -> bool:
    """An ONNX file starts with field 1 (ir_version) as a small varint: byte 0x08, then 1..20."""
    return len(head) >= 2 and head[0] == 0x08 and 1 <= head[1] <= 20


def _parse(path: Path) -> onnx.ModelProto:
    try:
        return onnx.load_model(str(path), load_external_data=False)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path} ({exc.strerror}): check it is readable") from exc
    # protobuf and onnx raise several unrelated types for bad bytes; any of them means "not a model".
    except Exception as exc:
        reason = first_line(exc, limit=None)
        with open(path, "rb") as fh:
            head = fh.read(16)
        if _looks_like_onnx(head):
            raise ModelLoadError(
                f"{path} is a truncated or corrupt ONNX file ({reason}): re-export it or copy it again"
            ) from exc
        fix = next(
            (hint for offset, magic, hint in _MAGIC if head[offset : offset + len(magic)] == magic),
            "export it to .onnx first",
        )
        raise ModelLoadError(f"{path} is not an ONNX model ({reason}): {fix}") from exc


def _check_structure(model: onnx.ModelProto, path: Path) -> None:
    """Catch files that parse as protobuf by chance (random bytes, a model cut at a field boundary)."""
    missing = [
        name
        for name, ok in (
            ("ir_version", model.ir_version > 0),
            ("graph", model.HasField("graph")),
            ("opset_import", len(model.opset_import) > 0),
            ("graph outputs", len(model.graph.output) > 0),
        )
        if not ok
    ]
    if missing:
        raise ModelLoadError(
            f"{path} is not a complete ONNX model (no {', '.join(missing)}): "
            "the file is truncated or not ONNX; re-export it to .onnx"
        )
    _check_initializers(model, path)


def _check_initializers(model: onnx.ModelProto, path: Path) -> None:
    """A weight whose dims are negative, or whose raw bytes do not match its dims, is a corrupt file."""
    for tensor in model.graph.initializer:
        if any(d < 0 for d in tensor.dims):
            raise ModelLoadError(f"{path}: weight '{tensor.name}' declares negative dims {list(tensor.dims)}: the file "
                                 "is corrupt; re-export the model")
        if not tensor.HasField("raw_data") or tensor.data_location == onnx.TensorProto.EXTERNAL:
            continue
        itemsize = _ITEMSIZE.get(tensor.data_type)
        count = 1
        for d in tensor.dims:
            count *= d
        if itemsize is not None and count * itemsize != len(tensor.raw_data):
            raise ModelLoadError(f"{path}: weight '{tensor.name}' declares dims {list(tensor.dims)} "
                                 f"({count * itemsize} bytes) but holds {len(tensor.raw_data)} bytes: the file is "
                                 "corrupt; re-export the model")


def read_model(path: Path) -> onnx.ModelProto:
    """Parse and check a model file, checking but not loading its external data.

    Args:
        path: the ``.onnx`` file.

    Returns:
        The model, with external tensors still pointing at their (validated) data files.

    Raises:
        ModelLoadError: the file is missing, a directory, unreadable, not ONNX, truncated, or references
            external data outside its directory or that does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise ModelLoadError(f"model file {path} not found: check the path")
    if path.is_dir():
        raise ModelLoadError(f"{path} is a directory, not a model file: pass the .onnx file inside it")
    model = _parse(path)
    _check_structure(model, path)
    external_files(model, path)  # raises on traversal or a missing data file
    return model


def load_model(path: Path) -> onnx.ModelProto:
    """Load a model file and its external data, safely.

    Args:
        path: the ``.onnx`` file; external data files must sit in its directory (or below it).

    Returns:
        The model with all tensor data in memory.

    Raises:
        ModelLoadError: as :func:`read_model`, or when external data cannot be read.
    """
    path = Path(path)
    model = read_model(path)
    load_external_data(model, path)
    return model


def model_size_bytes(path: Path, model: onnx.ModelProto) -> int:
    """On-disk size of a model: the file plus every distinct external data file it references.

    Args:
        path: the ``.onnx`` file.
        model: the model as returned by :func:`read_model`. A model whose external data was already loaded no
            longer records its data files, so only the ``.onnx`` file would be counted.

    Returns:
        Total size in bytes.
    """
    path = Path(path)
    return path.stat().st_size + sum(file.stat().st_size for file in external_files(model, path))
