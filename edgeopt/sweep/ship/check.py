"""Shipped = measured, checked: the recommended folder re-loaded by a fresh agent with only what it carries.

After choosing, the sweep evaluates ``<out>/recommended/`` again: the model file(s) there, with the runtime, options
and threads of its ``deployment.json`` (each evaluation is a fresh agent process), and once more with the runtime's
plain defaults (no runtime options), as someone who loads the file alone gets it. Both retentions go into
``deployment.json`` (``shipped_check``), ``sweep.json`` and the summary; when the defaults miss the threshold one
line says which options the deployment needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...deploy import DeployedFile, Deployment, ShippedCheck, load_deployment, save_deployment
from ...errors import EdgeoptError, first_line
from ...evaluation import device_outputs, retention
from ...registry import find_runtime
from ..measure import Context
from ..report import write_plot
from ..result import SweepResult
from .deployment import RECOMMENDED_DIR, SweepFacts, discard, publish, recommended_level, stage

# How far the shipped retention may sit from the measured one before the summary says so (eval outputs are
# deterministic on one machine; this covers thread-count reduction order).
SHIPPED_TOLERANCE = 0.002


def _retention(ctx: Context, model: Path, deployment: Deployment, reference: Path,
               options: Mapping[str, Any]) -> float:
    """Retention of ``model`` on the deployment's runtime with ``options`` vs the sweep's reference outputs."""
    ref_outs, ref_names = ctx.reference(reference, deployment.runtime)
    outs, names, _ = device_outputs(model, ctx.eval_npz, runtime=deployment.runtime, runner=ctx.runner,
                                    runtime_options=dict(options), threads=deployment.threads)
    ref = ctx.selection.pick(ref_outs, ref_names)
    out = ctx.selection.pick(outs, names)
    return retention(ctx.metric, ref, out.astype(ref.dtype, copy=False), ctx.labels)[1]


def shipped_note(deployment: Deployment, check: ShippedCheck) -> str | None:
    """The one line the summary shows: which options the defaults lack when they miss the threshold, or a shipped
    retention that differs from the measured one; None when all is as measured. (A deployment without runtime
    options ships the defaults: the first part says it all.)"""
    threshold = deployment.measured.min_retention
    tolerance = check.tolerance if check.tolerance is not None else SHIPPED_TOLERANCE
    notes = []
    shipped = check.retention_as_shipped
    if shipped is not None and abs(shipped - deployment.measured.retention) > tolerance:
        notes.append(f"as shipped {shipped:.4f} != measured {deployment.measured.retention:.4f}")
    defaults = check.retention_with_defaults
    if defaults is not None and defaults < threshold and (deployment.runtime_options or not notes):
        desc = find_runtime(deployment.runtime)
        name = desc.display_name if desc is not None else deployment.runtime
        needs = ", ".join(f"{k}={_text(v)}" for k, v in sorted(deployment.runtime_options.items())) or "its options"
        notes.append(f"needs {needs}: with {name}'s defaults {_digits(defaults, threshold)} < {threshold:g}")
    return "; ".join(notes) or None


def _digits(value: float, threshold: float) -> str:
    """``value`` with enough decimals to show it below ``threshold`` (0.970 < 0.99; 0.9999899 < 0.99999)."""
    for places in range(3, 10):
        if round(value, places) < threshold:
            return f"{value:.{places}f}"
    return repr(value)


def _text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def shipped_record(deployment: Deployment, files: Sequence[DeployedFile], shipped: float,
                   defaults: float) -> ShippedCheck:
    """The check's record for ``deployment`` (every kind's sweep writes this one): its retention as shipped and with
    the runtime's defaults, the measured one it is compared with, the tolerance, the verdict, the ``files`` it
    re-scored (hashed just before) and the summary's note."""
    measured = deployment.measured.retention
    check = ShippedCheck(retention_as_shipped=shipped, retention_with_defaults=defaults,
                         defaults_pass=defaults >= deployment.measured.min_retention, retention_measured=measured,
                         tolerance=SHIPPED_TOLERANCE, passed=abs(shipped - measured) <= SHIPPED_TOLERANCE,
                         files=tuple(files))
    return check.model_copy(update={"note": shipped_note(deployment, check)})


def check_shipped(ctx: Context, folder: Path, deployment: Deployment, reference: Path) -> ShippedCheck:
    """Re-evaluate the deployment in ``folder`` as shipped and with the runtime's defaults (``reference``: the
    sweep's model, whose outputs on the runtime are the retention's reference).

    Raises:
        EdgeoptError: the folder's files differ from its ``deployment.json`` (DeploymentError), or the agent could
            not load or run the shipped files (RunnerError, InputError).
    """
    load_deployment(folder)  # every file as recorded (hash and size) before it is re-scored
    model = folder / deployment.model
    shipped = _retention(ctx, model, deployment, reference, deployment.runtime_options)
    defaults = (shipped if not deployment.runtime_options
                else _retention(ctx, model, deployment, reference, {}))
    return shipped_record(deployment, deployment.files, shipped, defaults)


def record_check(folder: Path, deployment: Deployment, run: Callable[[], ShippedCheck],
                 warnings: list[str]) -> ShippedCheck | None:
    """Run a kind's shipped check of the staged ``folder`` and save it in its ``deployment.json``
    (``shipped_check``), its note a line in ``warnings``; a check that cannot run (the folder's files differ from
    the record, the agent could not load them) is None with the reason in ``warnings``: the folder is still
    written, the warning says why."""
    try:
        check = run()
    except EdgeoptError as exc:
        warnings.append(f"shipped check of {deployment.name} not run: {first_line(exc)}")
        return None
    save_deployment(folder, deployment.model_copy(update={"shipped_check": check}))
    if check.note:
        warnings.append(f"recommended {deployment.name}: {check.note}")
    return check


def ship(result: SweepResult, ctx: Context, reference: Path, facts: SweepFacts) -> SweepResult:
    """Write ``<out>/recommended/`` for the result's recommendation, check it as shipped, and return the result with
    the deployment's options, folder and check in its recommendation (no recommendation: an old folder is removed).
    A check the agent cannot run leaves ``shipped_check`` empty and says why in the warnings."""
    out = Path(result.out_dir)
    rec = result.recommendation
    level = recommended_level(result.levels, rec) if rec is not None else None
    if rec is None or level is None:
        discard(out)
        return result
    warnings = list(result.warnings)
    try:
        tmp, deployment = stage(out, level, facts)
    except (OSError, EdgeoptError) as exc:  # e.g. a cached level whose artifact was deleted since
        discard(out)
        warnings.append(f"{RECOMMENDED_DIR}/ not written for {rec.recipe}/{rec.runtime}: {first_line(exc)}; re-run "
                        "with --no-cache to rebuild its artifact")
        return result.model_copy(update={"warnings": warnings})
    check = record_check(tmp, deployment, lambda: check_shipped(ctx, tmp, deployment, reference), warnings)
    folder = publish(tmp, out)
    rec = rec.model_copy(update={"runtime_options": dict(deployment.runtime_options), "deployment": str(folder),
                                 "shipped_check": check})
    if result.plot and check is not None:  # the plot's recommended point shows the check too
        write_plot(result.levels, result.objective, Path(result.plot), min_retention=result.min_retention,
                   fps=result.fps, recommendation=rec)
    return result.model_copy(update={"recommendation": rec, "warnings": warnings})
