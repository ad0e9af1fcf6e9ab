"""The ``generate`` command: time a generative model over a grid of workloads (llama-bench's axes).

Cells are the cross product of ``prompt_tokens x gen_tokens x context_depth x batch`` for each ``threads`` value.
The model is loaded once per thread count (timed, with the RSS it added); each cell is warmed up (``warmup``
generations, untimed, not kept); then repetitions are interleaved across that load's cells (rep 0 of every cell,
then rep 1, ...), so a drift in clock or temperature spreads over all cells instead of biasing one. Prompts are
token ids drawn from the vocabulary with a seed per (cell, repetition): reproducible, and never the same prompt
twice (no prefix cache can help). Output length is fixed (EOS ignored). Only raw readings are returned; the host
computes the statistics and the validity of each percentile (edgeopt.bench.llm).

``RawRun.generate`` keys: ``model`` (the runtime's decoder facts), ``loads`` (one per threads value: threads,
load_ms, rss_before_kb, rss_after_kb around the load), ``cells`` (each: prompt_tokens, gen_tokens, context_depth, batch,
threads, warmup, unsupported (a reason or None), reps: the runtime's ``generate_once`` dict plus rss_before_kb,
rss_after_kb, peak_rss_kb, start_s (seconds since the timed window opened)); energy (per phase ``prefill``/``decode``:
energy_j and seconds summed over the repetitions, from the power readings; None without a sensor)), loads also
carry ``power`` (the sampler's report, as ``RawRun.power``) and ``trace`` (edgeopt_agent.trace), ``peak_reset``
(whether VmHWM was reset per repetition, so peak_rss_kb is the repetition's own peak), ``truncated`` (the
watchdog stopped repetitions early).

Memory in use (``kv_probe`` on, the default), after a load's timed window and outside the power window: each cell
gets one more untimed generation read raw and right after glibc's ``malloc_trim(0)`` (``cells[].in_use``:
rss_before_kb, rss_after_kb, in_use_before_kb, in_use_after_kb, trim_s), and each load the runtime's KV probe
(``loads[].kv_probe``: method, points ``[cache tokens, in_use_kb, raw_kb]``, note, seconds) and ``trim`` (None,
or why trimmed readings are null: not glibc, no /proc). The probe runs at the first load that can take it; later
loads (other thread counts) carry its readings with a note and ``seconds`` 0. The timed repetitions are never trimmed.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any, Callable, Dict, List, Optional

from . import __version__, environment, memory, power, runtimes, trace
from .protocol import (
    ERROR_INPUT,
    ERROR_RUNTIME,
    ERROR_RUNTIME_MISSING,
    GENERATE_DEFAULTS,
    STATUS_ERROR,
    STATUS_OK,
    RawRun,
    Request,
)

Progress = Callable[[Dict[str, Any]], None]
_AXES = ("prompt_tokens", "gen_tokens", "context_depth", "batch", "threads")
_FIRST_ID = 3  # ids below are often special (pad/bos/eos/unk): a prompt of them would not be text-like


class _Failed(Exception):
    def __init__(self, result: RawRun) -> None:
        super().__init__(result.error)
        self.result = result


def workload(request: Request) -> Dict[str, Any]:
    """The request's workload with defaults filled in; raises ValueError naming a bad key or value."""
    unknown = sorted(set(request.generate) - set(GENERATE_DEFAULTS))
    if unknown:
        raise ValueError("unknown generate key(s) %s; known: %s" % (", ".join(unknown), ", ".join(GENERATE_DEFAULTS)))
    spec = dict(GENERATE_DEFAULTS)
    spec.update(request.generate)
    for axis in _AXES:
        values = spec[axis]
        if not isinstance(values, list) or not values or not all(isinstance(v, int) for v in values):
            raise ValueError("generate.%s must be a non-empty list of integers (got %r)" % (axis, values))
        low = 0 if axis in ("context_depth", "threads") else 1
        if min(values) < low:
            raise ValueError("generate.%s values must be >= %d (got %r)" % (axis, low, values))
    if int(spec["repetitions"]) < 1 or int(spec["warmup"]) < 0:
        raise ValueError("generate.repetitions must be >= 1 and warmup >= 0")
    return spec


def _cells(spec: Dict[str, Any], threads: int) -> List[Dict[str, Any]]:
    grid = itertools.product(spec["prompt_tokens"], spec["gen_tokens"], spec["context_depth"], spec["batch"])
    return [{"prompt_tokens": p, "gen_tokens": g, "context_depth": d, "batch": b, "threads": threads,
             "warmup": int(spec["warmup"]), "unsupported": None, "reps": []} for p, g, d, b in grid]


def _ids(seed: int, key: List[int], count: int, batch: int, vocab: int) -> List[List[int]]:
    rng = random.Random("%d:%s" % (seed, ",".join(str(k) for k in key)))
    return [[rng.randrange(_FIRST_ID, vocab) for _ in range(count)] for _ in range(batch)]


