"""onnxruntime-genai: generative model folders written by its model builder (``edgeopt bench LLM_FOLDER``)."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor, SetupRule
from ..runtime_sweep import LevelSpec

DESCRIPTOR = RuntimeDescriptor(
    name="onnxruntime_genai",
    display_name="onnxruntime-genai",
    auto_select=False,  # generative folders only: picked by the folder's format, never for a graph
    delivers="onnxruntime_genai",
    module_sets=(("onnxruntime_genai",),),
    install="pip install onnxruntime-genai",
    setup=(SetupRule(pip=("onnxruntime-genai",)),),
    setup_aliases=("onnxruntime-genai", "ort-genai", "ortgenai"),
    kinds=("generative",),
    reference_options={},  # its FP32 export runs in FP32: nothing to pin
    exporter="edgeopt.llm.ort_genai_export:EXPORTER",
    # The builder's int4 at block 32/128, RTN or k-quant (its two data-free algorithms), then int8, fp16 and the
    # fp32 reference (docs/llm.md, "Retention and sweep").
    levels=(
        LevelSpec(name="int4-b32-rtn", settings={"precision": "int4", "block_size": 32, "algo": "rtn"}),
        LevelSpec(name="int4-b128-rtn", settings={"precision": "int4", "block_size": 128, "algo": "rtn"}),
        LevelSpec(name="int4-b32-kquant", settings={"precision": "int4", "block_size": 32, "algo": "k_quant"}),
        LevelSpec(name="int4-b128-kquant", settings={"precision": "int4", "block_size": 128, "algo": "k_quant"}),
        LevelSpec(name="int8", settings={"precision": "int8"}),
        LevelSpec(name="fp16", settings={"precision": "fp16"}),
        LevelSpec(name="fp32", settings={"precision": "fp32"}, reference=True),
    ),
)
