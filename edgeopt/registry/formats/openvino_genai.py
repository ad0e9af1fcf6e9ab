"""An OpenVINO GenAI folder: the stateful LLM IR with its tokenizer and detokenizer IRs."""

from __future__ import annotations

from pathlib import Path

from ..format_spec import FormatDescriptor


class OpenvinoGenaiFormat(FormatDescriptor):
    """Claimed by a folder with ``openvino_model.xml``; checked for the weights and the (de)tokenizer IRs."""

    def check_directory(self, path: Path) -> None:
        from ...llm.folders import check_ov_genai_folder

        check_ov_genai_folder(path)


DESCRIPTOR = OpenvinoGenaiFormat(
    name="openvino_genai",
    summary="OpenVINO GenAI LLM folder (openvino_model.xml/.bin, openvino_tokenizer/detokenizer IRs)",
    directory=True,
    kind="generative",
    entry_file="openvino_model.xml",
)
