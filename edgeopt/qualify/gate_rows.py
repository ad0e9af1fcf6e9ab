"""The gate-result rows every gate engine writes: one-pass (:mod:`.gates`), LLM (:mod:`.llm_gates`) and plug-in kinds
(:mod:`.kind_gates`).

Why one place: a row's shape (status from ``ok``, threshold, comparison, unit), the ``target`` row of hardware
that is not its target's, a deployment's ``deployment_match`` row and the ``retention`` row read the same for every
kind of model, so a report, a JUnit file or a history verdict cannot tell which engine wrote them. Only what each
engine measures differs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from .gate_spec import RetentionGate
from .result import GateResult, GateStatus, RetentionResult

MIB = float(1 << 20)


def row(gate: str, device: str, *, ok: bool, measured: float | None, threshold: float,
        comparison: Literal["<=", ">="], unit: str, metric: str, detail: str, estimate: bool = False) -> GateResult:
    """One gate's verdict on one device (PASS when ``ok``, else FAIL)."""
    return GateResult(gate=gate, device=device, status=GateStatus.PASS if ok else GateStatus.FAIL,
                      measured=measured, threshold=threshold, comparison=comparison, unit=unit, metric=metric,
                      detail=detail, estimate=estimate)


def worst_row(gate: str, device: str, values: dict[str, float | None], limit: float,
              comparison: Literal["<=", ">="], unit: str, metric: str, problem: str | None = None,
              estimate: bool = False, prefix: str = "") -> GateResult:
    """A gate held in every cell (``values``: cell key -> the cell's value): the worst cell's value against
    ``limit``, the verdict naming it; a cell without a value, or ``problem``, fails the gate."""
    missing = [k for k, v in values.items() if v is None]
    if problem is None and (missing or not values):
        problem = f"{metric} was not measured in cell(s) {', '.join(missing) or '(none ran)'}"
    known = {k: v for k, v in values.items() if v is not None}
    pick = max if comparison == "<=" else min
    cell = pick(known, key=lambda k: known[k]) if known else None
    value = known[cell] if cell is not None else None
    if problem is not None:
        return row(gate, device, ok=False, measured=value, threshold=limit, comparison=comparison, unit=unit,
                   metric=metric, detail=problem, estimate=estimate)
    assert value is not None
    ok = value <= limit if comparison == "<=" else value >= limit
    sign = comparison if ok else {"<=": ">", ">=": "<"}[comparison]
    detail = (f"{prefix}{metric} {value:.4g} {unit} {sign} {limit:g} {unit} (worst of {len(known)} cell(s): "
              f"{cell})")
    return row(gate, device, ok=ok, measured=value, threshold=limit, comparison=comparison, unit=unit,
               metric=metric, detail=detail, estimate=estimate)


def target_row(device: str, reasons: Sequence[str], target: str, *, allowed: bool) -> GateResult | None:
    """The ``target`` row of a device measured on hardware that is not its target's (None when it matches):
    a failure unless the spec sets ``allow_target_mismatch: true``."""
    if not reasons:
        return None
    why = "; ".join(reasons)
    detail = (f"TARGET MISMATCH allowed by allow_target_mismatch (dry run): {why}" if allowed else
              f"TARGET MISMATCH: {why}; run on a {target} device, or set allow_target_mismatch: true "
              "for a dry run")
    return row("target", device, ok=allowed, measured=float(len(reasons)), threshold=0.0, comparison="<=",
               unit="mismatches", metric="target hardware", detail=detail)


def deployment_row(device: str, deployment: str, problems: Sequence[str], *, allowed: bool) -> GateResult:
    """The ``deployment_match`` row of a deployment run, whatever the kind of model: whether this device's runtime
    version and kernel-relevant CPU flags are the measuring machine's (``problems``: what differs); a difference
    fails unless the spec sets ``allow_deployment_mismatch: true``."""
    why = "; ".join(problems)
    if not problems:
        detail = f"deployment {deployment!r}: runtime version and CPU flags as measured"
    elif allowed:
        detail = f"DEPLOYMENT MISMATCH allowed by allow_deployment_mismatch: {why}"
    else:
        detail = (f"DEPLOYMENT MISMATCH: {why}; run where {deployment!r} was measured, re-run the sweep on this "
                  "device, or set allow_deployment_mismatch: true")
    return row("deployment_match", device, ok=allowed or not problems, measured=float(len(problems)),
               threshold=0.0, comparison="<=", unit="differences", metric="deployment runtime and CPU",
               detail=detail)


def retention_row(g: RetentionGate, device: str, r: RetentionResult | None,
                  tail: Callable[[RetentionResult], str]) -> GateResult:
    """The ``retention`` row: fails when it could not be computed; ``tail`` adds what the engine knows of the data
    after ``... on N samples``."""
    metric = f"retention ({r.metric})" if r is not None else "retention"
    if r is None or r.retention is None:
        why = "; ".join(r.notes) if r is not None and r.notes else "not computed"
        return row("retention", device, ok=False, measured=None, threshold=g.min_ratio, comparison=">=", unit="",
                   metric=metric, detail=f"retention could not be computed: {why}")
    ok = r.retention >= g.min_ratio
    detail = f"{metric} {r.retention:.4f} {'>=' if ok else '<'} {g.min_ratio:g} on {r.samples} samples{tail(r)}"
    return row("retention", device, ok=ok, measured=r.retention, threshold=g.min_ratio, comparison=">=", unit="",
               metric=metric, detail=detail)
