"""edgeopt: take a trained model to an edge device and prove it is fit to ship there.

The Python API mirrors the CLI: :func:`inspect`, :func:`optimize`, :func:`benchmark`, :func:`profile`,
:func:`sweep` and :func:`qualify`, with keyword-only options and typed results.
"""

from __future__ import annotations

from ._version import __version__
from .api import inspect, qualify
from .bench import benchmark
from .optimize import optimize
from .profile import profile
from .sweep import sweep

__all__ = ["__version__", "benchmark", "inspect", "optimize", "profile", "qualify", "sweep"]
