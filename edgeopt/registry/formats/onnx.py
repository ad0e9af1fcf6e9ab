"""ONNX: the working format of every pass, and the reference a converted model is proved against."""

from __future__ import annotations

from pathlib import Path

from ..format_spec import FormatDescriptor


class OnnxFormat(FormatDescriptor):
    """An ``.onnx`` file; large models keep their weights in external data files next to it."""

    def companions(self, path: Path) -> list[Path]:
        """The external data files the model names (each checked to stay inside the model's directory)."""
        import onnx

        from ...analysis.external_data import external_files

        return external_files(onnx.load(str(path), load_external_data=False), path)


DESCRIPTOR = OnnxFormat(
    name="onnx",
    summary="ONNX model (.onnx), weights optionally in external data files",
    suffixes=(".onnx",),
    validated_by=("onnxruntime",),
    fallback=True,
)
