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

Before any float set (when the default variant misses), the quantization error is repaired without float layers,
decided on the host and confirmed by one device trial: per-tensor calibration ranges (:mod:`.repair_step`, every
INT8 runtime), then NNCF's repairs on a runtime with the NNCF backend (:func:`.nncf_trials.nncf_repairs`); the
float-set search then starts from the range-repaired model. ``layers_by_runtime`` records per layer what was done.
Repairs, float sets and the fallback variants run only where the runtime's INT8 ceiling can still beat the fastest
passing level (:mod:`.cost_gate`); ``cost_gate`` records each decision, ``phase_seconds`` where the time went.

On a runtime with a low-precision branch (:mod:`.precision`: OpenVINO on a CPU with BF16) the latency-aware
search runs a second time with the float parts at that precision; its passing mix (or, when that branch found none,
the f32 branch's mix measured at that precision, pass or fail) is kept as level ``int8-search+bf16``
(:mod:`.low_search`); NNCF's accuracy control is one more trial (:mod:`.nncf_trials`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx

from ...fsutil import atomic_write_bytes
from ...optimize import optimize_graph
from ...passes.int8_target import int8_defaults
from ...passes.quantize_int8 import calibration_cache_supported
from ...registry import format_for_suffix, runtime_loads
from ...registry.runtime_sweep import Int8Backend
from ...targets import load_registry
from ..levels import LevelRunner
from ..measure import Context
from ..result import HostCheck, Int8SearchResult, Int8Trial, LayerRepair, Level, SensitivityRow
from .core import SearchCore, SearchPlan
from .float_sets import TRIAL_LABEL, FloatSetChoice, float_reasons
from .latency import float_set, gains, int8_runtimes
from .low_search import adopt_low, low_search
from .nncf_trials import nncf_repairs, nncf_trials
from .node_gains import float_cost
from .qdq_surgery import keep_float, quantized_nodes
from .repair_step import Repaired, layer_records, method_advanced, range_repair
from .steps import QUANT_OPS, narrow, node_sensitivity, search_recipe, variants


class Int8Search(SearchCore):
    """One accuracy-aware INT8 search (module docstring): variants, then host-narrowed float sets on the device."""

    def run(self) -> Int8SearchResult:
        """Variants first; when none passes, sensitivity-ranked float sets; the chosen config on every runtime."""
        tgt = load_registry(extra_dirs=self.plan.targets_dirs).get(self.ctx.target)
        tried: list[tuple[Level, str, dict[str, Any]]] = []
        first, *rest = [(label, self._cached(cfg)) for label, cfg in variants(int8_defaults(tgt).reduce_range)]
        tried.append((self.quantized_trial(*first), *first))  # its min-max ranges cached for the range repair
        if not tried[0][0].passed and Path(tried[0][0].artifact).is_file():
            searched = [rt for rt in int8_runtimes(self.plan.rts) if rt not in self.plan.skip]
            worth = [rt for rt in searched if self.worth(rt, "range_repair")]  # the cost gate (:mod:`.cost_gate`)
            if searched and not worth:
                self.range_repair = {"skipped": "cost gate: no searched runtime's INT8 ceiling can beat the fastest "
                                                "passing level (int8_search.cost_gate says why)"}
            with self.timed("range_repair"):
                repaired = range_repair(self, self._default_model(tried[0])) if worth else None
            self.latency_searches(tried[0][0], repaired)
        if not tried[0][0].passed:
            with self.timed("nncf_accuracy_control"):
                nncf_trials(self)
        fallback = self.state.best is None and self.budget_left()
        if fallback and not tried[0][0].passed and not self.worth(self.plan.runtime, "variants_and_refine"):
            fallback = False  # every variant is all-INT8 and every refined set a mix: none can beat the best level
        for label, cfg in rest if fallback else []:  # no latency-aware set passed: the variants, then ranked sets
            if self.state.best is not None or not self.budget_left():
                break
            tried.append((self.quantized_trial(label, cfg), label, cfg))
        top = self._most_accurate(tried)
        if top is not None and fallback and self.state.best is None and self.budget_left():
            self.refine(*top)
        with self.timed("adopt"):
            self.adopt()
        return self.result()

    def _cached(self, cfg: dict[str, Any]) -> dict[str, Any]:
        """``cfg`` reading (or writing) its calibration method's ranges from the search's calibration cache: the
        activation ranges depend on the method, not on reduce_range, the activation type or weight granularity, so
        every variant of a method calibrates once (the range repair's builds included)."""
        if not calibration_cache_supported():
            return cfg
        return {**cfg, "advanced": method_advanced(self, str(cfg.get("calibration_method", "minmax")))}

    def latency_searches(self, full: Level, repaired: Repaired | None = None) -> None:
        """On every INT8 runtime: the range-repaired model when the host says it passes, else the cheapest float
        set there (:mod:`.latency`) starting from the repaired ranges; one device trial each."""
        qdq = repaired.qdq if repaired is not None else onnx.load(full.artifact)
        nodes = quantized_nodes(qdq, QUANT_OPS)
        g_cfg: dict[str, Any] = {"op_types_to_quantize": QUANT_OPS}  # the gains' key: ranges leave the graph as is
        q_cfg = repaired.cfg if repaired is not None else g_cfg
        nncf_rts = int8_runtimes(self.plan.rts, Int8Backend.NNCF)
        for rt in int8_runtimes(self.plan.rts):
            if rt in self.plan.skip:
                continue
            if not self.budget_left():
                break
            if (repaired is not None and repaired.passes_on_host and self._can_beat(rt)
                    and self._repair_trial(rt, repaired, len(nodes))):
                continue
            if rt in nncf_rts and self._nncf_repairs(rt, qdq):
                self.float_sets[rt] = {"strategy": "nncf repair", "evaluations": 0, "float_nodes": 0,
                                       "quantized_nodes": len(nodes), "profiled": False, "range_repaired": False}
                continue
            if self.worth(rt, "float_set"):  # else no profile, no evaluation: no mix there can beat the best level
                self._float_set(rt, Path(full.artifact), qdq, nodes, g_cfg, q_cfg, repaired is not None)
            else:
                self.float_sets[rt] = {"strategy": "skipped", "evaluations": 0, "quantized_nodes": len(nodes),
                                       "profiled": False, "range_repaired": repaired is not None,
                                       "skipped": f"cost gate: {self.plan.headroom[rt].reason()}"}
            if rt in self.plan.low_precision:
                with self.timed("low_precision"):
                    low_search(self, self.plan.low_precision[rt], full, qdq, nodes, q_cfg)

    def _float_set(self, rt: str, full: Path, qdq: onnx.ModelProto, nodes: list[str], g_cfg: dict[str, Any],
                   q_cfg: dict[str, Any], range_repaired: bool) -> None:
        """The cheapest float set on ``rt`` (per-layer gains profiled there, candidates evaluated there, capped by
        the cost gate) and, unless none passed or it stopped, one device trial of it."""
        with self.timed("gains_profile"):
            gain = gains(self.ctx, self.cache, self.base, full, nodes, rt, g_cfg, self.emit)
        head = self.plan.headroom.get(rt)
        with self.timed("float_set_evals"):
            choice = float_set(self.ctx, self.model, qdq, self.base_m, nodes, gain, rt,
                               self.plan.out / f"float-set-{rt}", QUANT_OPS, lambda: self.budget_left(device=False),
                               cost_cap_ms=head.cost_cap_ms if head is not None else None,
                               resolution_ms=head.resolution_ms if head is not None else None)
        self.float_sets[rt] = {"strategy": choice.strategy, "evaluations": choice.evaluations,
                               "float_nodes": len(choice.float_nodes), "quantized_nodes": len(nodes),
                               "profiled": bool(gain), "range_repaired": range_repaired,
                               **({"ended": choice.ended} if choice.ended else {}),
                               **({"float_cost": float_cost(choice.float_nodes, gain)} if gain else {})}
        self._record_cap(rt, choice)
        self.float_reasons[rt] = (frozenset(choice.float_nodes), float_reasons(choice, gain))
        if choice.strategy not in ("none", "stopped") and self.budget_left():
            lvl = self.float_trial(f"{TRIAL_LABEL} on {rt}: {len(choice.float_nodes)} float nodes", q_cfg, qdq,
                                   choice.float_nodes, runtime=rt)
            if lvl.passed:
                self.chosen_by_rt[rt] = self.state.trials[-1]

    @staticmethod
    def _default_model(trial: tuple[Level, str, dict[str, Any]]) -> Path | None:
        """The default variant's quantized model (min-max ranges, every op quantized), if ``trial`` built one."""
        lvl, label, cfg = trial
        plain = label == "default" and set(cfg) <= {"advanced"} and lvl.artifact.endswith(".onnx")
        return Path(lvl.artifact) if plain else None

    def _can_beat(self, rt: str) -> bool:
        head = self.plan.headroom.get(rt)
        return head is None or head.can_beat

    def _nncf_repairs(self, rt: str, qdq: onnx.ModelProto) -> bool:
        """NNCF's repairs on ``rt`` when the cost gate lets them (else recorded as skipped, with why)."""
        if not self.worth(rt, "nncf_repair"):
            self.nncf_repairs[rt] = {"skipped": f"cost gate: {self.plan.headroom[rt].reason()}"}
            return False
        with self.timed("nncf_repair"):
            return nncf_repairs(self, rt, qdq)

    def _record_cap(self, rt: str, choice: FloatSetChoice) -> None:
        """The float-set search's cost cap in ``cost_gate`` and ``float_sets`` (:mod:`.cost_gate`)."""
        head = self.plan.headroom.get(rt)
        cap = head.cost_cap_ms if head is not None else None
        if cap is None or not self.float_sets[rt]["profiled"]:
            return
        self.float_sets[rt].update(cost_cap_ms=round(cap, 4), capped_candidates=choice.capped)
        if choice.stopped:
            self.float_sets[rt]["stopped"] = choice.stopped
        self.cost_gate[rt]["decisions"]["float_set"] = (
            f"stopped: {choice.stopped}" if choice.stopped else
            f"ran under a cap of {cap:.2f} ms of float parts ({choice.capped} candidates over it not evaluated)")

    def _repair_trial(self, rt: str, repaired: Repaired, nodes: int) -> bool:
        """The range-repaired model, every node in INT8, as one device trial on ``rt``; True when it passes there
        (the runtime's choice: no float set needed)."""
        n = len(repaired.cfg.get("tensor_ranges") or {})
        lvl = self.float_trial(f"range repair on {rt}: {repaired.base_method} + {n} tensor ranges, 0 float nodes",
                               repaired.cfg, repaired.qdq, [], runtime=rt)
        if not lvl.passed:
            return False
        self.chosen_by_rt[rt] = self.state.trials[-1]
        self.float_sets[rt] = {"strategy": "range repair", "evaluations": 0, "float_nodes": 0,
                               "quantized_nodes": nodes, "profiled": False, "range_repaired": True}
        return True

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

    def quantized_trial(self, label: str, cfg: dict[str, Any]) -> Level:
        """The base model quantized with the variant ``cfg``, measured on the device."""
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **cfg}
        n = len(self.state.trials)
        recipe = search_recipe(f"int8-search-{n}", [{"pass": "quantize_int8", "config": q_cfg}])
        trial_dir = self.plan.out / f"trial-{n}"

        def make() -> Path:
            self.count_build(q_cfg)
            res = optimize_graph(self.base, target=self.ctx.target, recipe=recipe, calib=self.plan.calib,
                                 out_dir=trial_dir, fidelity=False, bench=False, targets_dirs=self.plan.targets_dirs)
            return Path(res.final.path)

        with self.timed("variants"):
            lvl = self.run_level({"int8-search": q_cfg, "base": self.base.name}, "int8-search", self.plan.runtime,
                                 make, {"search": label, "config": q_cfg, "float_nodes": []}, keep=False)
        self.record_trial(label, q_cfg, lvl)
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

        with self.timed("device_trials"):
            lvl = self.run_level({"int8-search": cfg, "base": self.base.name}, "int8-search",
                                 runtime or self.plan.runtime, make,
                                 {"search": label, "config": cfg, "float_nodes": sorted(float_nodes)}, keep=False)
        self.record_trial(label, cfg, lvl)
        return lvl

    def refine(self, top: Level, top_label: str, top_cfg: dict[str, Any]) -> None:
        """Rank nodes on the host, narrow float sets there, measure the candidates; grow while the device fails."""
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **top_cfg}
        qdq = onnx.load(top.artifact)
        host = self.host_eval()
        with self.timed("sensitivity"):
            sens = node_sensitivity(qdq, self.base_m, host, self.deadline)
        self.state.sensitivity = [SensitivityRow(node=n, retention_lost=r, rel_err=e) for n, r, e in sens]
        ranking = [name for name, _, _ in sens]

        def host_passes(float_nodes: list[str]) -> bool:
            ret, rel = host.score(keep_float(qdq, self.base_m, float_nodes, QUANT_OPS))
            self.state.host_checks.append(HostCheck(float_nodes=len(float_nodes), retention=round(ret, 6),
                                                    rel_err=round(rel, 6)))
            return ret >= self.ctx.min_retention

        with self.timed("narrow"):
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
        """The chosen config as a level on every runtime (cached on the search runtime) where it can win: not on a
        runtime whose full INT8 is clearly slower than a passing level (``plan.skip``, its reason in
        ``skipped_runtimes``), nor where the cost gate found even all-INT8 slower than it beyond both intervals
        (``cost_gate[rt]['decisions']['level']``): a mix keeps parts in float, so it is no faster there."""
        for rt in (rt for rt in self.plan.rts if rt not in self.plan.skip and self.worth(rt, "level")):
            # each runtime its own latency-aware set, else the fastest passing trial
            chosen = self.chosen_by_rt.get(rt) or self._fastest_passing(rt)
            info: dict[str, Any] = {"latency_cost_ms_vs_naive_int8": self._cost_ms()}
            if chosen is not None:
                cfg, art = chosen.config, Path(chosen.artifact)
                info.update({"search": chosen.label, "config": cfg, "float_nodes": cfg.get("nodes_to_exclude", []),
                             "searched_on": chosen.runtime, "int8_layers": self._layers(chosen)})
                self.layers_by_rt[rt] = info["int8_layers"]
                self.run_level({"int8-search": cfg, "base": self.base.name}, "int8-search", rt,
                               functools.partial(Path, art), info)
            if rt in self.plan.low_precision:
                adopt_low(self, self.plan.low_precision[rt], chosen, info)

    def _layers(self, chosen: Int8Trial) -> list[dict[str, Any]]:
        """Per layer of the chosen trial: what was done and why (:func:`.repair_step.layer_records`)."""
        if "nncf_repair" in chosen.config:
            rep = chosen.config["nncf_repair"]
            return [{"node": "*", "repair": f"nncf:{rep.get('name')}", "tensors": [],
                     "why": str(rep.get("why", "NNCF's repair kept the threshold on the host"))}]
        art = Path(chosen.artifact)
        qdq = onnx.load(str(art)) if art.suffix == ".onnx" and art.is_file() else None
        rr, t = self.range_repair or {}, self.ctx.min_retention
        how = (self.float_sets.get(chosen.runtime, {}).get("strategy") if chosen.label.startswith(TRIAL_LABEL)
               else None) or chosen.label
        if rr.get("host_retention") is None:
            why = f"kept in float by {how} on {chosen.runtime} to meet {t}"
        elif rr["host_retention"] < t:
            why = (f"no calibration range repaired it (host retention {rr['host_retention']:.4f} after the range "
                   f"repair < {t}); kept in float by {how} on {chosen.runtime}")
        else:
            why = (f"the range-repaired model passed on the host ({rr['host_retention']:.4f}) but not on "
                   f"{chosen.runtime}; kept in float by {how} there")
        chosen_set, reasons = self.float_reasons.get(chosen.runtime, (frozenset(), {}))
        per_node = reasons if set(chosen.config.get("nodes_to_exclude") or []) == chosen_set else {}
        return layer_records(qdq, chosen.config, rr if "tensors" in rr else None, why, per_node)

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
            range_repair=self.range_repair, nncf_repairs=dict(self.nncf_repairs), phase_seconds=self.phase_seconds(),
            work=self.counts(),
            cost_gate=dict(self.cost_gate),
            layers_by_runtime={rt: [LayerRepair.model_validate(r) for r in rows]
                               for rt, rows in self.layers_by_rt.items()},
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
