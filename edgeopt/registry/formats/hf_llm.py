"""A Hugging Face decoder LLM folder (config.json + safetensors + tokenizer): the input of ``optimize`` for LLMs."""

from __future__ import annotations

from pathlib import Path

from ..format_spec import FormatDescriptor


class HfLlmFormat(FormatDescriptor):
    """Claimed by a folder with ``config.json``; checked for a supported decoder, weights and a tokenizer."""

    def check_directory(self, path: Path) -> None:
        from ...llm.folders import check_hf_folder

        check_hf_folder(path)


DESCRIPTOR = HfLlmFormat(
    name="hf_llm",
    summary="Hugging Face decoder LLM folder (config.json, safetensors, tokenizer; Llama/Qwen/Phi-3/Gemma)",
    directory=True,
    kind="generative",
    entry_file="config.json",
    deployable=False,
)
