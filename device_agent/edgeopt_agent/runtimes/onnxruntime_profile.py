"""ONNX Runtime's session profiler, read back as per-layer events.

With ``SessionOptions.enable_profiling`` the session writes a Chrome-trace JSON when profiling ends: one
``model_run`` event (category ``Session``) per inference and one ``<node>_kernel_time`` event (category ``Node``)
per kernel run, whose ``args`` hold ``op_name``, ``provider``, ``node_index`` and the input types. The file covers
every inference of the session, warm-up included, so only the last ``record()``-ed runs are kept. Kernel names are
ORT's node names after graph optimization: a fused node keeps a source node's name or an output tensor's name with
a suffix (``conv1_token_3``, ``relu1_nchwc``); the host maps them back to the ONNX graph.

Pure Python: importable and testable without onnxruntime.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from typing import Any, Dict, List

from .base import LayerProfiler
from .layer_events import layer_event, precision_name

_KERNEL_SUFFIX = "_kernel_time"
# Kernels that compute on integers whatever their input types say (the float inputs are scales).
_INTEGER_KERNELS = ("QLinear", "QGemm", "ConvInteger", "MatMulInteger", "DynamicQuantize", "QAttention",
                    "QEmbed", "MatMulNBits", "QOrdered")


def kernel_precision(op_name: str, input_types: List[str]) -> str:
    """The precision a kernel computes in: integer kernels by op name, others by their first input's type."""
    if op_name.startswith(_INTEGER_KERNELS):
        return "int4" if op_name == "MatMulNBits" else "int8"
    if op_name == "DequantizeLinear" and input_types:  # reads integers, writes floats: it is a conversion
        return precision_name(input_types[0])
    return precision_name(input_types[0]) if input_types else "unknown"


def _input_types(args: Dict[str, Any]) -> List[str]:
    out = []
    for entry in args.get("input_type_shape") or []:
        if isinstance(entry, dict) and entry:
            out.append(str(next(iter(entry))))
    return out


def _event(e: Dict[str, Any], run_start: float) -> Dict[str, Any]:
    args = e.get("args") or {}
    name = str(e.get("name", ""))[: -len(_KERNEL_SUFFIX)]
    op = str(args.get("op_name", ""))
    try:
        index = int(args["node_index"])  # type: Any
    except (KeyError, TypeError, ValueError):
        index = None
    return layer_event(name, op_type=op, impl=op, provider=str(args.get("provider", "")),
                       precision=kernel_precision(op, _input_types(args)), duration_us=float(e.get("dur", 0)),
                       node_index=index, start_us=float(e.get("ts", 0)) - run_start)


def split_runs(events: List[Dict[str, Any]], keep_last: int) -> List[List[Dict[str, Any]]]:
    """Kernel events of the last ``keep_last`` ``model_run`` events, one list per run, in execution order."""
    runs = sorted((e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"),
                  key=lambda e: float(e.get("ts", 0)))
    kernels = sorted((e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith(_KERNEL_SUFFIX)),
                     key=lambda e: float(e.get("ts", 0)))
    kept = runs[-keep_last:] if keep_last > 0 else []
    out = []  # type: List[List[Dict[str, Any]]]
    k = 0
    for run in kept:
        start = float(run.get("ts", 0))
        end = start + float(run.get("dur", 0))
        while k < len(kernels) and float(kernels[k].get("ts", 0)) < start:
            k += 1
        layers = []
        while k < len(kernels) and float(kernels[k].get("ts", 0)) <= end:
            layers.append(_event(kernels[k], start))
            k += 1
        out.append(layers)
    return out


class OrtProfiler(LayerProfiler):
    """Owns the temp directory the session writes its trace into; ``layers()`` ends profiling and parses it."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="edgeopt-ortprof-")
        self.prefix = os.path.join(self._dir, "ort")
        self._session = None  # type: Any
        self._recorded = 0

    def attach(self, session: Any) -> None:
        self._session = session

    def record(self) -> None:
        self._recorded += 1

    def cleanup(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def layers(self) -> List[List[Dict[str, Any]]]:
        try:
            path = self._session.end_profiling()
            with open(path) as fh:
                events = json.load(fh)
        finally:
            self.cleanup()
        if isinstance(events, dict):  # some builds wrap the list: {"traceEvents": [...]}
            events = events.get("traceEvents") or []
        return split_runs(list(events), self._recorded)

    def notes(self) -> List[str]:
        return ["onnxruntime session profiling: times are per kernel, microsecond resolution; the session records "
                "every inference (warm-up too) and only the profiled iterations are kept"]

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.cleanup()