def _prompts(cell: Dict[str, Any], seed: int, index: int, rep: int, vocab: int) -> Any:
    key = [index, rep, cell["threads"]]
    return (_ids(seed, key + [0], cell["prompt_tokens"], cell["batch"], vocab),
            _ids(seed, key + [1], cell["context_depth"], cell["batch"], vocab))


def _once(rt: Any, cell: Dict[str, Any], seed: int, index: int, rep: int, vocab: int) -> Dict[str, Any]:
    prompt, depth = _prompts(cell, seed, index, rep, vocab)
    reset = memory.reset_peak()
    before = memory.vm_rss_kb()
    out = rt.generate_once(prompt, depth, cell["gen_tokens"])
    out.update(rss_before_kb=before, rss_after_kb=memory.vm_rss_kb(),
               peak_rss_kb=memory.vm_hwm_kb() if reset else None)
    rt.close_generation()
    return out


def _unsupported(rt: Any, cell: Dict[str, Any], facts: Dict[str, Any]) -> Optional[str]:
    if cell["context_depth"] and not getattr(rt, "supports_context_depth", True):
        return "context_depth > 0 is not supported by the %s runtime yet" % rt.name
    total = cell["context_depth"] + cell["prompt_tokens"] + cell["gen_tokens"]
    if facts.get("context_length") and total > facts["context_length"]:
        return "%d tokens exceed the model's context length %d" % (total, facts["context_length"])
    return None


def _warm_up(rt: Any, cells: List[Dict[str, Any]], seed: int, facts: Dict[str, Any], vocab: int) -> None:
    for index, cell in enumerate(cells):
        cell["unsupported"] = _unsupported(rt, cell, facts)
        for w in range(0 if cell["unsupported"] else cell["warmup"]):
            _once(rt, cell, seed, index, -1 - w, vocab)


def _timed(rt: Any, cells: List[Dict[str, Any]], spec: Dict[str, Any], vocab: int, deadline: float) -> bool:
    """Repetitions interleaved across the cells; True when the watchdog cut them."""
    for rep in range(int(spec["repetitions"])):
        for index, cell in enumerate(cells):
            if cell["unsupported"]:
                continue
            if time.monotonic() > deadline:
                return True
            cell["reps"].append(_once(rt, cell, spec["seed"], index, rep, vocab))
    return False


def _read() -> Dict[str, Any]:
    raw, in_use, seconds = memory.in_use_kb()
    return {"raw_kb": raw, "in_use_kb": in_use, "trim_s": seconds}


def _in_use(rt: Any, cells: List[Dict[str, Any]], seed: int, vocab: int, deadline: float) -> None:
    """After the timed window: one more (untimed) generation per cell, read raw and in use (malloc_trim first)
    before it and after it with its state alive; the timed repetitions' raw readings stay untouched (a trim
    between them would change their heap and make the next generation fault its pages in again)."""
    for index, cell in enumerate(cells):
        if cell["unsupported"] or time.monotonic() > deadline:
            continue
        prompt, depth = _prompts(cell, seed, index, -1000, vocab)
        before = _read()
        rt.generate_once(prompt, depth, cell["gen_tokens"])
        after = _read()
        rt.close_generation()
        cell["in_use"] = {"rss_before_kb": before["raw_kb"], "rss_after_kb": after["raw_kb"],
                          "in_use_before_kb": before["in_use_kb"], "in_use_after_kb": after["in_use_kb"],
                          "trim_s": before["trim_s"] + after["trim_s"]}


def _kv_probe(rt: Any, facts: Dict[str, Any], deadline: float) -> Dict[str, Any]:
    """The runtime's KV probe (runtimes.generative.GenerativeRuntime.kv_probe) with in-use readings, or why not."""
    why = memory.trim_unavailable()
    if why is None and not facts.get("context_length"):
        why = "the model's context length is unknown (not in its config): the probe would not know how far it may go"
    if why is None and time.monotonic() > deadline:
        why = "the watchdog's deadline passed before the probe"
    if why is not None:
        return {"method": None, "points": [], "note": why}
    t0 = time.perf_counter()
    try:
        out = rt.kv_probe(_read, int(facts["context_length"]))
    except Exception as exc:  # the probe is auxiliary: its failure is a note, never the bench's
        text = str(exc).strip().splitlines()
        out = {"method": None, "points": [], "note": "probe failed: %s" % (text[0] if text else type(exc).__name__)}
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def _phase_energy(meter: Any, cells: List[Dict[str, Any]], origin_ns: int) -> None:
    """Each cell's prefill (to the first token) and decode (the later tokens) energy, summed over its
    repetitions, from the timed window's readings (power.phases); each repetition's start becomes seconds since
    the window opened (to line it up with the clock/temperature trace)."""
    readings = meter.readings() if meter.measuring else []
    for cell in cells:
        spans: Dict[str, List[Any]] = {"prefill": [], "decode": []}
        for r in cell["reps"]:
            t0 = r.pop("t0_ns", None)
            if t0 is None:
                continue
            r["start_s"] = round((t0 - origin_ns) / 1e9, 6)
            spans["prefill"].append((t0, t0 + r["ttft_ns"]))
            spans["decode"].append((t0 + r["ttft_ns"], t0 + r["e2e_ns"]))
        cell["energy"] = power.interval_energy(readings, meter.reader, spans) if readings and spans["prefill"] \
            else None


