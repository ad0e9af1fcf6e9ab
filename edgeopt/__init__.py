"""edgeopt: take a trained model to an edge device and prove it is fit to ship there.

The Python API mirrors the CLI: :func:`inspect`, :func:`benchmark`, :func:`profile` and the others, with
keyword-only options and typed results.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import inspect  # noqa: E402
from .bench import benchmark  # noqa: E402
from .optimize import optimize  # noqa: E402
from .profile import profile  # noqa: E402
from .qualify import qualify  # noqa: E402
from .sweep import sweep  # noqa: E402

__all__ = ["__version__", "benchmark", "inspect", "optimize", "profile", "qualify", "sweep"]
