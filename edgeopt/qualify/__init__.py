"""Pre-release qualification: a spec names a model, devices, eval data and gates; the engine measures, decides and
records the history (docs/qualify.md).

``edgeopt.qualify`` (the attribute of the top-level package) is the public function, defined in :mod:`edgeopt.api`:
it runs :func:`run_qualification` and writes the reports, which this package does not import. Reach this
package's modules with ``from edgeopt.qualify.spec import ...`` rather than ``import edgeopt.qualify.spec``.
"""

from __future__ import annotations

from .engine import run_qualification
from .loader import LoadedSpec, QualifySpecError, load_spec, profile_names
from .options import QualifyOptions
from .result import DeviceResult, GateResult, GateStatus, QualifyResult, SweepPoint
from .retention import HostOnnxEvaluator, RetentionEvaluator
from .spec import QualifySpec

__all__ = [
    "DeviceResult", "GateResult", "GateStatus", "HostOnnxEvaluator", "LoadedSpec", "QualifyOptions", "QualifyResult",
    "QualifySpec", "QualifySpecError", "RetentionEvaluator", "SweepPoint", "load_spec", "profile_names",
    "run_qualification",
]
