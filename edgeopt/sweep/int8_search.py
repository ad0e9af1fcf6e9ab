"""Accuracy-aware INT8: when plain INT8 misses the threshold, search for the fastest INT8 config that meets it.

1. Quantizer variants (calibration method, the target's ``reduce_range`` flipped, S8 activations, per-tensor
   weights): each calibrated, evaluated on the device and benchmarked.
2. Per-node sensitivity on the most accurate variant, on the host: for every quantized node, the model with only
   that node quantized (all others put back in float by a graph edit, :mod:`.qdq_surgery`) is scored with the
   sweep's metric on a few samples; most retention lost (then relative output error) first.
3. Exclusion sets, narrowed on the host: the smallest prefix of the ranking (1, 2, 4, ... then bisected) that
   meets the threshold, then each float node put back in INT8 while the threshold still holds (least sensitive
   first).
4. The candidates are measured on the device, which decides pass/fail; while the device disagrees with the host,
   the float set grows. Among passing trials the fastest p50 wins (not the first found).
Every device trial counts toward ``max_trials``; the whole search stops at ``max_seconds``. After every device
trial ``best.onnx`` holds the fastest passing model so far (or, while none passes, the most accurate one).

On a runtime with a low-precision branch (:mod:`.int8_precision`: OpenVINO on a CPU with BF16) the latency-aware
search runs a second time with the float parts at that precision; its passing mix (or, when that branch found none,
the f32 branch's mix measured at that precision, pass or fail) is kept as level ``int8-search+bf16``.
"""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from ..fsutil import atomic_write_bytes
from ..optimize import optimize
from ..passes.int8_target import int8_defaults
from ..registry import format_for_suffix, runtime_loads
from ..registry.runtime_sweep import Int8Backend
from ..targets import load_registry
from .host_eval import HostEval
from .int8_latency import float_set, gains, int8_runtimes
from .int8_precision import LowBranch
from .int8_steps import QUANT_OPS, float_base, narrow, node_sensitivity, search_recipe, variants
from .latency_rank import FREE_MS
from .levels import LevelRunner
from .measure import Context
from .qdq_surgery import keep_float, quantized_nodes
from .result import HostCheck, Int8SearchResult, Int8Trial, Level, SensitivityRow
from .sensitivity_cache import SensitivityCache


@dataclass
class SearchState:
    """What the search has measured so far: every trial, the fastest passing one and the most accurate one."""

    trials: list[Int8Trial] = field(default_factory=list)
    best: Int8Trial | None = None
    closest: Int8Trial | None = None
    sensitivity: list[SensitivityRow] = field(default_factory=list)
    host_checks: list[HostCheck] = field(default_factory=list)

    def record(self, label: str, cfg: dict[str, Any], lvl: Level, precision: str | None = None) -> Int8Trial:
        """Add a trial; update the fastest passing and the most accurate (f32 float parts only: a low-precision
        trial is its branch's)."""
        row = Int8Trial(trial=len(self.trials), label=label, config=cfg, retention=lvl.retention,
                        latency_ms=lvl.latency_ms, passed=lvl.passed, artifact=lvl.artifact, runtime=lvl.runtime,
                        precision=precision)
        self.trials.append(row)
        if precision is not None:
            return row
        if lvl.passed and (self.best is None or lvl.latency_ms < self.best.latency_ms):
            self.best = row
        if self.closest is None or lvl.retention > self.closest.retention:
            self.closest = row
        return row

    @property
    def keeper(self) -> Int8Trial | None:
        """The model ``best.onnx`` holds: the fastest passing trial, else the most accurate."""
        return self.best or self.closest


