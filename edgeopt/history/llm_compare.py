"""The names the cells comparison had when LLM bench runs were the only runs of workload cells, kept for the Python
API (``edgeopt.history.llm_compare.compare_runs``, docs/llm-bench.md): the comparison is kind-neutral and lives in
:mod:`.cell_compare`; ``LlmRunComparison`` is :class:`~.cell_compare.CellRunComparison`, and so on."""

from __future__ import annotations

from ..bench.llm.cells import cell_key
from .cell_compare import (
    CellComparison,
    CellMetricComparison,
    CellRunComparison,
    compare_cells,
    compare_runs,
    metric_row,
)

LlmCellComparison = CellComparison
LlmMetricComparison = CellMetricComparison
LlmRunComparison = CellRunComparison

__all__ = ["LlmCellComparison", "LlmMetricComparison", "LlmRunComparison", "cell_key", "compare_cells",
           "compare_runs", "metric_row"]
