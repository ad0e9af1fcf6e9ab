"""OpenVINO GenAI: generative model folders (stateful OpenVINO IR + tokenizer IRs) run by ``LLMPipeline``."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor, SetupRule

DESCRIPTOR = RuntimeDescriptor(
    name="openvino_genai",
    display_name="OpenVINO GenAI",
    auto_select=False,  # generative folders only: picked by the folder's format, never for a graph
    delivers="openvino_genai",
    module_sets=(("openvino_genai",),),
    install="pip install openvino-genai openvino-tokenizers",
    setup=(SetupRule(pip=("openvino-genai", "openvino-tokenizers")),),
    setup_aliases=("openvino-genai", "ov-genai", "ovgenai"),
)