@dataclass(frozen=True)
class SearchPlan:
    """The search's inputs.

    Attributes:
        runtime: the runtime the trials run on. rts: every runtime of the sweep (the chosen config runs on each).
        out: the search's directory (trials, base model, ``best.onnx``). calib: calibration data.
        max_trials: most device trials. max_seconds: time bound of the whole search, s.
        targets_dirs: extra target directories. nncf_budget_s: when > 0, NNCF's accuracy-controlled quantization
        is tried as a candidate on each runtime of the sweep that offers the NNCF INT8 backend (OpenVINO) if at
        least this much search time is left (0: off). gains_dir: where per-node sensitivities and latency gains are
        cached (None: ``out/gains``); a fleet sweep shares one between its devices, so the host's sensitivity
        scoring is reused across them. low_precision: runtime -> its low-precision branch
        (:func:`.int8_precision.low_branches`; empty: f32 float parts only). skip: runtimes whose latency-aware
        search (and low-precision branch) is skipped, with why (:func:`.int8_latency.hopeless_runtimes`); the
        chosen config is still measured there.
    """

    runtime: str
    rts: tuple[str, ...]
    out: Path
    calib: Path | str
    max_trials: int
    max_seconds: float
    targets_dirs: tuple[Path, ...] = ()
    nncf_budget_s: float = 0.0
    gains_dir: Path | None = None
    low_precision: dict[str, LowBranch] = field(default_factory=dict)
    skip: dict[str, str] = field(default_factory=dict)


