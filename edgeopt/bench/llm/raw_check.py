"""The agent's ``generate`` readings, checked before any statistic is computed from them.

A board is untrusted (docs/reliability.md, "Untrusted device"). The runner's boundary
(:mod:`edgeopt.runners.agent_schema`) types the fields every command shares and leaves ``generate`` a dict; this
module is its boundary for LLM runs, in the two steps the one-pass path has:

- **Types** (:func:`accept_generate`): ``generate`` must hold the shape the host computes with (times numbers, token
  lists lists of numbers, axes positive integers, a load for every cell's thread count); anything else is a
  malformed result, one :class:`~edgeopt.errors.RunnerError` line naming the field (exit 3), never a traceback.
- **Physics** (:func:`cell_physics`): numbers of the right type that cannot be true (a NaN, zero or negative time,
  more token latencies than tokens, a first token after the last, token times adding up to more than the
  generation) make the cell invalid with the field named (exit 1), as :mod:`edgeopt.metrics.physics` does for
  one forward pass; statistics come from the repetitions whose numbers are possible, so no report shows ``nan``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from ...errors import RunnerError, SchemaProblem
from ...registry.kinds.generative import DESCRIPTOR as GENERATIVE_KIND
from ...runners.agent_schema import PowerFacts
from ...untrusted import clean_text

Number = StrictInt | StrictFloat
# Clock granularity: token times may add up to the generation's time plus this much.
E2E_SLACK = 1.01
E2E_SLACK_NS = 1_000_000
# How every reason of numbers that cannot be true starts (compare leaves such cells unjudged).
DEVICE_REPORTED = "the device reported"
_SHOWN = 3  # repetitions whose reasons are listed (the rest are counted)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _Kv(_Open):
    dtype_bytes: StrictInt | None = Field(None, ge=1)
    shape: list[StrictInt] = []
    allocated_tokens: StrictInt | None = Field(None, ge=0)
    extra_bytes_per_token_head: Number | None = None
    key_extra_bytes_per_token_head: Number | None = None
    value_extra_bytes_per_token_head: Number | None = None


class _Rep(_Open):
    ttft_ns: Number
    prefill_ns: Number | None = None
    token_ns: list[Number] = []
    e2e_ns: Number
    tokens_out: StrictInt
    rss_before_kb: StrictInt | None = None
    rss_after_kb: StrictInt | None = None
    peak_rss_kb: StrictInt | None = None
    kv: _Kv | None = None
    runtime_metrics: dict[StrictStr, Number] | None = None
    start_s: Number | None = None


class _PhaseEnergy(_Open):
    energy_j: Number


class _InUse(_Open):
    rss_before_kb: StrictInt | None = None
    rss_after_kb: StrictInt | None = None
    in_use_before_kb: StrictInt | None = None
    in_use_after_kb: StrictInt | None = None


class _Cell(_Open):
    prompt_tokens: StrictInt = Field(ge=1)
    gen_tokens: StrictInt = Field(ge=1)
    context_depth: StrictInt = Field(ge=0)
    batch: StrictInt = Field(ge=1)
    threads: StrictInt = Field(ge=0)
    unsupported: StrictStr | None = None
    reps: list[_Rep] = []
    energy: dict[Literal["prefill", "decode"], _PhaseEnergy] | None = None
    in_use: _InUse | None = None


class _KvProbe(_Open):
    method: Literal["decode_growth", "upfront_allocation"] | None = None
    points: list[list[Number | None]] = []
    note: StrictStr | None = None
    seconds: Number | None = None


class _Trace(_Open):
    available: StrictBool = False
    rate_hz: Number | None = None
    points: list[list[Number | None]] = []


class _Load(_Open):
    threads: StrictInt = Field(ge=0)
    load_ms: Number
    rss_before_kb: StrictInt | None = None
    rss_after_kb: StrictInt | None = None
    power: PowerFacts | None = None
    trace: _Trace | None = None
    kv_probe: _KvProbe | None = None
    trim: StrictStr | None = None


class _Facts(_Open):
    layers: StrictInt = Field(ge=1)
    kv_heads: StrictInt = Field(ge=1)
    head_size: StrictInt = Field(ge=1)
    vocab_size: StrictInt | None = Field(None, ge=0)
    context_length: StrictInt | None = Field(None, ge=0)
    source: StrictStr
    kv_dtype_bytes: StrictInt | None = Field(None, ge=1)


class Generate(_Open):
    """The types of :data:`RawRun.generate` (``edgeopt_agent.generate``)."""

    model: _Facts
    loads: list[_Load] = Field(min_length=1)
    cells: list[_Cell]
    truncated: StrictBool = False


def accept_generate(generate: Any, where: str, cells: int | None = None) -> None:
    """Check the types of the agent's ``generate`` section (``cells``: how many the workload asked for).

    Raises:
        RunnerError: a field of the wrong type, a negative axis, a cell whose thread count has no load, or not
            the cells asked for.
    """
    try:
        checked = Generate.model_validate(generate)
    except ValidationError as exc:
        p = SchemaProblem.of(exc)
        raise _malformed(where, f"{'.'.join(str(x) for x in ('generate', *p.loc))}: {p.msg}{p.got}") from None
    threads = {ld.threads for ld in checked.loads}
    for i, cell in enumerate(checked.cells):
        if cell.threads not in threads:
            raise _malformed(where, f"generate.cells.{i}.threads: {cell.threads} has no load (loads: "
                                    f"{sorted(threads)})")
    if cells is not None and len(checked.cells) != cells:
        raise _malformed(where, f"generate.cells: {len(checked.cells)} cells for a workload of {cells}")


def _malformed(where: str, why: str) -> RunnerError:
    return RunnerError(f"the agent on {where} returned a malformed result ({clean_text(why, 200)}); nothing of it "
                       "was used: check the agent there (edgeopt devices check) or update it")


# The bounds come from the kind's metrics (edgeopt/registry/kinds/generative.py): one declaration per metric.
TIME = GENERATIVE_KIND.metric("tpot_ms")  # every token time, TTFT and prefill alike: > 0
LOAD = GENERATIVE_KIND.metric("load_ms")
ENERGY = GENERATIVE_KIND.metric("energy_per_token_mj")
MEMORY = GENERATIVE_KIND.metric("memory_mb")
POWER = GENERATIVE_KIND.metric("power_w")


def _rep_reasons(i: int, rep: dict[str, Any], gen_tokens: int) -> list[str]:
    """Why repetition ``i``'s numbers cannot be true (empty: they can)."""
    at = f"reps[{i}]"
    reasons = [f"{at}.{k} = {rep.get(k)}: a time must be {TIME.bound_text}" for k in ("ttft_ns", "e2e_ns")
               if not TIME.admits(rep.get(k))]
    if rep.get("prefill_ns") is not None and not TIME.admits(rep["prefill_ns"]):
        reasons.append(f"{at}.prefill_ns = {rep['prefill_ns']}: a time must be {TIME.bound_text}")
    tokens = rep.get("token_ns") or []
    bad = [t for t in tokens if not TIME.admits(t)]
    if bad:
        reasons.append(f"{at}.token_ns holds {len(bad)} value(s) that are not {TIME.bound_text} (e.g. {bad[0]})")
    if len(tokens) > gen_tokens - 1:
        reasons.append(f"{at}.token_ns holds {len(tokens)} token latencies for {gen_tokens} tokens (at most "
                       f"{gen_tokens - 1}: the first token is the TTFT)")
    if not (rep.get("tokens_out", 0) >= 0):
        reasons.append(f"{at}.tokens_out = {rep.get('tokens_out')}: a count must be >= 0")
    for key in ("rss_before_kb", "rss_after_kb", "peak_rss_kb"):
        if rep.get(key) is not None and not MEMORY.admits(rep[key]):
            reasons.append(f"{at}.{key} = {rep[key]}: memory must be {MEMORY.bound_text}")
    own = rep.get("runtime_metrics") or {}
    reasons += [f"{at}.runtime_metrics.{k} = {v}: must be {LOAD.bound_text}" for k, v in own.items()
                if not LOAD.admits(v)]
    if reasons:
        return reasons
    if rep.get("prefill_ns") is not None and rep["prefill_ns"] > rep["ttft_ns"]:
        reasons.append(f"{at}.prefill_ns ({rep['prefill_ns']}) exceeds its ttft_ns ({rep['ttft_ns']})")
    if rep["ttft_ns"] + sum(tokens) > rep["e2e_ns"] * E2E_SLACK + E2E_SLACK_NS:
        reasons.append(f"{at}: ttft_ns + token_ns add up to {(rep['ttft_ns'] + sum(tokens)) / 1e6:.4g} ms but "
                       f"e2e_ns is {rep['e2e_ns'] / 1e6:.4g} ms: the first and later tokens came after the last")
    return reasons


