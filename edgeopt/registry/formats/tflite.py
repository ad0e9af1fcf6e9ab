"""TFLite / LiteRT flatbuffers (Raspberry Pi, Coral)."""

from __future__ import annotations

from pathlib import Path

from ...errors import ModelLoadError
from ..format_spec import ConversionSource, FormatDescriptor

TFLITE_ID = b"TFL3"  # flatbuffer file identifier, bytes 4..8 of every .tflite file


class TfliteFormat(FormatDescriptor):
    """A ``.tflite`` flatbuffer, recognised by its file identifier."""

    def marker(self, head: bytes) -> bool | None:
        return len(head) >= 8 and head[4:8] == TFLITE_ID

    def check_file(self, path: Path, head: bytes) -> None:
        if not self.marker(head):
            raise ModelLoadError(f"{path} is not a TFLite flatbuffer (no {TFLITE_ID.decode()} identifier): "
                                 "re-export it with the TFLite/LiteRT converter")


DESCRIPTOR = TfliteFormat(
    name="tflite",
    summary="TFLite / LiteRT flatbuffer (.tflite)",
    suffixes=(".tflite",),
    converter="to_tflite",
    conversion_source=ConversionSource.FP32_ONNX,
    validated_by=("tflite",),
)
