"""The INT8 search's low-precision branch (:mod:`.precision`: OpenVINO on a CPU with BF16): the latency-aware
search again with the float parts of the mix at the runtime's low precision, its device trials, and the mix kept as
level ``int8-search+bf16`` (the branch's passing choice, else the f32 branch's mix measured at low precision).

Functions of one running search (:class:`.core.SearchCore`), whose trials, budget and choices they share.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import onnx

from ...fsutil import atomic_write_bytes
from ..result import Int8Trial, Level
from .core import SearchCore
from .float_sets import FREE_MS, TRIAL_LABEL
from .latency import float_set, gains
from .precision import LowBranch
from .qdq_surgery import keep_float
from .steps import QUANT_OPS


def low_search(s: SearchCore, branch: LowBranch, full: Level, qdq: onnx.ModelProto, nodes: list[str],
               q_cfg: dict[str, Any]) -> None:
    """The latency-aware search again with the float parts at ``branch``'s precision: its own gains (float
    parts at low precision vs INT8), float set and device trial there."""
    rt = branch.runtime
    if not s.budget_left():
        return
    gain = gains(s.ctx, s.cache, s.base, Path(full.artifact), nodes, rt, {"op_types_to_quantize": QUANT_OPS}, s.emit,
                 options=branch.options, precision=branch.precision)  # keyed by the graph: repaired ranges keep it
    info: dict[str, Any] = {"quantized_nodes": len(nodes), "profiled": bool(gain), "precision": branch.precision}
    s.low_float_sets[rt] = info
    if gain and max(gain.values()) < FREE_MS:
        info.update(strategy="none", evaluations=0, float_nodes=len(nodes))
        s.emit({"event": "info", "message": f"int8 search on {rt}: no INT8 kernel is faster than "
                                            f"{branch.precision}; the plain {branch.low.level} level stands"})
        return
    head = s.plan.headroom.get(rt)
    choice = float_set(s.ctx, s.model, qdq, s.base_m, nodes, gain, rt,
                       s.plan.out / f"float-set-{rt}-{branch.precision}", QUANT_OPS,
                       lambda: s.budget_left(device=False), options=branch.options,
                       resolution_ms=head.resolution_ms if head is not None else None)
    info.update(strategy=choice.strategy, evaluations=choice.evaluations, float_nodes=len(choice.float_nodes),
                **({"ended": choice.ended} if choice.ended else {}))
    if choice.strategy == "none" or not s.budget_left():
        return
    low_trial(s, branch, f"{TRIAL_LABEL} on {rt} ({branch.precision}): {len(choice.float_nodes)} float nodes",
              q_cfg, qdq, choice.float_nodes)


def low_trial(s: SearchCore, branch: LowBranch, label: str, q_cfg: dict[str, Any], qdq: onnx.ModelProto | None,
              float_nodes: list[str], artifact: Path | None = None) -> tuple[Int8Trial, Level]:
    """One device trial of a mix with ``branch``'s float precision (``artifact``: an existing one, e.g. the
    f32 branch's choice); the runtime's choice there when it passes and the runtime ran it low."""
    cfg = {**q_cfg, "nodes_to_exclude": sorted(float_nodes)}
    path = artifact or s.plan.out / f"trial-{len(s.state.trials)}" / "mixed.onnx"

    def make() -> Path:
        if artifact is None and qdq is not None:
            atomic_write_bytes(path, keep_float(qdq, s.base_m, float_nodes, QUANT_OPS).SerializeToString())
        return path

    lvl = s.run_level({"int8-search": cfg, "base": s.base.name}, branch.level, branch.runtime, make,
                      {"search": label, "config": cfg, "float_nodes": sorted(float_nodes),
                       "float_precision": branch.precision}, keep=False, options=branch.options)
    s.record_trial(label, cfg, lvl, branch.precision)
    if lvl.passed and branch.ran_low(lvl.details):
        s.chosen_low_by_rt[branch.runtime] = s.state.trials[-1]
    return s.state.trials[-1], lvl


def adopt_low(s: SearchCore, branch: LowBranch, chosen: Int8Trial | None, info: dict[str, Any]) -> None:
    """The runtime's mix with low-precision float parts as level ``int8-search+bf16``: the low branch's passing
    choice, else the f32 branch's chosen mix measured at low precision (one trial beyond ``max_trials``), kept
    even when it misses the threshold (the table then shows what the runtime's default precision costs)."""
    rt = branch.runtime
    low = s.chosen_low_by_rt.get(rt)
    if low is None:
        if chosen is None:
            return
        low, lvl = low_trial(s, branch, f"{chosen.label} ({branch.precision} float parts)", chosen.config,
                             None, list(chosen.config.get("nodes_to_exclude", [])),
                             artifact=Path(chosen.artifact))
        if not branch.ran_low(lvl.details):
            s.emit({"event": "info", "message": f"int8 search on {rt}: the mix did not run in "
                                                f"{branch.precision} with the runtime's defaults; no "
                                                f"{branch.level} level"})
            return
    cfg = low.config
    s.run_level({"int8-search": cfg, "base": s.base.name}, branch.level, rt,
                functools.partial(Path, low.artifact),
                {**info, "search": low.label, "config": cfg, "float_nodes": cfg.get("nodes_to_exclude", []),
                 "float_precision": branch.precision, "searched_on": low.runtime}, options=branch.options)
