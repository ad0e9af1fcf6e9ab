"""What a sweep tries and how it judges: :class:`SweepOptions`, the default recipes and objectives, every level's
benchmark settings and the host-side checks of the inputs (before anything runs)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..calib import ImagePreprocessing
from ..errors import InputError
from ..evaluation import MetricSpec
from ..settings import MeasureSettings

DEFAULT_RECIPES = ("fp16", "int8", "int4", "prune30-int8")
OBJECTIVES = ("latency", "size", "energy")
# The benchmark warm-up of every level (inferences).
LEVEL_WARMUP = 5


class SweepOptions(BaseModel):
    """What a sweep tries and how it judges (the measurement settings are a :class:`MeasureSettings`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eval_data: Path = Field(description=".npz keyed by input name (+ labels) or a class-per-subfolder image folder.")
    recipes: list[str] | None = Field(default=None, description="Recipe names (None: the defaults valid here).")
    min_retention: float = Field(default=0.99, description="Retention threshold, a ratio (0.99: 99 %).")
    metric: str | MetricSpec | None = Field(
        default=None, description="Metric name or package.module:function, or a MetricSpec with its parameters.")
    output: str | int | None = Field(default=None, description="Output the metric reads: index or name[,slice].")
    objective: str = Field(default="latency", description="What the recommendation minimizes.")
    runtimes: list[str] | None = Field(default=None, description="Runtimes to try (None: all installed ones).")
    calib: Path | None = Field(default=None, description="Calibration data for INT8 recipes (None: the eval data).")
    out_dir: Path | None = Field(default=None, description="Output directory (None: out/<model stem>.sweep).")
    preprocessing: ImagePreprocessing | None = Field(default=None, description="Image preprocessing.")
    eval_limit: int | None = Field(default=None, description="Use at most this many eval samples.")
    no_cache: bool = Field(default=False, description="Ignore cached levels (still rewritten).")
    int8_search: bool = Field(default=True, description="Search INT8 configs when INT8 misses the threshold.")
    max_trials: int = Field(default=12, description="Most INT8 search device trials.")
    max_search_s: float = Field(default=600.0, description="Time bound of the INT8 search, s.")
    nncf_budget_s: float = Field(default=0.0, ge=0, description=(
        "Try NNCF's accuracy-controlled quantization in the INT8 search, on the runtimes that offer it (OpenVINO), "
        "when this much search time is left, s (0: off)."))
    history_db: Path | None = Field(default=None, description="History store recording each measured level.")


def level_settings(*, iterations: int = 100, min_duration_s: float = 1.0, threads: int = 0,
                   fps: float | None = None) -> MeasureSettings:
    """The benchmark settings of every level: a short warm-up, raw samples kept, the sweep's budget (never the
    target's default FPS)."""
    return MeasureSettings.from_kwargs(iterations=iterations, min_duration_s=min_duration_s, threads=threads,
                                       warmup=LEVEL_WARMUP, fps=fps, use_target_fps=False, keep_samples=True)


def check_inputs(model_path: Path, options: SweepOptions) -> None:
    """Host-side checks before anything runs.

    Raises:
        InputError: not an ONNX file, an unknown objective, a retention threshold out of range.
    """
    if not model_path.is_file() or model_path.suffix != ".onnx":
        raise InputError(f"model {model_path}: not an .onnx file; sweep takes an ONNX model")
    if options.objective not in OBJECTIVES:
        raise InputError(f"--objective {options.objective!r}: use one of {', '.join(OBJECTIVES)}")
    if not 0 < options.min_retention <= 1.5:
        raise InputError(f"--min-retention {options.min_retention}: use a ratio such as 0.99")
