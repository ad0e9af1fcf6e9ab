"""Energy per token per phase and the clock/temperature trace of a generative bench, from the agent's readings.

Measured: the agent splits each load's power readings between every repetition's prefill (prompt in to the first
token) and decode (the later tokens) intervals (``edgeopt_agent.power.phases``); here the joules become mJ per
prompt token and per output token. Without a sensor (or with ``--power-sensor none``) the figures are an
ESTIMATE: the target's TDP x the phase's time, marked ``energy_source: "estimate"``, as ``edgeopt bench`` does
for ONNX models (docs/energy.md). Never an estimate presented as a measurement.
"""

from __future__ import annotations

from typing import Any

from ...metrics.energy import energy_from_run
from ...targets.schema import Target
from .result import LlmEnergy, LlmTrace


def load_energy(power: dict[str, Any] | None, target: Target) -> LlmEnergy | None:
    """The load's power figures (None: energy disabled, or no sensor and no TDP to estimate from)."""
    if not power:
        return None
    # energy_from_run computes per inference; one "inference" over one second gives the mean power itself.
    energy, _ = energy_from_run(power, target=target, inferences=1, timed_s=1.0, flops_per_inference=None)
    if energy is None or energy.active_power_w is None:  # energy_from_run always sets active_power_w
        return None
    return LlmEnergy(source=energy.source, sensor=energy.sensor, rails=list(energy.rails),
                     idle_power_w=energy.idle_power_w, active_power_w=energy.active_power_w, samples=energy.samples,
                     note=energy.note)


def cell_energy(raw: dict[str, Any], reps: list[dict[str, Any]], energy: LlmEnergy | None) -> dict[str, Any]:
    """``energy_prefill_mj_per_token``, ``energy_decode_mj_per_token`` and ``energy_source`` of one cell."""
    none = {"energy_prefill_mj_per_token": None, "energy_decode_mj_per_token": None, "energy_source": None}
    if energy is None or not reps:
        return none
    batch = raw["batch"]
    prompt_tokens = batch * raw["prompt_tokens"] * len(reps)
    decode_tokens = batch * sum(len(r["token_ns"]) for r in reps)
    phases = raw.get("energy") or {}
    if energy.source == "measured" and phases:
        prefill_j, decode_j = phases["prefill"]["energy_j"], phases["decode"]["energy_j"]
    elif energy.source == "estimate":
        prefill_j = energy.active_power_w * sum(r["ttft_ns"] for r in reps) / 1e9
        decode_j = energy.active_power_w * sum(sum(r["token_ns"]) for r in reps) / 1e9
    else:
        return none
    return {"energy_prefill_mj_per_token": prefill_j / prompt_tokens * 1e3,
            "energy_decode_mj_per_token": decode_j / decode_tokens * 1e3 if decode_tokens else None,
            "energy_source": energy.source}


def load_trace(trace: dict[str, Any] | None) -> LlmTrace | None:
    """The load's clock/temperature trace with its extremes (None from an agent that sent none)."""
    if not trace:
        return None
    points = [list(p) for p in trace.get("points") or []]
    clocks = [p[1] for p in points if p[1] is not None]
    temps = [p[3] for p in points if p[3] is not None]
    return LlmTrace(available=bool(trace.get("available")), rate_hz=float(trace.get("rate_hz") or 0.0),
                    points=points, clock_mhz_min=min(clocks) if clocks else None,
                    clock_mhz_max=max(clocks) if clocks else None, temperature_c_max=max(temps) if temps else None)
