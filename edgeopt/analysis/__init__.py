"""Model analysis (``edgeopt inspect``): what a model is and how much work one inference does.

Stages, one file each: :mod:`.loader` (safe loading), :mod:`.shapes` (shape inference with ``--shape`` and
``--batch`` overrides), :mod:`.flops` (MAC/FLOP counters), :mod:`.memory` (weight and activation bytes),
:mod:`.precision` (precision guess), :mod:`.roofline` (bound on a target), :mod:`.report` (the result type).
"""

from __future__ import annotations

from .inspector import inspect_model
from .loader import load_model, model_size_bytes, read_model
from .precision import model_precision
from .report import InspectResult, OpStats, TensorSpec
from .roofline import Roofline, roofline

__all__ = [
    "InspectResult",
    "OpStats",
    "Roofline",
    "TensorSpec",
    "inspect_model",
    "load_model",
    "model_precision",
    "model_size_bytes",
    "read_model",
    "roofline",
]
