"""TensorRT's ``IProfiler``, read back as per-layer events.

An ``IProfiler`` set on an execution context gets ``report_layer_time(layer_name, ms)`` for every layer of each
inference once the inference has completed (the runtime's ``infer`` synchronizes its stream). Layer names are the
engine's: fused layers join their source names with `` + `` (``conv1 + relu1``), pointwise fusions wrap them in
``PWN(...)``, and ``Reformatting CopyNode ...`` layers are format conversions TensorRT inserted. The engine
inspector (engines are built with DETAILED profiling verbosity) adds each layer's tactic and precision.

Written from the TensorRT Python API documentation (``tensorrt.IProfiler``, ``IEngineInspector``); it runs only
where TensorRT and a GPU exist (Jetson), so the host's tests skip it elsewhere.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

from .base import LayerProfiler
from .layer_events import layer_event
from .tensorrt_engine import inspector_layer_precision

_WRAPPERS = re.compile(r"\b(?:PWN|ForeignNode)\(|[()\[\]{}]")


def source_names(layer_name: str) -> List[str]:
    """The source-graph node names a TensorRT layer name mentions (``PWN(a + b) + c`` -> a, b, c)."""
    if layer_name.startswith("Reformatting CopyNode"):
        return []
    text = _WRAPPERS.sub(" ", layer_name)
    names = []
    for part in re.split(r"\s\+\s|,\s", text):
        part = part.strip()
        if part and part not in names:
            names.append(part)
    return names


def inspector_facts(info: Dict[str, Any]) -> Dict[str, Dict[str, str]]:
    """Layer name -> type, tactic and precision, from the engine inspector's JSON (DETAILED verbosity)."""
    facts = {}  # type: Dict[str, Dict[str, str]]
    for layer in info.get("Layers") or []:
        if not isinstance(layer, dict):
            continue
        precision = inspector_layer_precision(layer)
        tactic = layer.get("TacticName") or layer.get("TacticValue") or ""
        facts[str(layer.get("Name", ""))] = {"type": str(layer.get("LayerType", "")), "tactic": str(tactic),
                                             "precision": precision}
    return facts


def events(rows: List[Tuple[str, float]], facts: Dict[str, Dict[str, str]], provider: str) -> List[Dict[str, Any]]:
    """One inference's ``(layer, ms)`` reports as layer events, laid out one after the other."""
    out = []
    clock = 0.0
    for name, ms in rows:
        fact = facts.get(name, {})
        kind = fact.get("type") or ("Reformat" if name.startswith("Reformatting CopyNode") else "")
        out.append(layer_event(name, op_type=kind, impl=fact.get("tactic", ""), provider=provider,
                               precision=fact.get("precision", "unknown"), duration_us=ms * 1000.0,
                               original_names=source_names(name), start_us=clock))
        clock += ms * 1000.0
    return out


class TrtProfiler(LayerProfiler):
    """An ``IProfiler`` on the primary execution context; each ``record()`` closes one inference's reports."""

    trace_source = "sequential"

    def __init__(self, trt: Any, context: Any, facts: Dict[str, Dict[str, str]], provider: str) -> None:
        outer = self
        self._current = []  # type: List[Tuple[str, float]]
        self._runs = []  # type: List[List[Tuple[str, float]]]
        self._facts = facts
        self._provider = provider

        class _Recorder(trt.IProfiler):  # type: ignore[misc]  # a class from the tensorrt module
            def __init__(self) -> None:
                trt.IProfiler.__init__(self)

            def report_layer_time(self, layer_name: str, ms: float) -> None:
                outer._current.append((str(layer_name), float(ms)))

        self._recorder = _Recorder()  # kept referenced: TensorRT holds only a borrowed pointer
        context.profiler = self._recorder

    def start(self) -> None:
        self._current = []

    def record(self) -> None:
        self._runs.append(self._current)
        self._current = []

    def layers(self) -> List[List[Dict[str, Any]]]:
        return [events(rows, self._facts, self._provider) for rows in self._runs]

    def notes(self) -> List[str]:
        return ["TensorRT IProfiler: GPU time per engine layer as TensorRT reports it; layers run back to back, "
                "so the trace lays them out one after the other"]
