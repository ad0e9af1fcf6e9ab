"""Public API functions that resolve names (targets, specs) before calling the stage that does the work, and
deliver its outputs (qualify's reports and sinks), so the stages themselves stay one-directional."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import reports
from .analysis import inspect_model
from .analysis.report import InspectResult
from .fleet.executors import Executor
from .qualify.engine import default_report_dir, run_qualification
from .qualify.loader import load_spec
from .qualify.options import QualifyOptions
from .qualify.result import QualifyResult, SweepPoint
from .qualify.retention import RetentionEvaluator
from .qualify.spec import SinksSpec
from .runners import ProgressSink
from .sinks.mlflow_sink import log_qualify
from .targets import load_registry


def inspect(
    model: str | Path,
    *,
    target: str | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
    batch: int = 1,
    targets_dirs: Sequence[Path] = (),
) -> InspectResult:
    """Inspect ``model``; with ``target``, add a roofline estimate for that device.

    Open input dims not set by ``shapes`` take the target's ``default_input_shape`` or the model's own example
    shape when there is one (docs/inspect.md, "Dynamic shapes")."""
    tgt = load_registry(extra_dirs=targets_dirs).get(target) if target else None
    shape_map = {k: [int(d) for d in v] for k, v in (shapes or {}).items()}
    return inspect_model(Path(model), target=tgt, shapes=shape_map, batch=batch, example_shapes=True)


def qualify(
    spec: str | Path,
    *,
    report_dir: str | Path | None = None,
    history_db: str | Path | None = None,
    record: bool = True,
    write_reports: bool = True,
    targets_dirs: Sequence[Path] = (),
    sweep: Sequence[SweepPoint | Mapping[str, Any]] | None = None,
    evaluator: RetentionEvaluator | None = None,
    progress: ProgressSink | None = None,
    log: Callable[[str], None] | None = None,
    jobs: int | None = None,
    executor: str | Executor = "local",
    deadline_s: float | None = None,
) -> QualifyResult:
    """Qualify the spec's model on each of its devices, in parallel, against its gates.

    Args:
        spec: path of the qualification YAML (docs/qualify.md).
        report_dir: where reports and the work dir go (default ``out/qualify/<spec name>``).
        history_db: results history file (default: ``EDGEOPT_HISTORY_DB`` or the XDG data dir).
        record: store every device's run in the history.
        write_reports: write result.json, report.html, junit.xml and summary.md into ``report_dir``.
        targets_dirs: extra directories of target YAML files.
        sweep: sweep points ``{label, latency_ms, retention}`` for the report's Pareto chart.
        evaluator: computes retention (default: onnxruntime on the host).
        progress: receives the agent's progress events (each with ``device``: the device's label).
        log: receives one-line status messages.
        jobs: devices run at the same time at most (None: all of them; docs/fleet.md).
        executor: ``local`` (a thread pool here), ``ray``, ``ray:auto``, ``ray:HOST:PORT``, ``ray://HOST:PORT``
            (Ray tasks holding each device's ``edgeopt-device:LABEL`` resource; gates, history and reports stay
            here) or an executor object.
        deadline_s: per-device deadline (None: ``measure.max_duration_s`` per timed run + 300 s); past it the
            device's SSH session is aborted and its row is a ``deadline`` error.

    Returns:
        The result; ``result.exit_code`` is 0 (all gates pass), 1 (a gate failed, or some devices could not
        run) or 3 (no device could run).

    Raises:
        QualifySpecError / InputError: invalid spec, model, data or history path (exit code 2), before any
            device work where it can be known then.
    """
    loaded = load_spec(spec)
    out_dir = Path(report_dir) if report_dir is not None else default_report_dir(loaded.spec.name)
    options = QualifyOptions(report_dir=out_dir, history_db=history_db, record=record, targets_dirs=targets_dirs,
                             sweep=sweep, evaluator=evaluator, progress=progress, log=log, jobs=jobs,
                             executor=executor, deadline_s=deadline_s)
    result = run_qualification(loaded, options)
    if write_reports:
        paths = reports.report_paths(out_dir)
        result = result.model_copy(update={"reports": {fmt: str(path) for fmt, path in paths.items()}})
        reports.write_reports(result, out_dir)
    _send_to_sinks(result, loaded.spec.sinks)
    return result


def _send_to_sinks(result: QualifyResult, sinks: SinksSpec) -> None:
    """Export the result (its reports included, so they are written first) to the spec's sinks."""
    if sinks.mlflow is not None:
        log_qualify(result, tracking_uri=sinks.mlflow.tracking_uri, experiment=sinks.mlflow.experiment)
