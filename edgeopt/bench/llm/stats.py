"""Raw readings of the agent's ``generate`` command -> one :class:`LlmCell` per workload cell.

Validity rule: each reported percentile needs the samples :func:`edgeopt.metrics.latency.required_samples` asks
(p90 of TTFT: 10 repetitions; p99 of TPOT: 100 token latencies pooled over the repetitions), every repetition
must have produced exactly ``gen_tokens`` tokens, and the watchdog must not have cut repetitions; a cell that
breaks the rule keeps its numbers and says why in ``invalid_reasons``.
"""

from __future__ import annotations

from statistics import median
from typing import Any, TypedDict

import numpy as np

from ...metrics.latency import required_samples
from .energy import cell_energy
from .raw_check import cell_physics
from .result import LlmCell, LlmEnergy, LlmKvProbe, LlmSamples

_MS = 1e6
_MB = 1024.0
DEFAULT_KV_DTYPE_BYTES = 4  # fp32 cache: what CPU exports of int4/fp32 models allocate


class _MemoryFields(TypedDict):
    """:class:`LlmCell`'s memory fields, as :func:`_memory` computes them."""

    peak_rss_mb: float | None
    rss_growth_mb: float | None


class _KvFields(TypedDict):
    """:class:`LlmCell`'s KV cache size fields, as :func:`_kv` computes them."""

    kv_cache_bytes: int
    kv_dtype_bytes: int
    kv_cache_bytes_allocated: int | None


def kv_cache_bytes(facts: dict[str, Any], context: int, batch: int, dtype_bytes: int, extra_bytes: float = 0,
                   value_extra_bytes: float | None = None) -> int:
    """layers x kv_heads x (key + value bytes per token and head) x context tokens x batch, each side
    head_size x dtype bytes plus its ``extra`` bytes per token and head: the scales and zero points of an
    integer cache (OpenVINO's u8: the value's per token, the key's per channel and 32-token block on x86 CPUs);
    ``value_extra_bytes`` None: the same as the key's."""
    value_extra = extra_bytes if value_extra_bytes is None else value_extra_bytes
    per_token_head = 2 * int(facts["head_size"]) * dtype_bytes + extra_bytes + value_extra
    return int(round(int(facts["layers"]) * int(facts["kv_heads"]) * per_token_head * context * batch))


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q * 100.0))


def _support(name: str, n: int, q: float, reasons: list[str], what: str) -> None:
    need = required_samples(q)
    if n < need:
        reasons.append(f"{name} needs >= {need} {what}, got {n}")


def _trace(reps: list[dict[str, Any]]) -> list[float]:
    width = min(len(r["token_ns"]) for r in reps)
    return [round(median(r["token_ns"][i] for r in reps) / _MS, 6) for i in range(width)]


def _memory(reps: list[dict[str, Any]]) -> _MemoryFields:
    peaks = [r["peak_rss_kb"] for r in reps if r.get("peak_rss_kb") is not None]
    growth = [r["rss_after_kb"] - r["rss_before_kb"] for r in reps
              if r.get("rss_after_kb") is not None and r.get("rss_before_kb") is not None]
    return {"peak_rss_mb": max(peaks) / _MB if peaks else None,
            "rss_growth_mb": median(growth) / _MB if growth else None}


