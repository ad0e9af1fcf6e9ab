"""Is a model input a PyTorch model, and which pipeline artifact stands for it: decided without importing torch.

A PyTorch model is named by one string: a ``.pt2`` file (torch.export), a TorchScript file (``.pt``, ``.pth``,
``.ts``...), or ``package.module:factory`` (:mod:`.torch_io` loads all three). ``optimize`` and the PyTorch passes
decide with the same rules here, so an input is never a PyTorch model to one and an ONNX file to the other.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..enums import Precision
from ..errors import ModelLoadError
from ..fsutil import sha256_file
from .base import Artifact, ArtifactFormat

TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts", ".torchscript", ".jit", ".zip")
PT2_SUFFIX = ".pt2"

_FACTORY_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def is_factory_spec(model: str | Path) -> bool:
    """True when ``model`` reads as ``package.module:factory`` (and is not an existing file)."""
    text = str(model)
    return bool(_FACTORY_SPEC.match(text)) and not Path(text).exists()


def looks_like_torch_model(model: str | Path) -> bool:
    """True for a factory spec, a ``.pt2`` file, or a TorchScript-style suffix: what the pipeline hands to torch."""
    if is_factory_spec(model):
        return True
    suffix = Path(str(model)).suffix.lower()
    return suffix == PT2_SUFFIX or suffix in TORCHSCRIPT_SUFFIXES


def torch_artifact(model: str | Path, *, name: str = "input") -> Artifact:
    """The pipeline's input artifact for a PyTorch model (a factory is hashed by its spec text).

    Raises:
        ModelLoadError: the file does not exist.
    """
    text = str(model)
    if is_factory_spec(text):
        sha, size = hashlib.sha256(text.encode("utf-8")).hexdigest(), 0
    else:
        path = Path(text)
        if not path.is_file():
            raise ModelLoadError(missing_file_message(text))
        sha, size = sha256_file(path), path.stat().st_size
    return Artifact(name=name, path=text, format=ArtifactFormat.PYTORCH, precision=Precision.FP32, sha256=sha,
                    size_bytes=size)


def torch_stem(model: str) -> str:
    """The stem output files are named after: ``Path(model).stem``, or the factory's name for ``module:factory``.

    (A dotted spec ``pkg.module:factory`` keeps ``Path``'s reading, ``pkg``, as output names always have.)
    """
    return Path(model).stem if Path(model).suffix else model.rsplit(":", 1)[-1]


def missing_file_message(text: str) -> str:
    """The one-line error for a PyTorch model that is neither a file nor an importable factory spec."""
    hint = (
        "; for a factory write 'package.module:factory' with an importable module"
        if ":" in text and not Path(text).suffix
        else ""
    )
    return f"PyTorch model {text} not found: give a .pt2, a TorchScript file, or 'package.module:factory'{hint}"


__all__ = [
    "PT2_SUFFIX",
    "TORCHSCRIPT_SUFFIXES",
    "is_factory_spec",
    "looks_like_torch_model",
    "missing_file_message",
    "torch_artifact",
    "torch_stem",
]
