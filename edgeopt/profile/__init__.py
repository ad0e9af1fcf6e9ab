"""Per-layer profiling: the runtime's own profiler on the device, joined with the ONNX graph (docs/profile.md).

``profile(...)`` returns a :class:`ProfileResult` (layers keyed by the runtime's kernel name, each with the ONNX
nodes it covers); ``compare_profiles(a, b)`` / ``profile_vs(...)`` return a :class:`ProfileComparison`.
"""

from __future__ import annotations

from .api import ProfileUnsupportedError, profile, profile_vs
from .compare import compare_profiles
from .schema import (
    KernelPrecision,
    LayerDelta,
    LayerOrigin,
    LayerRecord,
    OpTypeSummary,
    ProfileComparison,
    ProfileResult,
)

__all__ = ["KernelPrecision", "LayerDelta", "LayerOrigin", "LayerRecord", "OpTypeSummary", "ProfileComparison",
           "ProfileResult", "ProfileUnsupportedError", "compare_profiles", "profile", "profile_vs"]