def _kv(raw: dict[str, Any], facts: dict[str, Any], reps: list[dict[str, Any]]) -> _KvFields:
    kv: dict[str, Any] = next((r["kv"] for r in reps if r.get("kv")), {})
    dtype_bytes = int(kv.get("dtype_bytes") or facts.get("kv_dtype_bytes") or DEFAULT_KV_DTYPE_BYTES)
    context = raw["context_depth"] + raw["prompt_tokens"] + raw["gen_tokens"]
    allocated = None
    if kv.get("shape"):
        allocated = int(np.prod(kv["shape"])) * dtype_bytes * 2 * int(facts["layers"])
    extra = float(kv.get("extra_bytes_per_token_head") or 0)  # agents before session 8 send only this one
    key = float(kv.get("key_extra_bytes_per_token_head", extra) or 0)
    value = float(kv.get("value_extra_bytes_per_token_head", extra) or 0)
    if kv.get("allocated_tokens"):  # OpenVINO GenAI's paged cache: whole blocks, grown 256 tokens at a time
        allocated = kv_cache_bytes(facts, int(kv["allocated_tokens"]), raw["batch"], dtype_bytes, key, value)
    return {"kv_cache_bytes": kv_cache_bytes(facts, context, raw["batch"], dtype_bytes, key, value),
            "kv_dtype_bytes": dtype_bytes, "kv_cache_bytes_allocated": allocated}


def _fit(points: list[list[Any]], column: int) -> float | None:
    """Least-squares bytes per token of ``points`` (``[tokens, in_use_kb, raw_kb]``) column ``column``."""
    pts = [(p[0], p[column]) for p in points if p[column] is not None]
    if len(pts) < 2 or len({t for t, _ in pts}) < 2:
        return None
    x, y = np.asarray(pts, dtype=np.float64).T
    return round(float(np.polyfit(x, y * _MB, 1)[0]), 1)


def kv_probe(raw: dict[str, Any] | None) -> LlmKvProbe | None:
    """The load's KV probe with its fitted slopes (in use and raw), or None from an older agent."""
    if raw is None:
        return None
    points = [list(p) for p in raw.get("points") or []]
    return LlmKvProbe(method=raw.get("method"), points=points, bytes_per_token=_fit(points, 1),
                      raw_bytes_per_token=_fit(points, 2), seconds=raw.get("seconds"), note=str(raw.get("note") or ""))


def _in_use(raw: dict[str, Any], trim: str | None, probe: LlmKvProbe | None, kv: _KvFields
            ) -> dict[str, Any]:
    use = raw.get("in_use") or {}
    before, after = use.get("in_use_before_kb"), use.get("in_use_after_kb")
    note = None if after is not None else (trim or "no in-use reading (--no-kv-probe, or an agent before session 9)")
    context = raw["context_depth"] + raw["prompt_tokens"] + raw["gen_tokens"]
    predicted = kv["kv_cache_bytes"] / raw["batch"] / context if context else None
    measured = probe.bytes_per_token if probe is not None else None
    return {"rss_in_use_mb": after / _MB if after is not None else None,
            "rss_in_use_growth_mb": (after - before) / _MB if after is not None and before is not None else None,
            "rss_in_use_note": note, "kv_bytes_per_token_predicted": round(predicted, 1) if predicted else None,
            "kv_bytes_per_token_measured": measured,
            "kv_measured_ratio": round(predicted / measured, 4) if predicted and measured else None,
            "kv_measured_method": probe.method if probe is not None and measured else None,
            "kv_measured_note": probe.note if probe is not None else "no KV probe (an agent before session 9)"}


def _timings(raw: dict[str, Any], reps: list[dict[str, Any]]) -> dict[str, Any]:
    batch, prompt = raw["batch"], raw["prompt_tokens"]
    ttft = [r["ttft_ns"] / _MS for r in reps]
    prefill = [(r["prefill_ns"] if r.get("prefill_ns") is not None else r["ttft_ns"]) / 1e9 for r in reps]
    tokens = [t / _MS for r in reps for t in r["token_ns"]]
    decode = [len(r["token_ns"]) * batch / (sum(r["token_ns"]) / 1e9) for r in reps if r["token_ns"]]
    own = [r.get("runtime_metrics") or {} for r in reps]
    return {
        "ttft_ms_p50": _pct(ttft, 0.5), "ttft_ms_p90": _pct(ttft, 0.9),
        "prefill_tokens_per_s": median(batch * prompt / s for s in prefill),
        "tpot_ms_p50": _pct(tokens, 0.5) if tokens else None, "tpot_ms_p90": _pct(tokens, 0.9) if tokens else None,
        "tpot_ms_p99": _pct(tokens, 0.99) if tokens else None,
        "tpot_ms_mean": float(np.mean(tokens)) if tokens else None,
        "decode_tokens_per_s": median(decode) if decode else None,
        "e2e_ms_p50": median(r["e2e_ns"] / _MS for r in reps), "tpot_trace_ms": _trace(reps),
        "runtime_ttft_ms_mean": median(o["ttft_ms"] for o in own) if all("ttft_ms" in o for o in own) else None,
        "runtime_tpot_ms_mean": median(o["tpot_ms"] for o in own) if all("tpot_ms" in o for o in own) else None,
    }


