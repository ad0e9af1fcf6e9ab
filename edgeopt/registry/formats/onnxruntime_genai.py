"""An onnxruntime-genai model folder (genai_config.json, the decoder ONNX with its data, the tokenizer)."""

from __future__ import annotations

from pathlib import Path

from ..format_spec import FormatDescriptor


class OnnxruntimeGenaiFormat(FormatDescriptor):
    """Claimed by a folder with ``genai_config.json``; checked for the decoder file it names and a tokenizer."""

    def check_directory(self, path: Path) -> None:
        from ...llm.folders import check_genai_folder

        check_genai_folder(path)


DESCRIPTOR = OnnxruntimeGenaiFormat(
    name="onnxruntime_genai",
    summary="onnxruntime-genai LLM folder (genai_config.json, decoder ONNX, tokenizer)",
    directory=True,
    kind="generative",
    entry_file="genai_config.json",
)
