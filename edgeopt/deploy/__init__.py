"""A deployment: what ships, with every setting it was measured with (issue 21, "what is measured is what ships").

:class:`Deployment` is the answer of a sweep and an input of ``bench``, ``profile`` and ``qualify``: the model
file(s) with their hashes, the runtime and its version, every runtime option in effect, threads/streams/batch,
the static input shapes, the CPU features the decision depends on, and what was measured (metric, threshold,
retention, latency). :mod:`.io` writes and reads ``deployment.json``.
"""

from __future__ import annotations

from .io import DEPLOYMENT_FILE, is_deployment, load_deployment, save_deployment
from .schema import (
    DECISION_CPU_FLAGS,
    DeployedFile,
    Deployment,
    DeploymentMeasured,
    ShippedCheck,
    decision_cpu_flags,
)

__all__ = [
    "DECISION_CPU_FLAGS", "DEPLOYMENT_FILE", "DeployedFile", "Deployment", "DeploymentMeasured", "ShippedCheck",
    "decision_cpu_flags", "is_deployment", "load_deployment", "save_deployment",
]