def _cell_reasons(raw: dict[str, Any]) -> list[str]:
    """Cell-level numbers: per-phase energy and memory in use, finite and non-negative."""
    reasons = []
    for phase, figures in (raw.get("energy") or {}).items():
        if not ENERGY.admits((figures or {}).get("energy_j")):
            reasons.append(f"energy.{phase}.energy_j = {figures.get('energy_j')}: must be {ENERGY.bound_text}")
    for key, value in (raw.get("in_use") or {}).items():
        if key.endswith("_kb") and value is not None and not MEMORY.admits(value):
            reasons.append(f"in_use.{key} = {value}: memory must be {MEMORY.bound_text}")
    return reasons


def load_reasons(load: dict[str, Any]) -> list[str]:
    """Why a load's numbers cannot be true: its load time, RSS and power (as the one-pass check reads them)."""
    reasons = []
    if load.get("load_ms") is not None and not LOAD.admits(load["load_ms"]):
        reasons.append(f"loads[threads={load.get('threads')}].load_ms = {load.get('load_ms')}: must be "
                       f"{LOAD.bound_text}")
    for key in ("rss_before_kb", "rss_after_kb"):
        if load.get(key) is not None and not MEMORY.admits(load[key]):
            reasons.append(f"loads[threads={load.get('threads')}].{key} = {load[key]}: memory must be "
                           f"{MEMORY.bound_text}")
    for window in ("idle", "active"):
        avg = ((load.get("power") or {}).get(window) or {}).get("avg_w")
        if avg is not None and not POWER.admits(avg):
            reasons.append(f"loads[threads={load.get('threads')}].power.{window}.avg_w = {avg}: must be "
                           f"{POWER.bound_text}")
    return reasons


def cell_physics(raw: dict[str, Any], load: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """Why the cell's readings cannot be true ("the device reported ..." reasons) and the repetitions whose
    numbers are possible (the statistics come from those)."""
    usable, reasons, bad = [], [], 0
    for i, rep in enumerate(raw.get("reps") or []):
        why = _rep_reasons(i, rep, int(raw["gen_tokens"]))
        if why:
            bad += 1
            reasons += why if bad <= _SHOWN else []
        else:
            usable.append(rep)
    if bad > _SHOWN:
        reasons.append(f"{bad - _SHOWN} more repetition(s) with impossible numbers")
    reasons += _cell_reasons(raw) + load_reasons(load)
    return [f"{DEVICE_REPORTED} {r}" for r in reasons], usable
