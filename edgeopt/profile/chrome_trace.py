"""One profiled inference as a Chrome trace (``chrome://tracing``, https://ui.perfetto.dev): a complete event
(``ph: "X"``) per layer, with its ONNX nodes, kernel and precision as arguments. Several profiles (``--vs``) become
separate processes of one trace."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_text
from .schema import ProfileResult


def trace_events(p: ProfileResult, pid: int = 1, label: str = "") -> list[dict[str, Any]]:
    """Trace events of ``p``'s median profiled inference (timestamps in microseconds)."""
    layers = {layer.kernel: layer for layer in p.layers}
    name = label or f"{p.model.path} ({p.runtime.get('name')})"
    events: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}]
    for e in p.trace:
        layer = layers.get(e.kernel)
        args: dict[str, Any] = {"op_type": e.op_type}
        if layer is not None:
            args.update(onnx_nodes=layer.onnx_nodes, kernel=layer.impl, precision=layer.precision.value,
                        median_ms=layer.median_ms, origin=layer.origin.value)
        events.append({"name": e.kernel, "cat": e.op_type or "layer", "ph": "X", "ts": e.start_us,
                       "dur": e.duration_us, "pid": pid, "tid": 1, "args": args})
    return events


def chrome_trace(profiles: Sequence[ProfileResult], labels: Sequence[str] = ()) -> dict[str, Any]:
    """A trace document with one process per profile."""
    events: list[dict[str, Any]] = []
    for i, p in enumerate(profiles):
        events.extend(trace_events(p, pid=i + 1, label=labels[i] if i < len(labels) else ""))
    sources = sorted({p.trace_source for p in profiles})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"generator": "edgeopt profile", "start_times": ", ".join(sources)}}


def write_chrome_trace(path: Path, profiles: Sequence[ProfileResult], labels: Sequence[str] = ()) -> Path:
    """Write :func:`chrome_trace` atomically to ``path``."""
    atomic_write_text(Path(path), json.dumps(chrome_trace(profiles, labels)))
    return Path(path)
