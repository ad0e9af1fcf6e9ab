"""TensorRT engine: a serialized engine, specific to one GPU and TensorRT version (benchmarked, never made)."""

from __future__ import annotations

from ..format_spec import FormatDescriptor

DESCRIPTOR = FormatDescriptor(
    name="tensorrt_engine",
    summary="Serialized TensorRT engine (.engine / .plan), specific to one GPU and TensorRT version",
    suffixes=(".engine", ".plan"),
)