class Int8Search:
    """One accuracy-aware INT8 search (module docstring): variants, then host-narrowed float sets on the device."""

    def __init__(self, model: Path, ctx: Context, plan: SearchPlan, run_level: LevelRunner,
                 emit: Callable[[dict[str, Any]], None]) -> None:
        self.started = time.perf_counter()
        self.deadline = self.started + plan.max_seconds
        self.ctx, self.plan, self.run_level, self.emit = ctx, plan, run_level, emit
        plan.out.mkdir(parents=True, exist_ok=True)
        self.base = float_base(model, plan.out, ctx.target, plan.targets_dirs)
        self.base_m = onnx.load(str(self.base))
        self.state = SearchState()
        self.model = model
        self.cache = SensitivityCache(plan.gains_dir or plan.out / "gains")
        self.chosen_by_rt: dict[str, Int8Trial] = {}
        self.float_sets: dict[str, dict[str, Any]] = {}
        self.chosen_low_by_rt: dict[str, Int8Trial] = {}
        self.low_float_sets: dict[str, dict[str, Any]] = {}

    def budget_left(self, device: bool = True) -> bool:
        """Time left, and (for a device trial) trials left."""
        return (not device or len(self.state.trials) < self.plan.max_trials) and time.perf_counter() < self.deadline

    def run(self) -> Int8SearchResult:
        """Variants first; when none passes, sensitivity-ranked float sets; the chosen config on every runtime."""
        tgt = load_registry(extra_dirs=self.plan.targets_dirs).get(self.ctx.target)
        tried: list[tuple[Level, str, dict[str, Any]]] = []
        first, *rest = variants(int8_defaults(tgt).reduce_range)
        tried.append((self.quantized_trial(*first), *first))
        if not tried[0][0].passed and Path(tried[0][0].artifact).is_file():
            self.latency_searches(tried[0][0])
        if not tried[0][0].passed:
            self.nncf_trial()
        for label, cfg in rest:  # no latency-aware set passed: the quantizer variants, then host-ranked sets
            if self.state.best is not None or not self.budget_left():
                break
            tried.append((self.quantized_trial(label, cfg), label, cfg))
        top = self._most_accurate(tried)
        if top is not None and self.state.best is None and self.budget_left():
            self.refine(*top)
        self.adopt()
        return self.result()

    def latency_searches(self, full: Level) -> None:
        """On every INT8 runtime: the cheapest float set there (:mod:`.int8_latency`), then one device trial."""
        qdq = onnx.load(full.artifact)
        nodes = quantized_nodes(qdq, QUANT_OPS)
        q_cfg: dict[str, Any] = {"op_types_to_quantize": QUANT_OPS}
        for rt in int8_runtimes(self.plan.rts):
            if rt in self.plan.skip:
                continue
            if not self.budget_left():
                break
            gain = gains(self.ctx, self.cache, self.base, Path(full.artifact), nodes, rt, q_cfg, self.emit)
            choice = float_set(self.ctx, self.model, qdq, self.base_m, nodes, gain, rt,
                               self.plan.out / f"float-set-{rt}", QUANT_OPS, lambda: self.budget_left(device=False))
            self.float_sets[rt] = {"strategy": choice.strategy, "evaluations": choice.evaluations,
                                   "float_nodes": len(choice.float_nodes), "quantized_nodes": len(nodes),
                                   "profiled": bool(gain)}
            if choice.strategy != "none" and self.budget_left():
                lvl = self.float_trial(f"latency-aware on {rt}: {len(choice.float_nodes)} float nodes", q_cfg, qdq,
                                       choice.float_nodes, runtime=rt)
                if lvl.passed:
                    self.chosen_by_rt[rt] = self.state.trials[-1]
            if rt in self.plan.low_precision:
                self.low_search(self.plan.low_precision[rt], full, qdq, nodes, q_cfg)

    def low_search(self, branch: LowBranch, full: Level, qdq: onnx.ModelProto, nodes: list[str],
                   q_cfg: dict[str, Any]) -> None:
        """The latency-aware search again with the float parts at ``branch``'s precision: its own gains (float
        parts at low precision vs INT8), float set and device trial there."""
        rt = branch.runtime
        if not self.budget_left():
            return
        gain = gains(self.ctx, self.cache, self.base, Path(full.artifact), nodes, rt, q_cfg, self.emit,
                     options=branch.options, precision=branch.precision)
        info: dict[str, Any] = {"quantized_nodes": len(nodes), "profiled": bool(gain), "precision": branch.precision}
        self.low_float_sets[rt] = info
        if gain and max(gain.values()) < FREE_MS:
            info.update(strategy="none", evaluations=0, float_nodes=len(nodes))
            self.emit({"event": "info", "message": f"int8 search on {rt}: no INT8 kernel is faster than "
                                                   f"{branch.precision}; the plain {branch.low.level} level stands"})
            return
        choice = float_set(self.ctx, self.model, qdq, self.base_m, nodes, gain, rt,
                           self.plan.out / f"float-set-{rt}-{branch.precision}", QUANT_OPS,
                           lambda: self.budget_left(device=False), options=branch.options)
        info.update(strategy=choice.strategy, evaluations=choice.evaluations, float_nodes=len(choice.float_nodes))
        if choice.strategy == "none" or not self.budget_left():
            return
        self.low_trial(branch, f"latency-aware on {rt} ({branch.precision}): {len(choice.float_nodes)} float nodes",
                       q_cfg, qdq, choice.float_nodes)

    def low_trial(self, branch: LowBranch, label: str, q_cfg: dict[str, Any], qdq: onnx.ModelProto | None,
                  float_nodes: list[str], artifact: Path | None = None) -> tuple[Int8Trial, Level]:
        """One device trial of a mix with ``branch``'s float precision (``artifact``: an existing one, e.g. the
        f32 branch's choice); the runtime's choice there when it passes and the runtime ran it low."""
        cfg = {**q_cfg, "nodes_to_exclude": sorted(float_nodes)}
        path = artifact or self.plan.out / f"trial-{len(self.state.trials)}" / "mixed.onnx"

        def make() -> Path:
            if artifact is None and qdq is not None:
                atomic_write_bytes(path, keep_float(qdq, self.base_m, float_nodes, QUANT_OPS).SerializeToString())
            return path

        lvl = self.run_level({"int8-search": cfg, "base": self.base.name}, branch.level, branch.runtime, make,
                             {"search": label, "config": cfg, "float_nodes": sorted(float_nodes),
                              "float_precision": branch.precision}, keep=False, options=branch.options)
        self._record(label, cfg, lvl, branch.precision)
        if lvl.passed and branch.ran_low(lvl.details):
            self.chosen_low_by_rt[branch.runtime] = self.state.trials[-1]
        return self.state.trials[-1], lvl

    def nncf_trial(self) -> None:
        """NNCF's accuracy-controlled quantization (:mod:`.int8_nncf`) as one device trial on each runtime that
        offers the NNCF backend (OpenVINO), when enabled."""
        if self.plan.nncf_budget_s <= 0:
            return
        for rt in int8_runtimes(self.plan.rts, Int8Backend.NNCF):
            self._nncf_trial(rt)

    def _nncf_trial(self, runtime: str) -> None:
        """One NNCF trial on ``runtime`` when the search's time allows it; the runtime's choice when it passes."""
        budget = self.plan.nncf_budget_s
        if not self.budget_left():
            return
        if self.deadline - time.perf_counter() < budget:
            self.emit({"event": "info", "message": f"int8 search: less than --nncf-budget-s {budget:g} s left; "
                                                   "NNCF accuracy control skipped"})
            return
        from .int8_nncf import NNCF_MAX_ITERATIONS, nncf_candidate

        cfg: dict[str, Any] = {"nncf_accuracy_control": {"max_num_iterations": NNCF_MAX_ITERATIONS,
                                                         "min_retention": self.ctx.min_retention}}
        xml = self.plan.out / f"trial-{len(self.state.trials)}" / "nncf.xml"
        info: dict[str, Any] = {}

        def make() -> Path:
            cand = nncf_candidate(self.ctx, self.model, xml, runtime)
            info.update(seconds=cand.seconds, fake_quantize_ops=cand.fake_quantize_ops)
            if cand.seconds > budget:
                self.emit({"event": "info", "message": f"int8 search: NNCF accuracy control took {cand.seconds:g} s "
                                                       f"(--nncf-budget-s {budget:g})"})
            return cand.path

        lvl = self.run_level({"int8-search": cfg, "base": self.model.name}, "int8-search", runtime, make,
                             lambda: {"search": "nncf accuracy control", "config": cfg, "float_nodes": [],
                                      "nncf": dict(info)}, keep=False)
        self._record("nncf accuracy control", cfg, lvl)
        row, cur = self.state.trials[-1], self.chosen_by_rt.get(runtime)
        if lvl.passed and (cur is None or lvl.latency_ms < cur.latency_ms):
            self.chosen_by_rt[runtime] = row

    def _most_accurate(self, tried: list[tuple[Level, str, dict[str, Any]]]
                       ) -> tuple[Level, str, dict[str, Any]] | None:
        if not tried:
            return None
        top = max(tried, key=lambda t: (t[0].retention, -t[0].latency_ms))
        if not Path(top[0].artifact).is_file():  # a cached trial whose file was deleted since
            self.emit({"event": "info", "message": f"int8 search: {top[0].artifact} is gone; run with --no-cache "
                                                   "to redo it"})
            return None
        return top

    def _record(self, label: str, cfg: dict[str, Any], lvl: Level, precision: str | None = None) -> None:
        row = self.state.record(label, cfg, lvl, precision)
        self.emit({"event": "int8_trial", **row.model_dump(mode="json", exclude={"config"})})
        out = self.plan.out
        keep = lvl.artifact.endswith(".onnx") and Path(lvl.artifact).is_file()  # best.onnx: ONNX trials only
        if self.state.keeper is row and keep:  # always keep the best model found so far
            shutil.copyfile(lvl.artifact, out / "best.onnx.tmp")
            (out / "best.onnx.tmp").replace(out / "best.onnx")

    def quantized_trial(self, label: str, cfg: dict[str, Any]) -> Level:
        """The base model quantized with the variant ``cfg``, measured on the device."""
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **cfg}
        n = len(self.state.trials)
        recipe = search_recipe(f"int8-search-{n}", [{"pass": "quantize_int8", "config": q_cfg}])
        trial_dir = self.plan.out / f"trial-{n}"

        def make() -> Path:
            res = optimize(self.base, target=self.ctx.target, recipe=recipe, calib=self.plan.calib, out_dir=trial_dir,
                           fidelity=False, bench=False, targets_dirs=self.plan.targets_dirs)
            return Path(res.final.path)

        lvl = self.run_level({"int8-search": q_cfg, "base": self.base.name}, "int8-search", self.plan.runtime, make,
                             {"search": label, "config": q_cfg, "float_nodes": []}, keep=False)
        self._record(label, q_cfg, lvl)
        return lvl

    def float_trial(self, label: str, q_cfg: dict[str, Any], qdq: onnx.ModelProto, float_nodes: list[str],
                    runtime: str | None = None) -> Level:
        """``qdq`` with ``float_nodes`` put back in float (a graph edit), measured on the device (``runtime``: the
        plan's by default)."""
        cfg = {**q_cfg, "nodes_to_exclude": sorted(float_nodes)}
        path = self.plan.out / f"trial-{len(self.state.trials)}" / "mixed.onnx"

        def make() -> Path:
            atomic_write_bytes(path, keep_float(qdq, self.base_m, float_nodes, QUANT_OPS).SerializeToString())
            return path

        lvl = self.run_level({"int8-search": cfg, "base": self.base.name}, "int8-search", runtime or self.plan.runtime,
                             make, {"search": label, "config": cfg, "float_nodes": sorted(float_nodes)}, keep=False)
        self._record(label, cfg, lvl)
        return lvl

    def refine(self, top: Level, top_label: str, top_cfg: dict[str, Any]) -> None:
        """Rank nodes on the host, narrow float sets there, measure the candidates; grow while the device fails."""
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **top_cfg}
        qdq = onnx.load(top.artifact)
        host = HostEval(self.base_m, self.ctx.eval_npz, self.ctx.metric, self.ctx.selection, self.ctx.labels)
        sens = node_sensitivity(qdq, self.base_m, host, self.deadline)
        self.state.sensitivity = [SensitivityRow(node=n, retention_lost=r, rel_err=e) for n, r, e in sens]
        ranking = [name for name, _, _ in sens]

        def host_passes(float_nodes: list[str]) -> bool:
            ret, rel = host.score(keep_float(qdq, self.base_m, float_nodes, QUANT_OPS))
            self.state.host_checks.append(HostCheck(float_nodes=len(float_nodes), retention=round(ret, 6),
                                                    rel_err=round(rel, 6)))
            return ret >= self.ctx.min_retention

        candidates = narrow(ranking, host_passes, lambda: self.budget_left(device=False))
        size = len(candidates[-1]) if candidates else 1
        for float_nodes in candidates:
            if not self.budget_left():
                break
            if self.float_trial(f"{top_label} + {len(float_nodes)} float nodes", q_cfg, qdq, float_nodes).passed:
                break
        while ranking and self.state.best is None and size < len(ranking) and self.budget_left():
            size = min(len(ranking), size * 2)  # the device disagrees with the host: grow the float set
            self.float_trial(f"{top_label} + top {size} float nodes", q_cfg, qdq, ranking[:size])

    def _fastest_passing(self, rt: str) -> Int8Trial | None:
        """The fastest passing trial whose artifact loads on ``rt`` (an OpenVINO IR only where the registry says
        so); an artifact of no known suffix counts as loading."""
        ok = [t for t in self.state.trials if t.passed and t.precision is None and _loads_on(t.artifact, rt)]
        return min(ok, key=lambda t: t.latency_ms, default=None)

    def _cost_ms(self) -> float | None:
        """The chosen trial's p50 minus the first (default) variant's; None without either."""
        chosen, trials = self.state.best, self.state.trials
        return None if (chosen is None or not trials) else chosen.latency_ms - trials[0].latency_ms

    def adopt(self) -> None:
        """The chosen config as a level on every runtime (cached on the search runtime)."""
        for rt in self.plan.rts:  # each runtime its own latency-aware set, else the fastest passing trial
            chosen = self.chosen_by_rt.get(rt) or self._fastest_passing(rt)
            info: dict[str, Any] = {"latency_cost_ms_vs_naive_int8": self._cost_ms()}
            if chosen is not None:
                cfg, art = chosen.config, Path(chosen.artifact)
                info.update({"search": chosen.label, "config": cfg, "float_nodes": cfg.get("nodes_to_exclude", []),
                             "searched_on": chosen.runtime})
                self.run_level({"int8-search": cfg, "base": self.base.name}, "int8-search", rt,
                               functools.partial(Path, art), info)
            if rt in self.plan.low_precision:
                self.adopt_low(self.plan.low_precision[rt], chosen, info)

    def adopt_low(self, branch: LowBranch, chosen: Int8Trial | None, info: dict[str, Any]) -> None:
        """The runtime's mix with low-precision float parts as level ``int8-search+bf16``: the low branch's passing
        choice, else the f32 branch's chosen mix measured at low precision (one trial beyond ``max_trials``), kept
        even when it misses the threshold (the table then shows what the runtime's default precision costs)."""
        rt = branch.runtime
        low = self.chosen_low_by_rt.get(rt)
        if low is None:
            if chosen is None:
                return
            low, lvl = self.low_trial(branch, f"{chosen.label} ({branch.precision} float parts)", chosen.config,
                                      None, list(chosen.config.get("nodes_to_exclude", [])),
                                      artifact=Path(chosen.artifact))
            if not branch.ran_low(lvl.details):
                self.emit({"event": "info", "message": f"int8 search on {rt}: the mix did not run in "
                                                       f"{branch.precision} with the runtime's defaults; no "
                                                       f"{branch.level} level"})
                return
        cfg = low.config
        self.run_level({"int8-search": cfg, "base": self.base.name}, branch.level, rt,
                       functools.partial(Path, low.artifact),
                       {**info, "search": low.label, "config": cfg, "float_nodes": cfg.get("nodes_to_exclude", []),
                        "float_precision": branch.precision, "searched_on": low.runtime}, options=branch.options)

    def result(self) -> Int8SearchResult:
        """What was tried, the sensitivity ranking (top 20), host-side checks, the chosen trial and its cost."""
        st, chosen = self.state, self.state.best
        return Int8SearchResult(
            runtime=self.plan.runtime, trials=st.trials, chosen=chosen, sensitivity=st.sensitivity[:20],
            host_checks=st.host_checks, quantized_nodes=len(st.sensitivity),
            float_nodes=(chosen.config.get("nodes_to_exclude", []) if chosen is not None else []),
            latency_cost_ms_vs_naive_int8=self._cost_ms(),
            best_model=(chosen.artifact if chosen is not None and chosen.artifact.endswith(".xml") else
                        str(self.plan.out / "best.onnx") if st.trials else None),
            best_model_passed=chosen is not None,
            seconds=round(time.perf_counter() - self.started, 2), runtimes=list(self.float_sets),
            chosen_by_runtime=dict(self.chosen_by_rt), float_sets=dict(self.float_sets),
            chosen_low_precision_by_runtime=dict(self.chosen_low_by_rt),
            low_precision_float_sets=dict(self.low_float_sets), skipped_runtimes=dict(self.plan.skip),
        )


def _loads_on(artifact: str, runtime: str) -> bool:
    """Whether ``runtime`` loads the trial ``artifact``, its format told by its suffix (unknown: yes)."""
    fmt = format_for_suffix(Path(artifact))
    return fmt is None or runtime_loads(runtime, fmt.name)


def search_int8(model: Path, *, ctx: Context, plan: SearchPlan, run_level: LevelRunner,
                emit: Callable[[dict[str, Any]], None]) -> Int8SearchResult:
    """Run the search; the best passing config is added to the sweep's levels as ``int8-search``.

    Returns:
        What was tried (config, retention, latency, float nodes), the sensitivity ranking, host-side checks, the
        chosen trial and what its float nodes cost in latency vs the first (default) variant.
    """
    return Int8Search(model, ctx, plan, run_level, emit).run()
