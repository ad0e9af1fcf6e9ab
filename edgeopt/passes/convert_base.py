"""Shared base of the conversion passes (ONNX/PyTorch -> another runtime's format).

A converted model may be several files (OpenVINO IR: .xml + .bin) or a directory (Core ML .mlpackage), so its
hash and size cover every file (:func:`edgeopt.registry.lookup.model_digest`), not only the main one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..enums import Precision
from ..registry.lookup import model_digest
from .base import Pass, PassOutput


class ConvertPass(Pass[Any]):
    """A pass whose output is another runtime's format. Subclasses set ``suffix`` (the output file suffix)."""

    suffix: ClassVar[str]

    def for_source(self, precision: Precision) -> ConvertPass:
        """This converter set up for a source of ``precision`` (default: unchanged; TFLite picks its quantization)."""
        return self

    def output_digest(self, out: PassOutput) -> tuple[str, int]:
        """As :meth:`Pass.output_digest`, over every file of the converted model."""
        return model_digest(out.path, out.format)
