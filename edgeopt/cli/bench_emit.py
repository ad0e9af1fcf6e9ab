"""The tail every ``edgeopt bench`` entry shares (a one-pass model, a generative model folder, a plug-in kind's
model): record the run in the history, print it (``--json`` or the kind's table), return the exit code
(docs/exit-codes.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ExitCode
from .common import emit_json
from .history_options import HistoryOptions, record_run
from .sink_options import MlflowTarget


def emit_result(result: Any, shown: Any, *, history: HistoryOptions | None, device: str | None,
                verdict: str | None, ok: bool, as_json: bool, render: Callable[[Any], None],
                mlflow: MlflowTarget | None = None) -> int:
    """Record ``result`` (a failure to record warns: it never fails the measurement), log it to MLflow when asked,
    then print ``shown`` (the result less what ``--samples`` did not ask for) as JSON or with ``render``.

    Args:
        result: the kind's typed result, as measured (the history keeps its raw readings).
        shown: what is printed.
        history: where to record it (None or disabled: nowhere).
        device: the device label of its history row (None: from the result's runner).
        verdict: its history row's verdict (``pass``/``fail``; None: no budget was checked and it is valid).
        ok: whether the run passed: exit 0, else 1.
        as_json: print JSON instead of ``render``'s table.
        render: the kind's terminal table.
        mlflow: an MLflow run to log it to, or None.

    Returns:
        The exit code: 0 when ``ok``, else 1.
    """
    record_run(result, history, device=device, verdict=verdict)
    if mlflow is not None:
        mlflow.log("bench", result)
    if as_json:
        emit_json(shown)
    else:
        render(shown)
    return int(ExitCode.OK if ok else ExitCode.GATE_FAILED)
