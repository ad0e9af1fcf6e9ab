"""OpenVINO GenAI model folder: openvino_model.xml/.bin with a stateful KV cache, tokenizer and detokenizer IRs."""

from __future__ import annotations

from ..format_spec import FormatDescriptor

DESCRIPTOR = FormatDescriptor(
    name="ovgenai_folder",
    summary="OpenVINO GenAI model folder (stateful openvino_model.xml + openvino_tokenizer/detokenizer)",
    directory=True,
)
