"""Core ML: runs .mlpackage / .mlmodel models on macOS (CPU, GPU, Neural Engine)."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor

DESCRIPTOR = RuntimeDescriptor(
    name="coreml",
    display_name="Core ML",
    delivers="coreml",
    module_sets=(("coremltools",),),
    platforms=("Darwin",),
    install="Core ML runs on macOS only: on the Mac, pip install coremltools (or pip install 'edgeopt[coreml]' "
            "where edgeopt itself runs there)",
    wrong_platform_hint="Core ML predicts only on macOS: bench it on a Mac over SSH (--host/--device)",
)
