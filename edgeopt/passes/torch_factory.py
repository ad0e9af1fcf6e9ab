"""Building a PyTorch model from a ``package.module:factory`` spec: import (also from the current directory, as
``python -m`` would), look up, call, and check that the result is an ``nn.Module``."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

import torch

from ..errors import ModelLoadError, first_line


def call_factory(spec: str) -> torch.nn.Module:
    """Import and call a ``package.module:factory`` spec; every failure is a one-line ``ModelLoadError``."""
    module_name, _, attr_path = spec.partition(":")
    try:
        obj: object = _import_from_cwd_too(module_name)
    except ModuleNotFoundError as exc:
        raise ModelLoadError(
            f"factory spec '{spec}': cannot import module '{module_name}' ({exc}); install the package or put it "
            "on PYTHONPATH"
        ) from exc
    except Exception as exc:  # the user's module failed while importing
        raise ModelLoadError(
            f"factory spec '{spec}': importing '{module_name}' failed ({type(exc).__name__}: {first_line(exc)}); "
            "fix that module"
        ) from exc
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise ModelLoadError(
                f"factory spec '{spec}': '{module_name}' has no attribute '{attr_path}'; "
                "name a function that returns an nn.Module"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise ModelLoadError(f"factory spec '{spec}': '{attr_path}' is not callable; name a function or class")
    try:
        built = obj()
    except Exception as exc:
        raise ModelLoadError(
            f"factory spec '{spec}': calling {attr_path}() failed ({type(exc).__name__}: {first_line(exc)}); "
            "the factory must build the model with no arguments"
        ) from exc
    if not isinstance(built, torch.nn.Module):
        raise ModelLoadError(
            f"factory spec '{spec}': {attr_path}() returned {type(built).__name__}, not a torch.nn.Module; "
            "return the model itself"
        )
    return built.eval()


def _import_from_cwd_too(module_name: str) -> object:
    """Import ``module_name``; if it is not found, retry with the current directory on ``sys.path`` (as
    ``python -m`` would have it: the ``edgeopt`` script's own ``sys.path`` lacks it), then restore ``sys.path``."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        cwd = os.getcwd()
        top = module_name.split(".")[0]
        if exc.name not in (top, module_name) or cwd in sys.path or "" in sys.path:
            raise
        sys.path.insert(0, cwd)
        try:
            return importlib.import_module(module_name)
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(cwd)
