"""Expensive runs that several integration files assert on (the fixtures in ``conftest.py`` run each once)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edgeopt.sweep.result import SweepResult


@dataclass(frozen=True)
class Int8Search:
    """The digits sweep whose plain INT8 misses a 0.9999 snr_db retention, so the accuracy-aware search runs.

    Attributes:
        result: what ``edgeopt.sweep`` returned.
        out_dir: its output directory (``sweep.json``, ``int8-search/best.onnx``, the cache).
    """

    result: SweepResult
    out_dir: Path


def digits_int8_search(model: Path, data: Path, out: Path) -> Int8Search:
    """Run the sweep: ``test_sweep.py`` checks the search's choice, ``test_result_schemas.py`` the keys of its
    ``sweep.json`` (each used to run it itself)."""
    import edgeopt

    # snr_db retention of plain INT8 here is ~0.99976: a 0.9999 threshold forces the search to keep nodes in float
    result = edgeopt.sweep(model, eval=data, recipes=["int8"], metric="snr_db", min_retention=0.9999, max_trials=8,
                           out_dir=out, iterations=20, min_duration_s=0.1, runtimes=["onnxruntime"])
    return Int8Search(result, out)
