"""onnxruntime-genai model folder: genai_config.json, model.onnx (+ .onnx.data) and the tokenizer files."""

from __future__ import annotations

from ..format_spec import FormatDescriptor

DESCRIPTOR = FormatDescriptor(
    name="ortgenai_folder",
    summary="onnxruntime-genai model folder (genai_config.json + model.onnx + tokenizer)",
    directory=True,
)
