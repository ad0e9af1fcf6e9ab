"""The deployment record (``deployment.json``): files, runtime, settings, machine facts and what was measured."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

# CPU features that change a runtime's kernels, and so both its speed and its accuracy: OpenVINO runs FP32 in
# bf16 by default on AVX512_BF16/AMX; onnxruntime and OpenVINO use VNNI INT8 kernels (and reduce_range without);
# fp16 arithmetic where the CPU has it. A deployment records which of these the measuring machine had.
DECISION_CPU_FLAGS: tuple[str, ...] = (
    "avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8", "amx_tile",
    "avx512_fp16", "f16c", "asimd", "asimddp", "fphp", "asimdhp", "bf16", "i8mm",
)


def decision_cpu_flags(flags: Iterable[str]) -> list[str]:
    """The flags among ``flags`` that a runtime's precision and speed depend on (sorted, lower case)."""
    wanted = set(DECISION_CPU_FLAGS)
    return sorted({f.lower() for f in flags} & wanted)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeployedFile(_Frozen):
    """One file of the deployment, relative to the folder holding ``deployment.json``."""

    path: str = Field(description="Relative path (POSIX separators) inside the deployment folder.")
    sha256: str = Field(description="SHA-256 of the file's bytes.")
    size_bytes: int = Field(ge=0, description="File size, bytes.")
    role: Literal["model", "companion"] = Field(
        description="'model': the file a runtime loads; 'companion': a file it reads beside it (IR .bin, external "
                    "data).")


class DeploymentMeasured(_Frozen):
    """What the sweep (or qualify) measured with exactly these files and settings."""

    target: str = Field(description="Target the numbers were measured on (edgeopt targets).")
    device: str | None = Field(default=None, description="Inventory device name, when measured over SSH.")
    cpu: str = Field(default="", description="CPU model string the agent reported.")
    metric: str = Field(description="Accuracy metric of the retention (docs/sweep.md).")
    min_retention: float = Field(description="Retention threshold the level was chosen against.")
    retention: float = Field(description="Retention measured in the sweep.")
    latency_ms: float = Field(description="p50 latency, ms (median of round medians when ranked).")
    latency_ms_low: float | None = Field(default=None, description="Lower bound of its 95 % interval, ms.")
    latency_ms_high: float | None = Field(default=None, description="Upper bound of its 95 % interval, ms.")
    latency_rounds: int = Field(default=0, ge=0, description="Interleaved rounds behind latency_ms (0: one run).")
    size_bytes: int = Field(ge=0, description="Model file(s) size, bytes.")
    eval_samples: int = Field(default=0, ge=0, description="Evaluation samples behind the retention.")
    decode_tokens_per_s: float | None = Field(default=None, description="LLM folders: decode tokens/s of the "
                                              "sweep's bench cell (latency_ms is then its TPOT p50).")
    ttft_ms: float | None = Field(default=None, description="LLM folders: time to first token p50, ms.")


class ShippedCheck(_Frozen):
    """The retention re-computed from the shipped files alone, and with the runtime's plain defaults."""

    retention_as_shipped: float | None = Field(
        description="Retention from a fresh agent that read only the files and deployment.json.")
    retention_with_defaults: float | None = Field(
        description="Retention with the runtime's defaults (no runtime options): what a plain load gives.")
    defaults_pass: bool | None = Field(description="Whether the defaults still meet the threshold.")
    note: str | None = Field(default=None, description="One line, e.g. 'needs inference_precision=f32: with "
                                                       "OpenVINO's defaults 0.970 < 0.99'.")
    retention_measured: float | None = Field(
        default=None, description="The sweep's retention of this level, which the shipped one is compared with "
                                  "(null: a check written before this field).")
    tolerance: float | None = Field(
        default=None, description="How far retention_as_shipped may sit from retention_measured and still pass.")
    passed: bool | None = Field(
        default=None, description="retention_as_shipped is within tolerance of retention_measured: the files alone "
                                  "give what was measured (null: not compared, a check written before this field).")
    files: tuple[DeployedFile, ...] = Field(
        default=(), description="The files the check re-scored, each hashed just before it ran (empty: a check "
                                "written before this field).")


class LayerRepair(_Frozen):
    """What the INT8 search did to one layer of the config it chose, and why (docs/sweep.md, repairs)."""

    node: str = Field(description="Graph node name ('*': the whole model, e.g. a calibration method for all).")
    repair: str = Field(description="'range:<method>' (an input's range from that calibration method), "
                        "'calibration:<method>' (every activation), 'nncf:<repair>' (NNCF's), 'float' (kept in float).")
    tensors: list[str] = Field(default_factory=list, description="The activation tensors the repair changed.")
    why: str = Field(description="One line: the host retention it gave, or why nothing cheaper kept the threshold.")


class Deployment(_Frozen):
    """Everything needed to run what was measured, and the numbers it was measured at (``deployment.json``)."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="Format version of deployment.json.")
    kind: Literal["edgeopt-deployment"] = "edgeopt-deployment"
    name: str = Field(description="Level name, e.g. 'int8-search/openvino'.")
    recipe: str = Field(description="Recipe that made the artifact ('fp32': the original model).")
    model: str = Field(description="Relative path of the file the runtime loads (one of ``files``); for an LLM "
                                   "folder format, the file that marks the folder (genai_config.json, "
                                   "openvino_model.xml): the runtime loads the folder holding it.")
    format: str = Field(description="Model format (edgeopt's format names: onnx, openvino_ir, ...).")
    files: tuple[DeployedFile, ...] = Field(description="Every file shipped, with its hash.")
    runtime: str = Field(description="Agent runtime name.")
    runtime_version: str = Field(description="Runtime version it was measured with.")
    runtime_options: dict[str, Any] = Field(
        default_factory=dict, description="Every runtime option in effect (precision hint, providers, graph "
                                          "optimisation level...): applied as is when the deployment is loaded.")
    runtime_reported: dict[str, Any] = Field(
        default_factory=dict, description="What the agent reported the runtime ran with when it was measured "
                                          "(providers used, inference precision, performance hint...): facts, "
                                          "not settings; empty when not reported.")
    threads: int = Field(default=0, ge=0, description="Intra-op threads (0: the runtime's default).")
    streams: int = Field(default=1, ge=1, description="Concurrent inference streams.")
    batch: int = Field(default=1, ge=1, description="Batch size of a dynamic leading dimension.")
    static_shapes: dict[str, list[int]] = Field(
        default_factory=dict, description="Input name -> the static shape it was compiled for (empty: as in the "
                                          "model).")
    workload: dict[str, Any] | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The workload settings it was measured with, by field of its kind's workload model "
                    "(KindDescriptor.workload; what a bench result's 'workload' holds): applied when it runs, a "
                    "given one that contradicts it refused (edgeopt/deploy/workload.py). Absent (not written when "
                    "null): none recorded, as before this field; the command's workload applies.")
    cpu_flags: tuple[str, ...] = Field(
        default=(), description="CPU features of the measuring machine that change kernels (DECISION_CPU_FLAGS).")
    source_model_sha256: str = Field(default="", description="SHA-256 of the model the sweep started from.")
    measured: DeploymentMeasured
    shipped_check: ShippedCheck | None = Field(default=None, description="Retention as shipped / with defaults.")
    int8_layers: tuple[LayerRepair, ...] = Field(
        default=(), description="An INT8 search mix: per layer what was repaired (a calibration range, NNCF's "
                                "repair) or kept in float, and why; empty for other levels.")
    edgeopt_version: str = Field(default="", description="edgeopt version that wrote it.")
    created: str = Field(default="", description="UTC time it was written (ISO 8601).")
