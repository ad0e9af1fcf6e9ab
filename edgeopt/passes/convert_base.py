"""Shared base of the conversion passes (ONNX/PyTorch -> another runtime's format).

A converted model may be several files (OpenVINO IR: .xml + .bin) or a directory (Core ML .mlpackage), so its
hash and size cover every file (:func:`edgeopt.formats.model_digest`), not only the main one.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from ..enums import Precision
from ..formats import model_digest
from .base import Artifact, Pass, PassContext, PassError, PassUnavailableError


class ConvertPass(Pass[Any]):
    """A pass whose output is another runtime's format. Subclasses set ``suffix`` (the output file suffix)."""

    suffix: ClassVar[str]

    def for_source(self, precision: Precision) -> ConvertPass:
        """This converter set up for a source of ``precision`` (default: unchanged; TFLite picks its quantization)."""
        return self

    def apply(self, source: Artifact, ctx: PassContext, *, name: str) -> Artifact:
        """As :meth:`Pass.apply`, hashing every file of the converted model."""
        reason = self.availability()
        if reason:
            raise PassUnavailableError(reason)
        if source.format not in self.input_formats:
            wants = ", ".join(sorted(f.value for f in self.input_formats))
            raise PassError(f"pass '{self.name}' takes {wants} models but got {source.format.value} ({source.path})")
        started = time.perf_counter()
        out = self.run(source, ctx)
        seconds = time.perf_counter() - started
        sha, size = model_digest(out.path, out.format)
        return Artifact(
            name=name,
            path=str(out.path),
            format=out.format,
            precision=out.precision,
            sha256=sha,
            size_bytes=size,
            parent_sha256=source.sha256,
            parent_name=source.name,
            pass_name=self.name,
            pass_config=self.config.model_dump(mode="json"),
            seconds=round(seconds, 4),
            report=out.report,
            warnings=out.warnings,
        )
