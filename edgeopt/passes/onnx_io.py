"""Reading and writing ONNX models inside passes: safe loading, single-file or external-data saving, checks."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import onnx

from ..analysis.loader import load_model
from ..errors import first_line
from .base import Artifact, PassError

# protobuf cannot serialize a message over 2 GiB; stay well below it before switching to external data.
SINGLE_FILE_LIMIT_BYTES = 1_800_000_000


def load(source: Artifact) -> onnx.ModelProto:
    """Load an ONNX artifact with its external data (the loader refuses data outside the model's directory)."""
    return load_model(Path(source.path))


def save(model: onnx.ModelProto, path: Path) -> Path:
    """Write ``model`` to ``path``: one file when small, else weights in ``<name>.data`` next to it.

    Atomic: written into a temp directory next to ``path`` and renamed into place (external data first, then the
    model file), so a process killed mid-write never leaves a truncated model under the final name.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        tmp = tmp_dir / path.name
        if model.ByteSize() < SINGLE_FILE_LIMIT_BYTES:
            onnx.save_model(model, str(tmp))
        else:
            onnx.save_model(
                model,
                str(tmp),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=f"{path.name}.data",
                size_threshold=1024,
            )
            os.replace(tmp_dir / f"{path.name}.data", path.parent / f"{path.name}.data")
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return path


def data_files(path: Path) -> list[Path]:
    """Files that must move with the pass output at ``path``: an ONNX model's external data (written by
    :func:`save` or onnxruntime); none for a file whose suffix names no multi-file format (a PyTorch output).
    The format descriptors answer (:func:`edgeopt.registry.files_by_suffix`)."""
    from ..registry import files_by_suffix

    return [] if path.is_dir() else files_by_suffix(path)[1:]


def check(path: Path, pass_name: str) -> None:
    """onnx.checker on the written file (path-based, so large models work). Nodes appended out of order by a
    converter (onnxruntime's quantizers on If branches, the FP16 converter) are re-sorted once first.

    Raises:
        PassError: the output is not a valid ONNX model.
    """
    try:
        onnx.checker.check_model(str(path))
        return
    except (onnx.checker.ValidationError, ValueError) as exc:
        if "topologically sorted" not in str(exc):
            raise _invalid(path, pass_name, exc) from exc
    from .graph_edit import topological_sort

    model = onnx.load_model(str(path))
    topological_sort(model.graph)
    save(model, path)
    try:
        onnx.checker.check_model(str(path))
    except (onnx.checker.ValidationError, ValueError) as exc:
        raise _invalid(path, pass_name, exc) from exc


def _invalid(path: Path, pass_name: str, exc: Exception) -> PassError:
    first = first_line(exc, limit=None, fallback="invalid model")
    return PassError(f"pass '{pass_name}' wrote an invalid ONNX model {path.name}: {first}; report it with the "
                     "model, or exclude the offending node")


def opset(model: onnx.ModelProto) -> int:
    """The default-domain opset version of ``model``."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
