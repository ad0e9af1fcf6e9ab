"""onnxruntime-genai: generative model folders written by its model builder (``edgeopt bench LLM_FOLDER``)."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor, SetupRule

DESCRIPTOR = RuntimeDescriptor(
    name="onnxruntime_genai",
    display_name="onnxruntime-genai",
    auto_select=False,  # generative folders only: picked by the folder's format, never for a graph
    delivers="onnxruntime_genai",
    module_sets=(("onnxruntime_genai",),),
    install="pip install onnxruntime-genai",
    setup=(SetupRule(pip=("onnxruntime-genai",)),),
    setup_aliases=("onnxruntime-genai", "ort-genai", "ortgenai"),
)
