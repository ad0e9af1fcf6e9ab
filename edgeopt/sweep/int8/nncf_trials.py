"""NNCF's accuracy-controlled quantization (:mod:`.nncf_candidate`) as one device trial of the INT8 search on each
runtime that offers the NNCF backend (OpenVINO), when ``--nncf-budget-s`` allows it.

Functions of one running search (:class:`.core.SearchCore`), whose trials, budget and choices they share.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...registry.runtime_sweep import Int8Backend
from .core import SearchCore
from .latency import int8_runtimes


def nncf_trials(s: SearchCore) -> None:
    """NNCF's accuracy-controlled quantization (:mod:`.nncf_candidate`) as one device trial on each runtime that
    offers the NNCF backend (OpenVINO), when enabled."""
    if s.plan.nncf_budget_s <= 0:
        return
    for rt in int8_runtimes(s.plan.rts, Int8Backend.NNCF):
        _trial(s, rt)


def _trial(s: SearchCore, runtime: str) -> None:
    """One NNCF trial on ``runtime`` when the search's time allows it; the runtime's choice when it passes."""
    budget = s.plan.nncf_budget_s
    if not s.budget_left():
        return
    if s.deadline - time.perf_counter() < budget:
        s.emit({"event": "info", "message": f"int8 search: less than --nncf-budget-s {budget:g} s left; "
                                        "NNCF accuracy control skipped"})
        return
    from .nncf_candidate import NNCF_MAX_ITERATIONS, nncf_candidate

    cfg: dict[str, Any] = {"nncf_accuracy_control": {"max_num_iterations": NNCF_MAX_ITERATIONS,
                                                     "min_retention": s.ctx.min_retention}}
    xml = s.plan.out / f"trial-{len(s.state.trials)}" / "nncf.xml"
    info: dict[str, Any] = {}

    def make() -> Path:
        cand = nncf_candidate(s.ctx, s.model, xml, runtime)
        info.update(seconds=cand.seconds, fake_quantize_ops=cand.fake_quantize_ops)
        if cand.seconds > budget:
            s.emit({"event": "info", "message": f"int8 search: NNCF accuracy control took {cand.seconds:g} s "
                                            f"(--nncf-budget-s {budget:g})"})
        return cand.path

    lvl = s.run_level({"int8-search": cfg, "base": s.model.name}, "int8-search", runtime, make,
                      lambda: {"search": "nncf accuracy control", "config": cfg, "float_nodes": [],
                               "nncf": dict(info)}, keep=False)
    s.record_trial("nncf accuracy control", cfg, lvl)
    row, cur = s.state.trials[-1], s.chosen_by_rt.get(runtime)
    if lvl.passed and (cur is None or lvl.latency_ms < cur.latency_ms):
        s.chosen_by_rt[runtime] = row
