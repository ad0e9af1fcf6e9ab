"""What ``edgeopt optimize`` hands the entry of a model's kind (``KindDescriptor.optimize_cli``): every parsed option
in one typed object, so each kind's entry takes the same argument shape ``(kind, call)``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .metric_options import MetricParams


@dataclass(frozen=True)
class OptimizeCall:
    """The optimize command's options, as parsed (names as the command's parameters)."""

    model: str
    target: str
    recipe: str
    calib: Path | None
    eval_data: Path | None
    out_dir: Path | None
    shapes: tuple[str, ...]
    no_fidelity: bool
    no_bench: bool
    seed: int
    targets_dirs: tuple[Path, ...]
    as_json: bool
    metric: str | None
    output_sel: str | None
    metric_params: MetricParams
