"""An honest board's ``generate`` readings and the lies told about them (tests/fake_agent.py's ``llm_*`` modes;
docs/reliability.md, "Untrusted device: new surfaces"): no LLM is loaded, the numbers are written here."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any


def _request(opts: dict[str, str]) -> dict[str, Any]:
    where = opts.get("--request", "-")
    return json.loads(sys.stdin.read() if where in ("-", "") else Path(where).read_text())


def _rep(gen_tokens: int, ttft_ns: int = 5_000_000, token_ns: int = 2_000_000) -> dict[str, Any]:
    tokens = [token_ns] * (gen_tokens - 1)
    return {"ttft_ns": ttft_ns, "prefill_ns": ttft_ns - 100_000, "token_ns": tokens, "e2e_ns": ttft_ns + sum(tokens),
            "tokens_out": gen_tokens, "rss_before_kb": 90_000, "rss_after_kb": 91_000, "peak_rss_kb": 95_000,
            "kv": {"dtype_bytes": 4, "shape": [1, 2, 64, 16]}, "start_s": 0.0}


def llm_result(request: dict[str, Any]) -> dict[str, Any]:
    """What an honest board's agent returns for ``generate`` (edgeopt_agent.generate's keys): 5 ms to the first
    token, 2 ms per later token, every cell of the request's grid."""
    from edgeopt_agent import environment
    from edgeopt_agent.protocol import PROTOCOL_VERSION

    spec, loads, cells = request["generate"], [], []
    for threads in spec["threads"]:
        loads.append({"threads": threads, "load_ms": 120.0, "rss_before_kb": 50_000, "rss_after_kb": 90_000,
                      "power": {}, "trace": None, "trim": None,
                      "kv_probe": {"method": None, "points": [], "note": "disabled (--no-kv-probe)"}})
        for p, g, d, b in itertools.product(spec["prompt_tokens"], spec["gen_tokens"], spec["context_depth"],
                                            spec["batch"]):
            cells.append({"prompt_tokens": p, "gen_tokens": g, "context_depth": d, "batch": b, "threads": threads,
                          "warmup": spec.get("warmup", 1), "unsupported": None, "energy": None,
                          "reps": [_rep(g) for _ in range(spec["repetitions"])]})
    model = {"layers": 2, "kv_heads": 2, "head_size": 16, "vocab_size": 512, "context_length": 1024,
             "source": "genai_config.json"}
    return {"status": "ok", "request": request, "runtime": {"name": "onnxruntime_genai", "version": "0.5.0"},
            "environment": environment.collect({}), "agent_version": "fake", "protocol_version": PROTOCOL_VERSION,
            "generate": {"model": model, "loads": loads, "cells": cells, "truncated": False}}


def _llm(change: Any) -> Any:
    """A lie about the first cell (``change(cell, result)`` edits it in place)."""
    def lie(result: dict[str, Any]) -> str:
        change(result["generate"]["cells"][0], result)
        return json.dumps(result)
    return lie


def _every_rep(key: str, value: Any) -> Any:
    def change(cell: dict[str, Any], result: dict[str, Any]) -> None:
        for rep in cell["reps"]:
            rep[key] = value(rep) if callable(value) else value
    return change


def _llm_inject(cell: dict[str, Any], result: dict[str, Any]) -> None:
    from tests.fake_agent import INJECT  # the one poisoned string (imported when the lie is told)

    cell["unsupported"], cell["reps"] = INJECT, []
    result["runtime"]["version"] = INJECT


LLM_LIES: dict[str, Any] = {
    "llm_same": _llm(lambda cell, result: None),
    "llm_inject": _llm(_llm_inject),
    "llm_nan": _llm(_every_rep("ttft_ns", float("nan"))),
    "llm_negative": _llm(_every_rep("token_ns", lambda rep: [-2_000_000] * len(rep["token_ns"]))),
    "llm_zero": _llm(_every_rep("token_ns", lambda rep: [0] * len(rep["token_ns"]))),
    "llm_after_last": _llm(_every_rep("e2e_ns", 1_000)),
    "llm_extra_tokens": _llm(_every_rep("token_ns", lambda rep: [2_000_000] * 10_000)),
    "llm_nan_load": _llm(lambda cell, result: result["generate"]["loads"][0].update(load_ms=float("nan"))),
    "llm_type_tokens": _llm(_every_rep("token_ns", "fast")),
    "llm_type_rep": _llm(lambda cell, result: cell.update(reps=[[1, 2]])),
    "llm_missing": _llm(lambda cell, result: [rep.pop("e2e_ns") for rep in cell["reps"]]),
    "llm_no_load": _llm(lambda cell, result: cell.update(threads=7)),
    "llm_facts": _llm(lambda cell, result: result["generate"]["model"].update(layers="two")),
    "llm_zero_batch": _llm(lambda cell, result: cell.update(batch=0)),
    "llm_no_cells": _llm(lambda cell, result: result["generate"].update(cells=[])),
}
