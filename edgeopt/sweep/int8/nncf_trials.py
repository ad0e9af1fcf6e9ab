"""NNCF's accuracy-controlled quantization (:mod:`.nncf_candidate`) as one device trial of the INT8 search on each
runtime that offers the NNCF backend (OpenVINO), when ``--nncf-budget-s`` allows it; and NNCF's repairs
(:mod:`.nncf_repair`: range estimator, bias correction, SmoothQuant) tried on the host before that runtime's float set.

Functions of one running search (:class:`.core.SearchCore`), whose trials, budget and choices they share.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from ...calib import DataSource
from ...errors import EdgeoptError
from ...evaluation import retention as metric_retention
from ...registry.runtime_sweep import Int8Backend
from .core import SearchCore
from .latency import int8_runtimes
from .nncf_candidate import eval_samples
from .nncf_repair import (
    REPAIR_ALLOWANCE_S,
    NncfRepair,
    expected_seconds,
    host_retention,
    ov_outputs,
    quantize_ir,
    repairs_for,
    try_repairs,
)
from .repair_bounds import repair_bounds
from .steps import QUANT_OPS

CALIBRATION_SAMPLES = 64  # as the quantize_int8 pass's default


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


def nncf_repairs(s: SearchCore, runtime: str, qdq: onnx.ModelProto) -> bool:
    """NNCF's repairs (:mod:`.nncf_repair`) built and scored on the host, cheapest first; the first that keeps the
    threshold there gets one device trial on ``runtime``. True when that trial passes (the runtime's choice, no
    float set needed); what was tried is in ``s.nncf_repairs[runtime]``. ``qdq`` (the search's INT8 model) bounds
    what each kind of repair can reach before one is built (:mod:`.repair_bounds`)."""
    record: dict[str, Any] = {}
    s.nncf_repairs[runtime] = record
    try:
        repairs, skipped = repairs_for(s.base_m)
        calib = DataSource(Path(str(s.plan.calib))).samples(s.model, limit=CALIBRATION_SAMPLES)
        feeds, shapes = eval_samples(s.ctx.eval_npz)
        t0 = time.process_time()  # CPU-s, as the allowance (nncf_repair.REPAIR_ALLOWANCE_S)
        ref, _ = ov_outputs(s.model, feeds, shapes)
    except EdgeoptError as exc:
        record["skipped"] = str(exc)
        s.emit({"event": "info", "message": f"int8 search: no NNCF repairs on {runtime} ({exc})"})
        return False
    record["not_applicable"] = skipped
    allowance = s.plan.nncf_budget_s or REPAIR_ALLOWANCE_S
    expect = expected_seconds(time.process_time() - t0, len(feeds), len(calib))
    record.update(allowance_cpu_s=allowance, expected_cpu_s=round(expect, 1))
    if expect > allowance:
        record["skipped"] = (f"NNCF's quantization of this model should take ~{expect:.0f} CPU-s on the host, over the "
                             f"{allowance:g} CPU-s allowance (--nncf-budget-s gives a larger one)")
        s.emit({"event": "info", "message": f"int8 search: no NNCF repairs on {runtime}: {record['skipped']}"})
        return False

    def retention(outs: list[np.ndarray], names: list[str]) -> float:
        want = s.ctx.selection.pick(ref, names)
        return metric_retention(s.ctx.metric, want, s.ctx.selection.pick(outs, names).astype(want.dtype, copy=False),
                                s.ctx.labels)[1]

    def build(rep: NncfRepair) -> tuple[Path, float, float]:
        xml = s.plan.out / "nncf-repair" / rep.name / "model.xml"
        seconds = quantize_ir(s.model, xml, rep, calib, shapes)
        return xml, seconds, host_retention(xml, feeds, retention, shapes)

    baseline = (s.range_repair or {}).get("whole_model", {}).get("minmax")  # min-max INT8 on the host, if measured
    bound = repair_bounds(qdq, s.base_m, lambda m: s.host_eval().score(m)[0], s.ctx.min_retention, QUANT_OPS)
    rows, winner = try_repairs(repairs, build, s.ctx.min_retention, budget=lambda: s.budget_left(device=False),
                               allowance_s=allowance, baseline=baseline, cannot_pass=lambda rep: bound(rep.kind))
    record["candidates"] = rows
    if winner is None or not s.budget_left():
        return False
    rep, xml = winner
    ret = next(r["host_retention"] for r in rows if r["name"] == rep.name)
    return _confirm(s, runtime, rep.name, rep.options, f"{rep.repairs}: host retention {ret:.4f}", xml)


def _confirm(s: SearchCore, runtime: str, name: str, options: dict[str, Any], why: str, xml: Path) -> bool:
    """One device trial of the NNCF repair ``name``'s IR on ``runtime``; its choice there when it passes."""
    cfg: dict[str, Any] = {"nncf_repair": {"name": name, "options": options, "why": why}}
    label = f"nncf repair on {runtime}: {name}"
    lvl = s.run_level({"int8-search": cfg, "base": s.model.name}, "int8-search", runtime, lambda: xml,
                      {"search": label, "config": cfg, "float_nodes": []}, keep=False)
    s.record_trial(label, cfg, lvl)
    s.nncf_repairs[runtime]["confirmed"] = {"name": name, "retention": lvl.retention, "passed": lvl.passed}
    if lvl.passed:
        s.chosen_by_rt[runtime] = s.state.trials[-1]
    return lvl.passed
