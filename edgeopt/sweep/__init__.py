"""The compression-level sweep: optimize, benchmark and measure retention per (recipe, runtime) on the target."""

from __future__ import annotations

from .api import sweep
from .rank.pareto import pareto_indices
from .result import Int8SearchResult, Int8Trial, Level, Recommendation, SweepResult

__all__ = ["Int8SearchResult", "Int8Trial", "Level", "Recommendation", "SweepResult", "pareto_indices", "sweep"]
