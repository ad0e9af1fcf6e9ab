"""The ``metric`` gate of a plug-in model kind's spec, and the spec checks of such a spec.

A metric gate names one of the kind's declared metrics (its KindDescriptor's ``metrics``) and a statistic: a
percentile the metric declares, computed from each cell's raw readings (nearest rank, so a value that was really
observed), ``mean``, or ``value``. The rules of every other gate carry over: it holds in **every** cell (the worst
cell decides and the verdict names it), a cell without the value fails, a run the watchdog cut or a cell with
impossible values cannot pass, and a percentile the readings cannot support (p99 needs 100) fails as INVALID
whatever the number.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np

from ..bench.kind_bench import parse_workload
from ..errors import InputError
from ..metrics.cells import ResultCell
from ..metrics.kind_result import KindBenchResult
from ..metrics.latency import PERCENTILES, required_samples
from ..registry import KindDescriptor
from .gate_rows import worst_row
from .gate_spec import GATE_KINDS, MetricGate
from .result import GateResult, GateStatus
from .spec import QualifySpec

_NOT_FOR_PLUGINS = ("recipe", "calib", "optimized", "llm")


def metric_gates(spec: QualifySpec) -> list[tuple[str, MetricGate]]:
    """The spec's metric gates as (metric name, gate), in spec order."""
    return list(spec.gates.metric.root.items()) if spec.gates.metric is not None else []


def gate_name(name: str, g: MetricGate) -> str:
    """The row's gate name (one per metric, as a JUnit test case): ``metric:rtf:p99``."""
    return f"metric:{name}:{g.stat}"


def allowed_stats(kind: KindDescriptor, metric: str) -> tuple[str, ...]:
    """The statistics a gate may ask of ``metric``: its declared percentiles and ``mean``, or ``value``."""
    spec = kind.metric(metric)
    return (*spec.percentiles, "mean") if spec.percentiles else ("value",)


def generic_problem(spec: QualifySpec, kind: KindDescriptor, resolve: Callable[[str], Path] | None = None,
                    ) -> tuple[tuple[str, ...], str] | None:
    """``(key, message)`` of what a plug-in kind's spec cannot have (a gate the kind does not take, a metric or
    statistic it does not declare, a bad workload, a recipe), or None: the generic engine's ``qualify_check``
    (``resolve``, a spec path -> a file system path, is not needed here)."""
    allowed = tuple(g for g in kind.gates if g in GATE_KINDS)
    for gate in spec.gates.active():
        if gate not in allowed:
            return ("gates", gate), (f"gate '{gate}' does not apply: the model is {kind.model_word} (kind "
                                     f"{kind.name}); gates here: {', '.join(allowed) or 'none'} (docs/qualify.md)")
    for name, g in metric_gates(spec):
        names = [m.name for m in kind.metrics]
        if name not in names:
            return ("gates", "metric", name), (f"kind {kind.name} has no metric {name!r}; its metrics: "
                                               f"{', '.join(names)}")
        stats = allowed_stats(kind, name)
        if g.stat not in stats:
            return ("gates", "metric", name, "stat"), (f"{name} has no statistic {g.stat!r}: use one of "
                                                       f"{', '.join(stats)}")
    for key in _NOT_FOR_PLUGINS:
        if getattr(spec, key):
            return (key,), (f"'{key}' does not apply to a {kind.name} model (a plug-in kind): it is qualified as it "
                            "is; drop it")
    try:
        parse_workload(kind, spec.workload, where="workload")
    except InputError as exc:
        return ("workload",), str(exc)
    return None


def _cell_value(name: str, g: MetricGate, cell: ResultCell) -> tuple[float | None, str | None]:
    """The gated statistic of one cell, and why it cannot be judged (None: it can)."""
    s = cell.series_of(name)
    if s is None:
        return None, None
    if cell.impossible:
        return None, f"cell {cell.key or '-'} holds impossible values ({cell.impossible[0]})"
    q = PERCENTILES.get(g.stat)
    if q is not None and s.readings:
        need = required_samples(q)
        if len(s.readings) < need:
            return None, (f"INVALID: {g.stat} needs at least {need} readings per cell and cell {cell.key or '-'} has "
                          f"{len(s.readings)}; raise measure.iterations")
        return float(np.percentile(np.asarray(s.readings), q * 100.0, method="inverted_cdf")), None
    return s.summary.get(g.stat), None


def metric_gate(name: str, g: MetricGate, result: KindBenchResult, kind: KindDescriptor, device: str) -> GateResult:
    """One metric gate on one device's result: the worst cell against the bound (:func:`.gate_rows.worst_row`)."""
    comparison: Literal["<=", ">="] = "<=" if g.max is not None else ">="
    limit = float(g.max if g.max is not None else g.min)  # type: ignore[arg-type]  # one of them is set
    values: dict[str, float | None] = {}
    problem = "the run was stopped by the watchdog and is invalid; raise measure.max_duration_s" \
        if result.truncated else None
    for cell in result.cells:
        values[cell.key or "-"], why = _cell_value(name, g, cell)
        problem = problem or why
    return worst_row(gate_name(name, g), device, values, limit, comparison, kind.metric(name).unit,
                     f"{name} {g.stat}", problem)


def error_rows(spec: QualifySpec, device: str, message: str) -> list[GateResult]:
    """The rows of a device that could not run: every metric gate an error."""
    return [GateResult(gate=gate_name(name, g), device=device, status=GateStatus.ERROR, measured=None,
                       threshold=float(g.max if g.max is not None else g.min),  # type: ignore[arg-type]
                       comparison="<=" if g.max is not None else ">=", unit="", metric=f"{name} {g.stat}",
                       detail=f"device error: {message}") for name, g in metric_gates(spec)]
