"""How one qualification runs, apart from its spec: where reports and history go, the host-side hooks and the
fleet plan. :func:`edgeopt.qualify` builds it from its keyword options at the edge; the engine takes only this
object, so a new run option is one field here and one keyword there."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fleet.executors import Executor
from ..runners import ProgressSink
from .result import SweepPoint
from .retention import RetentionEvaluator


@dataclass(frozen=True, kw_only=True)
class QualifyOptions:
    """The run options of :func:`edgeopt.qualify` (its docstring documents each); defaults are its defaults.

    Values are checked where they are used, with the CLI's messages (``--jobs 0: ...``), in the same order as
    before, so a plain frozen dataclass: hooks and executors are objects a pydantic model could not check anyway.
    """

    report_dir: str | Path | None = None
    history_db: str | Path | None = None
    record: bool = True
    targets_dirs: Sequence[Path] = ()
    sweep: Sequence[SweepPoint | Mapping[str, Any]] | None = None
    evaluator: RetentionEvaluator | None = None
    progress: ProgressSink | None = None
    log: Callable[[str], None] | None = None
    jobs: int | None = None
    executor: str | Executor = "local"
    deadline_s: float | None = None
