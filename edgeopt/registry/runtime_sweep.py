"""What the sweep and the CLI need to know about a runtime, declared on its descriptor (:class:`RuntimeDescriptor`)
so that no sweep module or CLI command names a runtime:

- how to run it at full FP32 precision for a fair reference (``reference_options``);
- whether it runs FP32 models in a lower precision by default, and on which CPUs (:class:`LowPrecisionDefault`):
  the sweep then adds that precision as a level of its own;
- the INT8 backends it offers to the sweep's accuracy-aware INT8 search (:class:`Int8Backend`);
- its own CLI flags (:class:`CliFlag`), which ``bench`` and ``profile`` add and map to runtime options;
- for a runtime whose models are exported by its own tool (the generative runtimes): its quantization levels as
  data (:class:`LevelSpec`) and the exporter that makes them (``exporter``, a lazy ``module:attribute``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# The runtime-info field in which a runtime reports the precision it ran float parts in (the agent's ``details``).
PRECISION_REPORT = "inference_precision"


class Int8Backend(str, Enum):
    """How the sweep's INT8 search makes candidates for a runtime (:mod:`edgeopt.sweep.int8.search`)."""

    #: The project's calibrated QDQ ONNX model, executed with INT8 kernels: the runtime gets its own latency-aware
    #: float set, its layers profiled there (:mod:`edgeopt.sweep.int8.latency`).
    QDQ = "qdq"
    #: NNCF's accuracy-controlled quantization to an OpenVINO IR, as one trial (``--nncf-budget-s``,
    #: :mod:`edgeopt.sweep.int8.nncf_candidate`).
    NNCF = "nncf"


class LowPrecisionDefault(BaseModel):
    """A runtime that runs FP32 models in a lower float precision by default (OpenVINO: BF16 on CPUs with
    AVX512_BF16 or AMX). The sweep measures the model at the runtime's default and keeps it as level ``level`` when
    the runtime reports it ran in ``reports``; its retention is against the full-precision reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$",
                       description="The sweep level's name, e.g. 'bf16' (not a recipe name).")
    option: str = Field(description="The runtime option of reference_options dropped to run at the default, "
                                    "e.g. 'inference_precision'.")
    reports: str = Field(description=f"What the runtime reports as '{PRECISION_REPORT}' when it ran low, e.g. 'bf16'.")
    cpu_flags: tuple[str, ...] = Field(
        default=(), description="CPU flags (the agent probe's environment.cpu_flags) of which one must be present "
                                "for it to run low; empty: any CPU.")

    def expected(self, cpu_flags: Sequence[str] | None) -> bool:
        """Whether it may run low by default on a CPU with ``cpu_flags`` (None or empty: not known, so tried)."""
        return not self.cpu_flags or not cpu_flags or any(f in cpu_flags for f in self.cpu_flags)

    def ran_low(self, details: Mapping[str, Any]) -> bool:
        """Whether a level's ``details`` say the runtime ran it in this low precision."""
        return str(details.get(PRECISION_REPORT, "")).lower() == self.reports.lower()


class CliFlag(BaseModel):
    """A flag of the runtime's own on ``bench`` and ``profile`` (``--ov-device``): sets one runtime option and
    implies ``--runtime <it>`` when no runtime is named."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    flag: str = Field(pattern=r"^--[a-z][a-z0-9-]*$", description="The flag, e.g. '--ov-device'.")
    option: str = Field(min_length=1, description="The runtime option it sets, e.g. 'device'.")
    repeatable: bool = Field(default=False, description="May be given several times; the option is then a list.")
    metavar: str = Field(default="VALUE", description="Its value's name in the help.")
    help: str = Field(min_length=3, description="Its help text.")


class LevelSpec(BaseModel):
    """One quantization level a runtime's exporter makes (a sweep level): its name and export settings, as data.

    The settings are validated by the exporter's own settings model when the level is built; ``recipe`` takes
    them from that recipe's block for the runtime instead (the data-aware ``int4-awq``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="Level name, unique per runtime ('int4-g32').")
    settings: dict[str, Any] = Field(default_factory=dict, description="The exporter's settings for this level.")
    recipe: str | None = Field(default=None, description="Take the settings from this LLM recipe's block instead.")
    data_aware: bool = Field(default=False, description="Calibrates on text: built only when calibration text is "
                                                        "given (--calib).")
    reference: bool = Field(default=False, description="The full-precision export every other level of the runtime "
                                                       "is scored against (one per runtime).")

