"""Check and load a model's external data files without ever reading outside the model's own directory.

A model file names its external data files itself (``location``), so a crafted model could point at
``/etc/shadow`` or ``../../secrets``. Every location is therefore checked *before* any byte is read: it must
be relative, and once symlinks are resolved it must stay inside the model's directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

import onnx
from onnx.external_data_helper import load_external_data_for_model, uses_external_data

from ..errors import ModelLoadError, first_line
from .walk import iter_all_tensors


@dataclass(frozen=True)
class ExternalRef:
    """Where one tensor's bytes live: a file inside the model directory and an optional byte range."""

    tensor: str
    file: Path
    offset: int
    length: int | None


def _field(tensor: onnx.TensorProto, key: str) -> str | None:
    for entry in tensor.external_data:
        if entry.key == key:
            return entry.value
    return None


def _as_int(tensor: onnx.TensorProto, key: str, model_path: Path) -> int | None:
    raw = _field(tensor, key)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ModelLoadError(
            f"{model_path}: tensor '{tensor.name}' has external-data {key}={raw!r}, not a byte count: "
            "re-export the model"
        )
    return value


def _checked_file(tensor: onnx.TensorProto, model_path: Path) -> Path:
    """The resolved data file of ``tensor``; refuses locations that escape the model directory."""
    location = _field(tensor, "location")
    if not location:
        raise ModelLoadError(
            f"{model_path}: tensor '{tensor.name}' is stored externally but names no data file: re-export the model"
        )
    if "\0" in location:
        raise ModelLoadError(
            f"{model_path}: external data location {location!r} of tensor '{tensor.name}' contains a NUL byte, "
            "refused: re-export the model with plain data file names"
        )
    base = model_path.parent.resolve()
    escapes = (
        PurePosixPath(location).is_absolute()
        or PureWindowsPath(location).is_absolute()
        or bool(PureWindowsPath(location).drive)
        or ".." in PurePosixPath(location.replace("\\", "/")).parts
    )
    resolved = (model_path.parent / location).resolve()
    if escapes or not resolved.is_relative_to(base):
        raise ModelLoadError(
            f"{model_path}: external data location {location!r} of tensor '{tensor.name}' leaves the model's "
            f"directory (path traversal), refused: keep data files next to the model and name them relatively"
        )
    if not resolved.is_file():
        raise ModelLoadError(
            f"{model_path}: external data file {location!r} (tensor '{tensor.name}') not found in {base}: "
            "copy the data file next to the model"
        )
    return resolved


def external_refs(model: onnx.ModelProto, model_path: Path) -> list[ExternalRef]:
    """Validate every external-data reference of ``model`` (loaded with ``load_external_data=False``).

    Args:
        model: the parsed model whose external data is not loaded yet.
        model_path: the model file; locations are relative to its directory.

    Returns:
        One reference per externally stored tensor, in model order.

    Raises:
        ModelLoadError: a location leaves the model directory, a data file is missing, or a byte range runs
            past the end of its file.
    """
    refs: list[ExternalRef] = []
    sizes: dict[Path, int] = {}
    for tensor in iter_all_tensors(model):
        if not uses_external_data(tensor):
            continue
        file = _checked_file(tensor, model_path)
        offset = _as_int(tensor, "offset", model_path) or 0
        length = _as_int(tensor, "length", model_path)
        size = sizes.setdefault(file, file.stat().st_size)
        end = offset + (length or 0)
        if end > size:
            raise ModelLoadError(
                f"{model_path}: external data file {file.name} is {size} bytes but tensor '{tensor.name}' "
                f"needs bytes {offset}..{end}: the data file is truncated, copy it again"
            )
        refs.append(ExternalRef(tensor=tensor.name, file=file, offset=offset, length=length))
    return refs


def load_external_data(model: onnx.ModelProto, model_path: Path) -> None:
    """Validate, then read the external data of ``model`` into it (the loader's own, fresh proto).

    Args:
        model: a model parsed with ``load_external_data=False``; filled in place.
        model_path: the model file; data files are looked up next to it.

    Raises:
        ModelLoadError: as :func:`external_refs`, or when a data file cannot be read.
    """
    if not external_refs(model, model_path):
        return
    try:
        load_external_data_for_model(model, str(model_path.parent))
    except (OSError, ValueError, RuntimeError, onnx.checker.ValidationError) as exc:
        reason = first_line(exc, limit=None)
        raise ModelLoadError(
            f"{model_path}: external data could not be loaded ({reason}): keep the model and its data files together"
        ) from exc


def external_files(model: onnx.ModelProto, model_path: Path) -> list[Path]:
    """The distinct external data files ``model`` references, in first-use order."""
    return list(dict.fromkeys(ref.file for ref in external_refs(model, model_path)))
