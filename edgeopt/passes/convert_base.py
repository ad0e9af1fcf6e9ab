"""Shared base of the conversion passes (ONNX/PyTorch -> another runtime's format).

A converted model may be several files (OpenVINO IR: .xml + .bin) or a directory (Core ML .mlpackage), so its
hash and size cover every file (:func:`edgeopt.formats.model_digest`), not only the main one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..formats import ModelFormat, model_digest
from .base import ArtifactFormat, Pass, PassOutput

# Artifact format -> the formats module's model format (for hashing multi-file models).
_MODEL_FORMAT = {
    ArtifactFormat.OPENVINO_IR: ModelFormat.OPENVINO_IR,
    ArtifactFormat.TFLITE: ModelFormat.TFLITE,
    ArtifactFormat.COREML: ModelFormat.COREML,
    ArtifactFormat.TENSORRT_ONNX: ModelFormat.ONNX,
    ArtifactFormat.ONNX: ModelFormat.ONNX,
}


class ConvertPass(Pass[Any]):
    """A pass whose output is another runtime's format. Subclasses set ``suffix`` (the output file suffix)."""

    suffix: ClassVar[str]

    def output_digest(self, out: PassOutput) -> tuple[str, int]:
        """As :meth:`Pass.output_digest`, over every file of the converted model."""
        return model_digest(out.path, _MODEL_FORMAT[out.format])
