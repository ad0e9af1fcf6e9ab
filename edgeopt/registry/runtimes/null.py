"""The null runtime: every inference returns at once, so a run measures the harness's own overhead."""

from __future__ import annotations

from ..runtime_spec import RuntimeDescriptor

DESCRIPTOR = RuntimeDescriptor(
    name="null",
    display_name="null",
    auto_select=False,
    runs_model=False,  # no FLOPs, no GOP/s: the harness alone
)
