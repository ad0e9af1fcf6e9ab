"""Runtime registry: name -> lazy dotted path, so a runtime's library is imported only when used.

Adding a runtime is one new file plus one line here; a third-party runtime is an ``edgeopt_agent.runtimes``
entry point (``name = package.module:RuntimeClass``) of an installed distribution, or of one in a directory of
``EDGEOPT_PLUGIN_PATH`` (the local runner passes that variable on; the agent cannot import edgeopt, so this is
its own one place that reads it). The classes' attributes (formats, packages, profiling support, option schema)
are the one declaration of those facts: the host's descriptors (``edgeopt.registry``) read them from here, and
``tests/contract/test_registry_agreement.py`` checks that both sides register the same names.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Dict, List, Tuple, Type

from .base import Runtime, RuntimeMissing

ENTRY_POINT_GROUP = "edgeopt_agent.runtimes"
PLUGIN_PATH_ENV = "EDGEOPT_PLUGIN_PATH"

BUILTIN: Dict[str, str] = {
    "null": "edgeopt_agent.runtimes.null_rt:NullRuntime",
    "onnxruntime": "edgeopt_agent.runtimes.onnxruntime_rt:OnnxRuntime",
    "openvino": "edgeopt_agent.runtimes.openvino_rt:OpenVinoRuntime",
    "tflite": "edgeopt_agent.runtimes.tflite_rt:TfliteRuntime",
    "tensorrt": "edgeopt_agent.runtimes.tensorrt_rt:TensorRtRuntime",
    "coreml": "edgeopt_agent.runtimes.coreml_rt:CoreMlRuntime",
    "onnxruntime_genai": "edgeopt_agent.runtimes.ortgenai_rt:OrtGenaiRuntime",
    "openvino_genai": "edgeopt_agent.runtimes.ovgenai_rt:OvGenaiRuntime",
    "llama_cpp": "edgeopt_agent.runtimes.llamacpp_rt:LlamaCppRuntime",
}
_CACHE: Dict[str, Dict[str, str]] = {}


class DuplicateRuntime(KeyError):
    """Two registrations claim one runtime name."""


def _entry_points() -> List[Tuple[str, str]]:
    """(name, value) of the ``edgeopt_agent.runtimes`` entry points on sys.path (Python 3.8+ API shapes)."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8 has no importlib.metadata: built-ins only
        return []
    eps = metadata.entry_points()
    found = eps.select(group=ENTRY_POINT_GROUP) if hasattr(eps, "select") else eps.get(ENTRY_POINT_GROUP, [])
    return list(dict.fromkeys((ep.name, ep.value) for ep in found))


def _registry() -> Dict[str, str]:
    raw = os.environ.get(PLUGIN_PATH_ENV, "")
    if raw not in _CACHE:
        for directory in raw.split(os.pathsep):
            if directory.strip() and directory not in sys.path:
                sys.path.append(directory)
        registry = dict(BUILTIN)
        for name, value in _entry_points():
            if name in registry:
                raise DuplicateRuntime("runtime %r is registered twice: %s and %s (entry point in %s); uninstall "
                                       "one of them" % (name, registry[name], value, ENTRY_POINT_GROUP))
            registry[name] = value
        _CACHE[raw] = registry
    return _CACHE[raw]


def names() -> List[str]:
    """Registered runtime names, sorted."""
    return sorted(_registry())


def runtime_class(name: str) -> Type[Runtime]:
    """The class registered as ``name`` (imports its module, not its library).

    Raises:
        KeyError: unknown name (the message lists the known ones).
    """
    registry = _registry()
    if name not in registry:
        raise KeyError("unknown runtime %r; known runtimes: %s" % (name, ", ".join(names())))
    module_name, _, attr = registry[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def create(name: str) -> Runtime:
    """Instantiate the runtime registered as ``name``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
        RuntimeMissing: the runtime's library is not installed here.
    """
    return runtime_class(name)()


def profiling() -> List[str]:
    """Registered runtimes whose class drives a per-layer profiler (``profile_unsupported`` is empty), sorted."""
    found = []
    for name in names():
        try:
            cls = runtime_class(name)
        except ImportError:  # a broken plug-in module: it cannot profile
            continue
        if getattr(cls, "profile_unsupported", None) == "":
            found.append(name)
    return found


def packages() -> List[Tuple[str, Tuple[str, ...]]]:
    """(import name, distribution names) of every registered runtime's packages, each once."""
    seen: Dict[str, Tuple[str, ...]] = {}
    for name in names():
        try:
            cls = runtime_class(name)
        except ImportError:  # a broken plug-in module: probe reports the runtime itself as unavailable
            continue
        for module, dists in cls.packages:
            seen.setdefault(module, dists)
    return list(seen.items())


__all__ = ["Runtime", "RuntimeMissing", "create", "names", "packages", "profiling", "runtime_class"]
