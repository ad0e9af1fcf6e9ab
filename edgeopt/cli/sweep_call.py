"""What ``edgeopt sweep`` hands the entry of a model's kind (``KindDescriptor.sweep_cli``): every parsed option in
one typed object, so each kind's entry takes the same argument shape ``(kind, call)``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings import RemoteSpec
from .fleet_options import FleetOptions
from .metric_options import MetricParams
from .sink_options import MlflowTarget


def csv(value: str | None) -> list[str] | None:
    """A comma-separated flag value as a list (None when not given)."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@dataclass(frozen=True)
class SweepCall:
    """The sweep command's options, as parsed (names as the command's parameters)."""

    model: Path
    target: str | None
    eval_data: Path
    recipes: str | None
    min_retention: float
    metric: str | None
    output_sel: str | None
    measure: dict[str, Any]
    objective: str
    runtimes: str | None
    calib: Path | None
    out_dir: Path | None
    max_trials: int
    max_search_s: float
    nncf_budget_s: float
    eval_limit: int | None
    no_int8_search: bool
    no_cache: bool
    history_db: Path | None
    as_json: bool
    remote: RemoteSpec
    metric_params: MetricParams
    mlflow: MlflowTarget | None
    fleet: FleetOptions
    # The model's kind's own sweep flags that were given (edgeopt/cli/kind_flags.py: an LLM's --levels), by field
    # name of its sweep_options model, parsed to the field's type.
    options: dict[str, Any] = field(default_factory=dict)
