"""A sweep's measured levels in the history: one run of kind ``sweep`` per level, grouped by the sweep.

Shared by the ONNX sweep (each level's :class:`~edgeopt.metrics.result.BenchResult`) and the LLM sweep (each
level's LLM bench result, stored as ``edgeopt bench LLM_FOLDER`` stores it: :meth:`HistoryStore.record`), alone or
on a fleet (then grouped by the fleet run's id, one device per row). The verdict is the level's pass/fail, the
label names the level and its retention, so ``edgeopt history`` tells the levels apart and ``edgeopt compare``
reads two sweeps' runs of the same level like any two bench runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..metrics.result import BenchResult
from .store import HistoryError

if TYPE_CHECKING:
    from ..bench.llm.result import LlmBenchResult


@dataclass(frozen=True)
class SweptLevel:
    """One measured level as the history keeps it.

    Attributes:
        level: how the sweep names it (``fp16/onnxruntime``, ``int8@onnxruntime_genai``).
        retention: its retention against the sweep's reference.
        passed: whether it met the sweep's threshold (and budget): the run's verdict.
        bench: its benchmark (an ONNX or an LLM bench result).
    """

    level: str
    retention: float
    passed: bool
    bench: BenchResult | LlmBenchResult


def record_sweep_levels(history_db: str | Path, levels: Sequence[SweptLevel], *, model_sha256: str,
                        device: str | None = None, group_id: str | None = None) -> list[int]:
    """Store every level as a ``sweep`` run grouped by ``group_id`` (None: a new group for this sweep); the ids.

    Args:
        device: the device label (None: from each result's runner, ``local`` or ``user@host:port``).

    Raises:
        HistoryError: the history cannot be opened or written.
    """
    from .._version import __version__
    from . import open_store

    store = open_store(history_db)
    group = group_id or f"sweep-{int(time.time())}-{model_sha256[:8]}"
    ids = []
    for swept in levels:
        label = f"{swept.level} retention={swept.retention:.4f} (edgeopt {__version__})"
        run = store.record(swept.bench, kind="sweep", device=device, verdict="pass" if swept.passed else "fail",
                           group_id=group, label=label)
        ids.append(run.id)
    return ids


def record_or_warn(history_db: str | Path, levels: Sequence[SweptLevel], warnings: list[str], *, model_sha256: str,
                   device: str | None = None, group_id: str | None = None, prefix: str = "") -> list[int]:
    """:func:`record_sweep_levels`, but a history that cannot be written costs a line in ``warnings`` (after
    ``prefix``) and no ids, never the sweep's answer."""
    try:
        return record_sweep_levels(history_db, levels, model_sha256=model_sha256, device=device, group_id=group_id)
    except HistoryError as exc:
        warnings.append(f"{prefix}levels not recorded in the history: {exc}")
        return []