def _reasons(raw: dict[str, Any], reps: list[dict[str, Any]], wanted: int) -> list[str]:
    reasons: list[str] = []
    if len(reps) < wanted:
        reasons.append(f"{len(reps)} of {wanted} repetitions ran (watchdog: raise --max-duration)")
    short = [r["tokens_out"] for r in reps if r["tokens_out"] != raw["gen_tokens"]]
    if short:
        reasons.append(f"a generation produced {min(short)} tokens, not {raw['gen_tokens']} (EOS not ignored?)")
    _support("ttft p50", len(reps), 0.5, reasons, "repetitions")
    _support("ttft p90", len(reps), 0.9, reasons, "repetitions")
    n_tokens = sum(len(r["token_ns"]) for r in reps)
    for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        _support(f"tpot {key}", n_tokens, q, reasons, "token latencies (gen_tokens - 1 per repetition)")
    return reasons


def _samples(reps: list[dict[str, Any]], batch: int) -> LlmSamples:
    return LlmSamples(ttft_ms=[r["ttft_ns"] / _MS for r in reps],
                      tpot_ms=[t / _MS for r in reps for t in r["token_ns"]],
                      decode_tokens_per_s=[len(r["token_ns"]) * batch / (sum(r["token_ns"]) / 1e9)
                                           for r in reps if r["token_ns"]])


def cell_from_raw(raw: dict[str, Any], facts: dict[str, Any], load_ms: float | None, wanted: int,
                  energy: LlmEnergy | None = None, probe: LlmKvProbe | None = None, trim: str | None = None,
                  load: dict[str, Any] | None = None) -> LlmCell:
    """One cell's statistics, energy per token per phase (``energy``: the load's power), memory in use and the
    measured KV bytes per token (``probe``: the load's KV probe; ``trim``: why in-use readings are null) and
    validity from the agent's raw cell (``load``: its load's raw record, whose numbers are checked with the
    cell's: :mod:`.raw_check`). Statistics come from the repetitions whose numbers can be true."""
    axes = {k: raw[k] for k in ("prompt_tokens", "gen_tokens", "context_depth", "batch", "threads")}
    device, reps = cell_physics(raw, load if load is not None else {})
    if raw.get("unsupported") or not reps:
        why = raw.get("unsupported") or ("no repetition with possible numbers" if raw["reps"] else
                                         "no repetition ran (watchdog: raise --max-duration)")
        return LlmCell(**axes, repetitions=0, load_ms=load_ms, valid=False, invalid_reasons=[why, *device])
    reasons = _reasons(raw, reps, wanted) + device
    if device:  # the energy of bad repetitions is in the cell's phase totals: not shown
        energy = None
    kv = _kv(raw, facts, reps)
    return LlmCell(**axes, repetitions=len(reps), tokens_out=min(r["tokens_out"] for r in reps), load_ms=load_ms,
                   **_timings(raw, reps), **_memory(reps), **kv, **_in_use(raw, trim, probe, kv),
                   **cell_energy(raw, reps, energy),
                   samples=None if device else _samples(reps, raw["batch"]), valid=not reasons,
                   invalid_reasons=reasons)
