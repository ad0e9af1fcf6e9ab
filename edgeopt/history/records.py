"""Typed rows of the history store: one :class:`RunRecord` per measured run, one :class:`Baseline` per name/device."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError

RunKind = Literal["bench", "qualify", "sweep"]


class HistoryError(InputError):
    """The history file cannot be opened or written, or a run / baseline reference does not exist."""


class RunRecord(BaseModel):
    """One stored run (raw samples are fetched separately: :meth:`HistoryStore.samples_ms`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(description="Run id, used by compare and baseline set.")
    kind: RunKind = Field(description="What recorded it: bench, qualify or sweep.")
    created_at: str = Field(description="UTC ISO-8601 time the run was recorded.")
    started_at: str | None = Field(description="UTC ISO-8601 time the measurement started.")
    model_name: str = Field(description="Model file stem.")
    model_path: str
    model_sha256: str
    model_size_bytes: int
    target: str = Field(description="Target name (device class).")
    device: str = Field(description="Where it ran: 'local', an inventory device name, or user@host:port.")
    runner: str
    runtime: str
    runtime_version: str
    edgeopt_version: str
    valid: bool = Field(description="False when the run was too short for its percentile or truncated.")
    verdict: str | None = Field(description="pass / fail for qualify runs and budgeted bench runs, else null.")
    latency_ms_p50: float
    latency_ms_p99: float
    latency_ms_mean: float
    throughput_ips: float
    memory_mb_peak: float | None
    energy_mj: float | None = Field(description="Energy per inference, mJ.")
    energy_source: str | None = Field(description="measured or estimate.")
    samples_count: int = Field(description="Raw latency samples stored (0: none were kept).")
    group_id: str | None = Field(description="Runs recorded together (one qualify call over several devices).")
    label: str | None = Field(description="Free text, e.g. the qualify spec name.")
    seed: int
    settings: dict[str, Any]
    environment: dict[str, Any]
    versions: dict[str, Any]
    baselines: list[str] = Field(default_factory=list, description="Baseline names pointing at this run.")
    model_kind: str | None = Field(default=None, exclude=True, description="The kind of model measured (tensor, "
                                   "generative); left out of --json. None: a row written without it.")


class Baseline(BaseModel):
    """A named reference run for one device (``edgeopt baseline set RUN --name release-1.2``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    device: str
    run_id: int
    created_at: str
