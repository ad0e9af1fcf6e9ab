"""What a fleet row's verdict was judged against, and the warnings of a device that must reach the fleet's output.

A bare "FAIL" in a table of devices leaves the reader to guess the budget, the percentile and the FPS; a fleet
that drops a device's own warnings (target mismatch, invalid run, what the agent warned about) tells the user
less than a single-device ``bench`` does. Both are computed here once, for the table, the JSON and JUnit.
"""

from __future__ import annotations

from ..metrics.budget import FpsBudget
from ..metrics.result import BenchResult
from ..metrics.target_match import mismatch_note


def budget_text(b: FpsBudget) -> str:
    """``p99 66.600 ms > 66.667 ms budget at 15 FPS`` (``<=`` when within it; the reason when the percentile
    could not be judged)."""
    sign = "<=" if b.latency_ms <= b.budget_ms else ">"
    text = f"{b.percentile} {b.latency_ms:.3f} ms {sign} {b.budget_ms:.3f} ms budget at {b.fps:g} FPS"
    if not b.passed and b.latency_ms <= b.budget_ms and b.reason:
        text += f" ({b.reason})"
    return text


def verdict_text(result: BenchResult) -> str:
    """``pass: <budget text>``, ``FAIL: <budget text>``, ``FAIL: invalid run (<reasons>)`` or ``pass (no budget)``."""
    budget = budget_text(result.fps_budget) if result.fps_budget is not None else None
    if not result.valid:
        tail = f"; {budget}" if budget else ""
        return f"FAIL: invalid run ({'; '.join(result.invalid_reasons) or 'no reason given'}){tail}"
    if budget is None:
        return "pass (no budget)"
    return f"{'pass' if result.passed else 'FAIL'}: {budget}"


def device_warnings(result: BenchResult | None) -> list[str]:
    """A device's own warnings, as a single-device ``bench`` prints them: target mismatch, invalid run, and the
    result's warnings (runtime fallbacks, energy estimates, ...)."""
    if result is None:
        return []
    out = list(result.warnings)  # the metrics put the target mismatch note first
    if result.target_mismatch and not any(w.startswith("TARGET MISMATCH") for w in out):
        out.insert(0, mismatch_note(result.target_mismatch, result.target))
    if not result.valid:
        out.append(f"invalid run: {'; '.join(result.invalid_reasons) or 'no reason given'}")
    return out
