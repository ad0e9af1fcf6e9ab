"""Every result as cells of metric series: the one shape gates, ``compare``, the history and ranking can read
without asking which kind of model measured it.

A :class:`ResultCell` is one workload combination of a run (a one-pass benchmark has one, keyed ``""``; an LLM
bench one per prompt/gen/depth/batch/threads combination, keyed like ``"p128 g128 d0 b1 t0"``); each of its
:class:`MetricSeries` is one metric of the run's kind (:class:`~edgeopt.registry.kind_spec.MetricSpec` names it)
with its raw readings in run order and its summary (``p50``, ``p99``, ``mean``, or a single ``value``). A kind says
how its typed result becomes cells (:attr:`~edgeopt.registry.kind_spec.KindDescriptor.cells`); the one-pass kind's
function is :func:`tensor_cells`, here beside the result it reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from .result import BenchResult

_MIB = float(1 << 20)


class MetricSeries(BaseModel):
    """One metric of one cell: raw readings in run order (may be empty) and the summary reported for them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field(description="A MetricSpec name of the run's kind, e.g. latency_ms, tpot_ms.")
    unit: str = Field(description="The metric's unit, e.g. ms, tokens/s.")
    readings: tuple[float, ...] = Field(default=(), description="Raw readings in run order (empty: none kept).")
    summary: dict[str, float] = Field(default_factory=dict, description="p50 / p90 / p99 / mean, or value.")


class ResultCell(BaseModel):
    """One workload combination of a run and the metric series measured there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(description="'' for a one-pass run; an LLM cell's 'p128 g128 d0 b1 t0'.")
    axes: dict[str, int] = Field(default_factory=dict, description="The workload axes behind the key.")
    series: tuple[MetricSeries, ...] = Field(default=(), description="Its metrics, in the kind's order.")
    impossible: tuple[str, ...] = Field(default=(), description="Why the device's numbers for this cell cannot "
                                        "be true (then no comparison judges it); empty for a sound cell.")

    def series_of(self, metric: str) -> MetricSeries | None:
        """The series of ``metric``, or None when this cell has none."""
        return next((s for s in self.series if s.metric == metric), None)


def series(metric: str, unit: str, readings: Sequence[float] = (), **summary: float | None) -> MetricSeries | None:
    """A series from optional parts: None when it has neither readings nor a summary value."""
    values = tuple(float(v) for v in readings)
    kept = {k: float(v) for k, v in summary.items() if v is not None}
    return MetricSeries(metric=metric, unit=unit, readings=values, summary=kept) if values or kept else None


def tensor_cells(result: BenchResult) -> tuple[ResultCell, ...]:
    """A one-pass benchmark as its one cell: latency (raw samples when kept), throughput, memory, size, energy."""
    lat = result.latency_ms
    parts = (
        series("latency_ms", "ms", result.samples_ms or (), p50=lat.p50, p90=lat.p90, p95=lat.p95, p99=lat.p99,
               p999=lat.p999, mean=lat.mean),
        series("throughput_per_s", "inferences/s", value=result.throughput_ips),
        series("memory_mb", "MiB", value=result.memory_mb.peak),
        series("size_mb", "MiB", value=result.model.size_bytes / _MIB),
        series("energy_mj", "mJ", value=result.energy.energy_per_inference_mj if result.energy else None),
    )
    return (ResultCell(key="", series=tuple(p for p in parts if p is not None)),)
