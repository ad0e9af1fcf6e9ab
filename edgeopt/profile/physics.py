"""Per-layer numbers an agent sent that cannot be true: such a profile is invalid with the field named.

A board is untrusted (docs/reliability.md, "Untrusted device: new surfaces"). The runner's boundary typed the
``profile`` records (:mod:`edgeopt.runners.agent_schema`); this checks their values, as
:mod:`edgeopt.metrics.physics` does for one forward pass: layer times finite and non-negative, inference walls and
unprofiled samples finite and positive, trace events of finite, non-negative duration, and the layers of one
inference adding up to no more than the inference itself (allowing every core to run a layer at once). The
profile is built from the records that can be true, so no report shows ``nan`` and no record fails validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgeopt_agent.protocol import RawRun

from ..registry.kinds.tensor import DESCRIPTOR as TENSOR_KIND

_LAYER_TIMES = ("median_us", "p90_us", "mean_us", "min_us", "max_us")
# Slack over the longest profiled inference times the cores that may run layers at once.
WALL_SLACK = 1.1
WALL_SLACK_US = 1000.0
MAX_CORES = 1024  # a device's core count beyond this is not believed


@dataclass(frozen=True)
class ProfileCheck:
    """What :func:`check_profile` found: the reasons (empty: every number can be true) and the usable records."""

    reasons: list[str]
    layers: list[dict[str, Any]]
    inference_ns: list[int]
    samples_ns: list[int]
    trace: list[dict[str, Any]]


# The bounds come from the kind's metrics (edgeopt/registry/kinds/tensor.py): a layer's time may be 0 (a layer
# the runtime folded away), an inference's may not.
LAYER = TENSOR_KIND.metric("layer_ms")
LATENCY = TENSOR_KIND.metric("latency_ms")


def _ok(value: Any, *, zero: bool) -> bool:
    return (LAYER if zero else LATENCY).admits(value)


def _layers(raw_layers: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    usable, first, bad = [], "", 0
    for i, layer in enumerate(raw_layers):
        wrong = [k for k in _LAYER_TIMES if k in layer and not _ok(layer[k], zero=True)]
        wrong += [k for k in ("calls", "runs") if layer.get(k, 0) < 0]
        if wrong:
            bad += 1
            first = first or f"layers[{i}].{wrong[0]} = {layer[wrong[0]]}"
        else:
            usable.append(layer)
    reasons = [f"{bad} layer(s) with times or counts that are not {LAYER.bound_text} (e.g. {first})"] if bad else []
    return usable, reasons


def _positive(name: str, values: list[Any]) -> tuple[list[int], list[str]]:
    usable = [int(v) for v in values if _ok(v, zero=False)]
    bad = len(values) - len(usable)
    return usable, [f"{bad} {name} value(s) that are not {LATENCY.bound_text}"] if bad else []


def check_profile(raw: RawRun) -> ProfileCheck:
    """Why the numbers of a profile run cannot be true ("the device reported ..."), and the usable records."""
    prof = raw.profile
    layers, reasons = _layers(list(prof.get("layers", [])))
    walls, why = _positive("profile.inference_ns", list(prof.get("inference_ns", [])))
    reasons += why
    samples, why = _positive("samples_ns (unprofiled phase)", list(raw.samples_ns))
    reasons += why
    trace = [e for e in prof.get("trace", []) if _ok(e.get("duration_us"), zero=True)
             and (e.get("start_us") is None or _ok(e["start_us"], zero=True))]
    if len(trace) < len(prof.get("trace", [])):
        reasons.append(f"{len(prof.get('trace', [])) - len(trace)} trace event(s) whose start or duration is not a "
                       "finite number >= 0")
    cores = raw.environment.get("cores")
    cores = int(cores) if isinstance(cores, int) and 0 < cores <= MAX_CORES else 1
    total_us = sum(float(layer.get("median_us", 0.0)) for layer in layers if layer.get("executed", True))
    if walls and total_us > max(walls) / 1e3 * cores * WALL_SLACK + WALL_SLACK_US:
        reasons.append(f"layers adding up to {total_us / 1e3:,.6g} ms per inference, but its longest profiled "
                       f"inference took {max(walls) / 1e6:.6g} ms (on {cores} core(s)): the layer times or the "
                       "inference times are wrong")
    return ProfileCheck(reasons=[f"the device reported {r}" for r in reasons], layers=layers, inference_ns=walls,
                        samples_ns=samples, trace=trace)
