"""llama.cpp through llama-cpp-python: GGUF models (``edgeopt bench model.gguf``), exported and quantized with
llama.cpp's own converter and quantizer (:mod:`edgeopt.llm.gguf_export`).

llama-cpp-python ships as a source distribution only: ``pip install llama-cpp-python`` compiles llama.cpp with
the system's C/C++ compiler and cmake (about 15 minutes of wall time on 2 x86 cores; docs/llm.md, "llama.cpp").
"""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor, SetupRule
from ..runtime_sweep import LevelSpec

DESCRIPTOR = RuntimeDescriptor(
    name="llama_cpp",
    display_name="llama.cpp",
    auto_select=False,  # GGUF models only: picked by the format, never for a graph
    delivers="gguf",
    module_sets=(("llama_cpp",),),
    install="pip install llama-cpp-python (compiles llama.cpp: needs a C/C++ compiler and cmake)",
    # an sdist only: compiled once per board platform and CPU (llama.cpp's native build), the wheel kept on the host
    # and pushed to the other boards (edgeopt/devices/setup/built_wheels.py); no multimodal objects
    setup=(SetupRule(pip=("llama-cpp-python",), compiles=True, build_env={"CMAKE_ARGS": "-DLLAVA_BUILD=OFF"}),),
    setup_aliases=("llama-cpp-python", "llama.cpp", "llamacpp", "gguf"),
    kinds=("generative",),
    reference_options={},  # its F32 GGUF computes in F32 on a CPU: nothing to pin
    exporter="edgeopt.llm.gguf_export:EXPORTER",
    # llama.cpp's own quantization types (llama-quantize's names, lower case): the F32 conversion is the reference;
    # F16 and Q8_0 store every matrix at that type, the K-quant mixes (_M) keep some tensors a step higher; the
    # -imatrix levels weigh each column by its activation on calibration text (llama-imatrix's statistic).
    levels=(
        LevelSpec(name="q4_0", settings={"type": "Q4_0"}),
        LevelSpec(name="q4_k_m", settings={"type": "Q4_K_M"}),
        LevelSpec(name="q5_k_m", settings={"type": "Q5_K_M"}),
        LevelSpec(name="q6_k", settings={"type": "Q6_K"}),
        LevelSpec(name="q8_0", settings={"type": "Q8_0"}),
        LevelSpec(name="f16", settings={"type": "F16"}),
        LevelSpec(name="fp32", settings={"type": "F32"}, reference=True),
        # data-aware: the importance matrix collected on --calib TEXT (edgeopt/llm/gguf_imatrix.py)
        LevelSpec(name="q4_0-imatrix", recipe="q4_0-imatrix", data_aware=True),
        LevelSpec(name="q4_k_m-imatrix", recipe="q4_k_m-imatrix", data_aware=True),
    ),
)
