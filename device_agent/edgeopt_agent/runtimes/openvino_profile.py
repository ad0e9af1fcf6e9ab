"""OpenVINO's performance counters, read back as per-layer events.

Compiled with ``PERF_COUNT: True``, an infer request's ``get_profiling_info()`` lists every node of the execution
graph for its last inference: ``node_name``, ``node_type``, ``exec_type`` (the kernel: ``jit_avx2_I8``,
``brgconv_avx512_1x1_f32``, ``ref_any``), ``real_time`` and ``status`` (``EXECUTED``, ``NOT_RUN`` for fused or
in-place nodes). The runtime model (``get_runtime_model()``) adds, per execution node, ``originalLayersNames``:
the source-graph nodes it covers (empty for the reorders and converts the plugin inserted), and
``runtimePrecision``. OpenVINO gives no start times, so a trace lays layers out one after the other.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

from .base import LayerProfiler
from .layer_events import layer_event, precision_name

_Row = Tuple[str, str, str, float, bool]  # name, node type, exec type, microseconds, executed


def rt_value(info: Any, key: str) -> str:
    """A runtime-model rt_info value as text ('' when absent), across OpenVINO versions."""
    try:
        value = info[key]
    except Exception:  # absent key: RTMap raises its own error types
        return ""
    for read in (lambda v: v.astype(str), lambda v: v.value):
        try:
            return str(read(value))
        except Exception:
            continue
    return str(value)


def static_facts(runtime_model: Any) -> Dict[str, Dict[str, str]]:
    """Execution-graph node name -> ``originalLayersNames``, ``runtimePrecision``, ``layerType``."""
    facts = {}  # type: Dict[str, Dict[str, str]]
    for op in runtime_model.get_ordered_ops():
        info = op.get_rt_info()
        facts[str(op.get_friendly_name())] = {key: rt_value(info, key) for key in
                                              ("originalLayersNames", "runtimePrecision", "layerType")}
    return facts


def events(rows: List[_Row], facts: Dict[str, Dict[str, str]], device: str) -> List[Dict[str, Any]]:
    """One inference's rows as layer events, laid out one after the other (no start times in OpenVINO)."""
    out = []
    clock = 0.0
    for name, node_type, exec_type, micros, executed in rows:
        fact = facts.get(name, {})
        names = [n for n in fact.get("originalLayersNames", "").split(",") if n]
        precision = precision_name(fact.get("runtimePrecision", ""))
        if precision == "unknown":
            precision = precision_name(exec_type)
        out.append(layer_event(name, op_type=fact.get("layerType") or node_type, impl=exec_type, provider=device,
                               precision=precision, duration_us=micros, original_names=names if fact else [name],
                               executed=executed, start_us=clock))
        clock += micros
    return out


class OvProfiler(LayerProfiler):
    """Keeps each recorded inference's profiling rows; joins them with the runtime model at the end."""

    trace_source = "sequential"

    def __init__(self, request: Callable[[], Any], compiled: Any, device: str) -> None:
        self._request = request
        self._compiled = compiled
        self._device = device
        self._runs = []  # type: List[List[_Row]]

    def record(self) -> None:
        rows = []
        for p in self._request().get_profiling_info():
            executed = str(p.status).rsplit(".", 1)[-1] == "EXECUTED"
            rows.append((str(p.node_name), str(p.node_type), str(p.exec_type), p.real_time.total_seconds() * 1e6,
                         executed))
        self._runs.append(rows)

    def layers(self) -> List[List[Dict[str, Any]]]:
        try:
            facts = static_facts(self._compiled.get_runtime_model())
        except Exception:  # a plugin without a runtime model: names stay the execution graph's
            facts = {}
        return [events(rows, facts, self._device) for rows in self._runs]

    def notes(self) -> List[str]:
        return ["OpenVINO performance counters (PERF_COUNT): real time per execution-graph node, microsecond "
                "resolution; no start times, so the trace lays layers out one after the other"]
