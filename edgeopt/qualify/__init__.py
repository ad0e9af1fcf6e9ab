"""Pre-release qualification: a spec names a model, devices, eval data and gates; ``qualify`` measures, decides,
records the history and writes reports (docs/qualify.md).

``edgeopt.qualify`` (the attribute of the top-level package) is the function, as the API convention wants; reach
this package's modules with ``from edgeopt.qualify.spec import ...`` rather than ``import edgeopt.qualify.spec``.
"""

from __future__ import annotations

from .engine import qualify
from .loader import LoadedSpec, QualifySpecError, load_spec, profile_names
from .result import DeviceResult, GateResult, GateStatus, QualifyResult, SweepPoint
from .retention import HostOnnxEvaluator, RetentionEvaluator
from .spec import QualifySpec

__all__ = [
    "DeviceResult", "GateResult", "GateStatus", "HostOnnxEvaluator", "LoadedSpec", "QualifyResult", "QualifySpec",
    "QualifySpecError", "RetentionEvaluator", "SweepPoint", "load_spec", "profile_names", "qualify",
]
