"""edgeopt: take a trained model to an edge device and prove it is fit to ship there.

The Python API mirrors the CLI: :func:`inspect`, :func:`optimize`, :func:`benchmark`, :func:`profile`,
:func:`sweep` and :func:`qualify`, with keyword-only options and typed results.

The package root imports nothing heavy (PEP 562): each API function is imported on first access, so the
``edgeopt`` command installs its signal handlers before onnx, numpy and the runtimes load (a Ctrl-C in the
first second then ends it with one line, not a traceback).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .api import inspect, qualify
    from .bench import benchmark
    from .optimize import optimize
    from .profile import profile
    from .sweep import sweep

__all__ = ["__version__", "benchmark", "inspect", "optimize", "profile", "qualify", "sweep"]

# API name -> the module defining it. Four of them share their name with a subpackage
# (edgeopt.optimize, .profile, .qualify, .sweep): the attribute is always the function.
_API: dict[str, str] = {"benchmark": "bench", "inspect": "api", "optimize": "optimize", "profile": "profile",
                        "qualify": "api", "sweep": "sweep"}


def __getattr__(name: str) -> Any:
    """An API function (imported on first use) or a submodule (``edgeopt.reports``) not imported yet."""
    if name in _API:
        value = getattr(importlib.import_module(f".{_API[name]}", __name__), name)
        globals()[name] = value
        return value
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package object: importing the subpackage ``edgeopt.sweep`` (say) must not replace the ``sweep``
    function as the package's attribute (the import system binds every submodule on its parent)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
