"""OpenVINO GenAI: generative model folders (stateful OpenVINO IR + tokenizer IRs) run by ``LLMPipeline``."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor, SetupRule
from ..runtime_sweep import LevelSpec

DESCRIPTOR = RuntimeDescriptor(
    name="openvino_genai",
    display_name="OpenVINO GenAI",
    auto_select=False,  # generative folders only: picked by the folder's format, never for a graph
    delivers="openvino_genai",
    module_sets=(("openvino_genai",),),
    install="pip install openvino-genai openvino-tokenizers",
    setup=(SetupRule(pip=("openvino-genai", "openvino-tokenizers")),),
    setup_aliases=("openvino-genai", "ov-genai", "ovgenai"),
    kinds=("generative",),
    # Its CPU plugin runs FP32 in BF16 by default on AMX/AVX512_BF16 CPUs: a reference pins f32.
    reference_options={"inference_precision": "f32"},
    exporter="edgeopt.llm.ov_genai_export:EXPORTER",
    # NNCF int4 symmetric at group 32/128 (data-free; NNCF has no k-quant), int8, fp16 and the fp32 reference;
    # with calibration text also the data-aware int4-awq of that recipe (recipes/llm/int4-awq.yaml).
    levels=(
        LevelSpec(name="int4-g32", settings={"weights": "int4_sym", "group_size": 32}),
        LevelSpec(name="int4-g128", settings={"weights": "int4_sym", "group_size": 128}),
        LevelSpec(name="int8", settings={"weights": "int8_asym"}),
        LevelSpec(name="fp16", settings={"weights": "fp16"}),
        LevelSpec(name="fp32", settings={"weights": "fp32"}, reference=True),
        LevelSpec(name="int4-awq", recipe="int4-awq", data_aware=True),
    ),
)
