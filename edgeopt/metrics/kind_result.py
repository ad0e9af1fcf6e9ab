"""The result of a model kind measured by the generic engine (a plug-in kind: neither the one-pass nor the
generative built-in): what ran where, the workload, and the run as cells of metric series in the kind's own
metrics, each value checked against its :class:`~edgeopt.registry.kind_spec.MetricSpec` physics.

The two built-in kinds keep their own result types (``BenchResult``, ``LlmBenchResult``); a third kind needs no
result type of its own: its ``raw_cells`` hook turns the agent's raw run into cells and this model carries them
through bench, the history, compare, qualify and the reports.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..registry.kind_spec import KindDescriptor
from .cells import ResultCell
from .result import DeploymentRef, ModelInfo, RuntimeInfo, Settings


class KindBenchResult(BaseModel):
    """One generic-engine benchmark (``edgeopt bench MODEL`` of a plug-in kind, ``--json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["kind_bench"] = "kind_bench"
    model_kind: str = Field(description="The kind's name (its KindDescriptor).")
    edgeopt_version: str
    model: ModelInfo
    model_format: str = Field(description="The model's format (a registered format of this kind).")
    target: str
    runner: str = Field(description="local or ssh:<host>.")
    runtime: RuntimeInfo
    settings: Settings = Field(description="The measurement settings the agent ran with (echoed).")
    workload: dict[str, Any] = Field(default_factory=dict, description="The kind's workload settings (its model, "
                                     "validated).")
    started_at: str = Field(description="UTC ISO-8601 time the run started.")
    timed_s: float = Field(description="Wall time of the timed phase, s.")
    truncated: bool = Field(description="True when the watchdog ended the timed phase early.")
    cells: tuple[ResultCell, ...] = Field(description="The run as cells of metric series in the kind's metrics.")
    valid: bool
    invalid_reasons: list[str]
    warnings: list[str] = Field(default_factory=list)
    environment: dict[str, Any] = Field(default_factory=dict, description="Machine and library facts of the device.")
    target_mismatch: list[str] = Field(default_factory=list, description="How the device's hardware differs from "
                                       "its target's (empty: it matches).")
    deployment: DeploymentRef | None = Field(default=None, description="The deployment it ran (its files, exactly "
                                             "its settings), None for a plain model.")

    def without_readings(self) -> KindBenchResult:
        """A copy with every series' raw readings dropped (they stay in the history)."""
        cells = tuple(c.model_copy(update={"series": tuple(s.model_copy(update={"readings": ()})
                                                           for s in c.series)}) for c in self.cells)
        return self.model_copy(update={"cells": cells})


def checked_cells(kind: KindDescriptor, cells: tuple[ResultCell, ...]) -> tuple[tuple[ResultCell, ...], list[str]]:
    """``cells`` with each cell's impossible values named (``ResultCell.impossible``), and every such reason: a
    metric the kind does not declare, a unit other than its own, a reading or summary value its physics rules out
    (:meth:`MetricSpec.admits`; the message is built for the first bad value of a series only)."""
    out: list[ResultCell] = []
    reasons: list[str] = []
    for cell in cells:
        bad: list[str] = []
        for s in cell.series:
            try:
                spec = kind.metric(s.metric)
            except KeyError as exc:
                bad.append(str(exc.args[0]))
                continue
            if s.unit != spec.unit:
                bad.append(f"{s.metric} is in {s.unit!r}, the kind's unit is {spec.unit!r}")
            wrong = next((v for v in (*s.readings, *s.summary.values()) if not spec.admits(v)), None)
            if wrong is not None:
                bad.append(str(spec.problem(wrong)))
        where = f"cell {cell.key!r}: " if cell.key else ""
        reasons += [f"{where}{b}" for b in bad]
        out.append(cell.model_copy(update={"impossible": (*cell.impossible, *bad)}) if bad else cell)
    return tuple(out), reasons
