"""The qualification result: per device, the benchmark, every gate's verdict, costs; plus retention and the
reproducibility fingerprint. ``result.json`` is this model (``SCHEMA_VERSION``; bump it on incompatible change).
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..bench.llm.result import LlmBenchResult
from ..errors import ExitCode
from ..history.compare import SampleComparison
from ..metrics.kind_result import KindBenchResult
from ..metrics.result import BenchResult
from .costs import CostEstimate

SCHEMA_VERSION = "1.0"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GateStatus(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the device run failed: the gate could not be evaluated


class GateResult(_Frozen):
    """One gate on one device."""

    gate: str = Field(description="Gate kind (latency, fps, deadline_miss, memory, ...).")
    device: str = Field(description="Device label.")
    status: GateStatus
    measured: float | None = Field(description="The measured value (None when unavailable).")
    threshold: float = Field(description="The gate's limit.")
    comparison: Literal["<=", ">="] = Field(description="measured must be <= or >= threshold.")
    unit: str = Field(description="Unit of measured and threshold.")
    metric: str = Field(description="What was measured, e.g. 'latency p99'.")
    detail: str = Field(description="Why it passed or failed, in one line.")
    estimate: bool = Field(default=False, description="True when the measured value is an ESTIMATE (energy from TDP).")


class RetentionResult(_Frozen):
    """metric(candidate) / metric(reference) on the eval samples."""

    metric: str = Field(description="accuracy or top1_agreement (eval.metric auto), or the sweep metric with its "
                        "parameters, e.g. 'detection(axis=1, score_threshold=0.25, iou_threshold=0.5)'.")
    reference_value: float | None = Field(description="Metric of the reference model (1.0 for agreement).")
    candidate_value: float | None = Field(description="Metric of the qualified model.")
    retention: float | None = Field(description="candidate_value / reference_value; None when not computable.")
    samples: int
    data: str = Field(description="Where the samples came from: a file, or 'random' (indicative only).")
    evaluated_on: str = Field(description="Where the outputs were computed, e.g. host-onnxruntime.")
    reference_path: str
    candidate_path: str
    notes: list[str] = Field(default_factory=list)
    cannot_tell: str | None = Field(
        default=None, description="Set when the eval data cannot tell models apart (the reference predicts one "
        "class for every sample, a constant map, a constant output): why, in one line; the gate's verdict is then "
        "'untested by this data'.")


class ModelInfo(_Frozen):
    """The reference model and the model file that was qualified (the same file without recipe/optimized)."""

    reference_path: str
    reference_sha256: str
    qualified: dict[str, str] = Field(description="Qualified model file per target name (recipes are per target).")
    qualified_sha256: dict[str, str]
    recipe: str | None
    source: Literal["model", "optimized", "recipe"]
    kind: Literal["onnx", "llm", "plugin"] = Field(default="onnx", description="llm: the model is an LLM folder "
                                                   "(hashes over its files); plugin: a plug-in kind's model.")


class RegressionInfo(_Frozen):
    """The regression gate's comparison against the baseline run."""

    baseline: str
    baseline_run: int | None
    comparison: SampleComparison | None
    notes: list[str] = Field(default_factory=list,
                             description="How the run differs from the baseline run (as `edgeopt compare` says).")
    not_comparable: list[str] = Field(default_factory=list,
        description="The notes that make the comparison meaningless (model hash, runtime or target differ and the "
        "gate's allow_different does not allow it): the gate fails on them.")


class DeviceResult(_Frozen):
    """Everything measured and decided on one device."""

    label: str = Field(description="Device label (reports, JUnit, history).")
    target: str
    runner: str | None
    status: Literal["ok", "error"]
    error: str | None = Field(default=None, description="Why the device run failed (status error).")
    error_kind: str | None = Field(default=None, description="The failure's kind (status error): unreachable, "
                                   "device, deadline, trust (a host key refused), ... as in fleet rows.")
    passed: bool
    bench: BenchResult | None = Field(default=None, description="The timed run (with raw samples).")
    paced: BenchResult | None = Field(default=None, description="The frame-paced run of the deadline_miss gate.")
    llm: LlmBenchResult | None = Field(default=None, description="An LLM spec's generative bench (cells with their "
                                       "raw readings; bench is null then).")
    kind_bench: KindBenchResult | None = Field(default=None, exclude_if=lambda v: v is None, description="A "
                                               "plug-in kind's bench (cells of its own metrics); absent otherwise.")
    gates: list[GateResult]
    costs: CostEstimate | None = None
    regression: RegressionInfo | None = None
    history_run_id: int | None = Field(default=None, description="Run id in the history (when recorded).")


class SweepPoint(_Frozen):
    """One point of a sweep, for the Pareto chart (latency vs retention)."""

    label: str
    latency_ms: float = Field(gt=0)
    retention: float = Field(ge=0)


class QualifyResult(_Frozen):
    """The outcome of ``edgeopt qualify`` (also ``result.json``)."""

    schema_version: str = SCHEMA_VERSION
    kind: Literal["qualify"] = "qualify"
    edgeopt_version: str
    name: str
    description: str
    spec_path: str
    spec_sha256: str
    profiles: list[str] = Field(description="Profile files applied (extends).")
    spec: dict[str, Any] = Field(description="The validated spec, profiles merged.")
    started_at: str
    seconds: float
    passed: bool = Field(description="Every gate passed on every device.")
    exit_code: int = Field(description="0 all gates pass, 1 a gate failed, 3 no device could run (4: every host key "
                                       "refused).")
    model: ModelInfo
    retention: dict[str, RetentionResult] = Field(description="Retention per target name (when gated).")
    devices: list[DeviceResult]
    sweep: list[SweepPoint] | None = None
    fingerprint: dict[str, Any] = Field(description="What it takes to reproduce: hashes, versions, settings, seed.")
    history_db: str | None
    group_id: str = Field(description="Ties the history runs of this qualification together.")
    report_dir: str | None
    reports: dict[str, str] = Field(default_factory=dict, description="Report format -> file.")
    warnings: list[str] = Field(default_factory=list)

    def gate_results(self) -> list[GateResult]:
        return [g for d in self.devices for g in d.gates]

    def without_samples(self) -> QualifyResult:
        """A copy with every raw latency list set to null (they stay in result.json and the history)."""
        devices = [d.model_copy(update={"bench": d.bench.model_copy(update={"samples_ms": None})}) if d.bench else d
                   for d in self.devices]
        devices = [d.model_copy(update={"llm": d.llm.without_samples()}) if d.llm else d for d in devices]
        devices = [d.model_copy(update={"kind_bench": d.kind_bench.without_readings()}) if d.kind_bench else d
                   for d in devices]
        return self.model_copy(update={"devices": devices})


def exit_code_for(devices: list[DeviceResult]) -> int:
    """3 when every device errored (none could run; 4 when every one refused its host key), else 1 when a gate
    failed or a device errored, else 0.

    One dead board among many does not hide the others' verdicts: its gates are errors (exit 1) and the result's
    warnings name it (docs/exit-codes.md).
    """
    if devices and all(d.status == "error" for d in devices):
        trust = all(d.error_kind == "trust" for d in devices)  # every host key refused: a trust decision (exit 4)
        return int(ExitCode.TRUST if trust else ExitCode.DEVICE)
    if any(not d.passed for d in devices):
        return int(ExitCode.GATE_FAILED)
    return int(ExitCode.OK)
