"""Runtime registry: name -> lazy dotted path, so a runtime's library is imported only when used.

Adding a runtime is one new file plus one line here.
"""

from __future__ import annotations

import importlib
from typing import Dict, List

from .base import Runtime, RuntimeMissing

_REGISTRY: Dict[str, str] = {
    "null": "edgeopt_agent.runtimes.null_rt:NullRuntime",
    "onnxruntime": "edgeopt_agent.runtimes.onnxruntime_rt:OnnxRuntime",
    "openvino": "edgeopt_agent.runtimes.openvino_rt:OpenVinoRuntime",
    "tflite": "edgeopt_agent.runtimes.tflite_rt:TfliteRuntime",
    "tensorrt": "edgeopt_agent.runtimes.tensorrt_rt:TensorRtRuntime",
    "coreml": "edgeopt_agent.runtimes.coreml_rt:CoreMlRuntime",
}


def names() -> List[str]:
    """Registered runtime names, sorted."""
    return sorted(_REGISTRY)


def create(name: str) -> Runtime:
    """Instantiate the runtime registered as ``name``.

    Raises:
        KeyError: unknown name (the message lists the known ones).
        RuntimeMissing: the runtime's library is not installed here.
    """
    if name not in _REGISTRY:
        raise KeyError("unknown runtime %r; known runtimes: %s" % (name, ", ".join(names())))
    module_name, _, attr = _REGISTRY[name].partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    return cls()


__all__ = ["Runtime", "RuntimeMissing", "create", "names"]
