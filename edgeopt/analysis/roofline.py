"""Roofline bound of one inference on a target: the best latency its peak compute and bandwidth allow.

``time >= max(ops / peak_ops_per_s, bytes / bandwidth)``. The bound is optimistic by construction: it assumes
peak throughput on every op, perfect overlap of compute and memory traffic, and that each tensor crosses DRAM
exactly once. Real latency is higher; the ratio measured/bound shows how much a runtime leaves on the table.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..enums import Bound, Precision
from ..targets.schema import Target


class Roofline(BaseModel):
    """Roofline numbers of one model on one target at one precision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = Field(description="Target name.")
    precision: Precision = Field(description="Precision whose peak rate was used.")
    peak_ops_per_s: float = Field(description="Peak arithmetic rate used, in operations per second.")
    peak_source: str = Field(description="Target field and source note of the peak rate.")
    bandwidth_bytes_per_s: float = Field(description="Peak DRAM bandwidth, in bytes per second.")
    bandwidth_source: str = Field(description="Source note of the bandwidth.")
    ridge_point: float = Field(description="Arithmetic intensity (ops/byte) where the two roofs meet.")
    arithmetic_intensity: float = Field(description="Model's ops per byte moved.")
    bound: Bound = Field(description="compute if intensity >= ridge point, else memory.")
    compute_time_ms: float = Field(description="ops / peak rate, in ms.")
    memory_time_ms: float = Field(description="bytes / bandwidth, in ms.")
    lower_bound_latency_ms: float = Field(description="max(compute_time_ms, memory_time_ms).")


def roofline(flops: int, bytes_moved: int, target: Target, precision: Precision) -> Roofline | None:
    """Place a model on ``target``'s roofline.

    Args:
        flops: operations per inference (FLOPs, or integer ops for quantized models).
        bytes_moved: bytes crossing DRAM per inference (weights + activations).
        target: the device; its peak rate for ``precision`` (or a wider type) and bandwidth are used.
        precision: the precision the model runs in (see :func:`.precision.model_precision`).

    Returns:
        The roofline, or ``None`` when the target states no peak rate or no bandwidth (e.g. an undetected
        ``local`` target).
    """
    peak = target.peak_ops_per_s(precision)
    bandwidth = target.memory_bandwidth_gbps
    if peak is None or bandwidth is None:
        return None
    peak_ops, peak_source = peak
    bytes_per_s = bandwidth.value * 1e9
    intensity = flops / bytes_moved if bytes_moved else 0.0
    ridge = peak_ops / bytes_per_s
    compute_ms = flops / peak_ops * 1e3
    memory_ms = bytes_moved / bytes_per_s * 1e3
    return Roofline(
        target=target.name,
        precision=precision,
        peak_ops_per_s=peak_ops,
        peak_source=peak_source,
        bandwidth_bytes_per_s=bytes_per_s,
        bandwidth_source=f"memory_bandwidth_gbps: {bandwidth.source}",
        ridge_point=ridge,
        arithmetic_intensity=intensity,
        bound=Bound.COMPUTE if intensity >= ridge else Bound.MEMORY,
        compute_time_ms=compute_ms,
        memory_time_ms=memory_ms,
        lower_bound_latency_ms=max(compute_ms, memory_ms),
    )