def _shared_probe(first: Dict[str, Any]) -> Dict[str, Any]:
    """A later load's KV probe: the first load's readings, not measured again (the cache's layout and size per token
    do not depend on the thread count; at Qwen2-0.5B shapes the probe costs ~1 min per load)."""
    probe = dict(first["kv_probe"])
    note = "measured once, at the load with threads=%d (the KV cache per token does not depend on threads)" % (
        first["threads"])
    probe["note"] = "%s; %s" % (note, probe["note"]) if probe.get("note") else note
    probe["seconds"] = 0.0
    return probe


def _run_load(rt: Any, request: Request, spec: Dict[str, Any], threads: int, deadline: float,
              probed: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Load for one thread count, (idle power window,) warm up each cell, then interleave repetitions under the
    power sampler and the clock/temperature trace; returns the load's record (``probed``: an earlier load whose
    KV probe this one carries instead of probing again)."""
    before = memory.vm_rss_kb()
    t0 = time.perf_counter_ns()
    rt.load(request.model_path, dict(request.runtime_options), threads)
    load_ms = (time.perf_counter_ns() - t0) / 1e6
    after = memory.vm_rss_kb()
    facts = rt.model_facts()
    vocab = int(facts.get("vocab_size") or 0) or 1000
    cells = _cells(spec, threads)
    meter = power.PowerSession.open(request.energy)  # no sensor: the host estimates from the target's TDP
    try:
        meter.idle()
        _warm_up(rt, cells, spec["seed"], facts, vocab)
        clocks = trace.ClockTrace(meter.settings.sysfs_root, float(spec["trace_hz"]))
        clocks.start()
        meter.start()
        origin = time.perf_counter_ns()
        try:
            truncated = _timed(rt, cells, spec, vocab, deadline)
        finally:
            meter.stop()
            clocks.stop()
        _phase_energy(meter, cells, origin)
        report = meter.report()
    finally:
        meter.close()
    probe: Dict[str, Any] = {"method": None, "points": [], "note": "disabled (--no-kv-probe)"}
    if spec.get("kv_probe", True):
        _in_use(rt, cells, spec["seed"], vocab, deadline)
        probe = _shared_probe(probed) if probed is not None else _kv_probe(rt, facts, deadline)
    return {"threads": threads, "load_ms": load_ms, "rss_before_kb": before, "rss_after_kb": after,
            "model": facts, "cells": cells, "truncated": truncated, "power": report,
            "trace": clocks.report(origin), "kv_probe": probe, "trim": memory.trim_unavailable()}


def generate(request: Request, emit: Progress) -> RawRun:
    """Run the request's generative workload; every failure comes back as a ``RawRun`` with ``status="error"``."""
    try:
        spec = workload(request)
        power.parse_settings(request.energy)
        rt = runtimes.create(request.runtime)
        if not getattr(rt, "generative", False):
            raise ValueError("runtime %s is not generative: 'generate' needs onnxruntime_genai or openvino_genai"
                             % request.runtime)
    except (KeyError, ValueError) as exc:
        return _error(request, ERROR_INPUT, str(exc.args[0]) if exc.args else str(exc))
    except runtimes.RuntimeMissing as exc:
        return _error(request, ERROR_RUNTIME_MISSING, str(exc))
    env = environment.collect({rt.name: rt.version()})
    deadline = time.monotonic() + request.max_duration_s
    loads: List[Dict[str, Any]] = []
    emit({"event": "phase", "phase": "generate"})
    try:
        for threads in spec["threads"]:
            probed = next((ld for ld in loads if ld["kv_probe"].get("method") is not None), None)
            loads.append(_run_load(rt, request, spec, threads, deadline, probed))
    except (RuntimeError, ValueError, OSError) as exc:
        text = str(exc).strip().splitlines()
        return _error(request, ERROR_RUNTIME, "%s: %s" % (rt.name, text[0] if text else type(exc).__name__), env)
    raw = {"model": loads[0]["model"], "peak_reset": memory.reset_peak(),
           "loads": [{k: v for k, v in ld.items() if k not in ("cells", "model", "truncated")} for ld in loads],
           "cells": [c for ld in loads for c in ld["cells"]], "truncated": any(ld["truncated"] for ld in loads)}
    info: Dict[str, Any] = {"name": rt.name, "version": rt.version()}
    info.update(rt.details())
    return RawRun(status=STATUS_OK, request=request.to_dict(), runtime=info, environment=env,
                  load_ms=loads[0]["load_ms"], truncated=raw["truncated"], generate=raw,
                  memory_kb={"baseline": loads[0]["rss_before_kb"], "peak": memory.vm_hwm_kb()},
                  agent_version=__version__)


def _error(request: Request, kind: str, message: str, env: Optional[Dict[str, Any]] = None) -> RawRun:
    return RawRun(status=STATUS_ERROR, error=message, error_kind=kind, request=request.to_dict(),
                  environment=env or {}, agent_version=__version__)
