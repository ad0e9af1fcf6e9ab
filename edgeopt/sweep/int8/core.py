"""The INT8 search's state and inputs, and the part of a running search its branches share (:mod:`.search`
runs it; :mod:`.low_search` and :mod:`.nncf_trials` add their trials through :class:`SearchCore`)."""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import onnx

from ..levels import LevelRunner
from ..measure import Context
from ..result import HostCheck, Int8Trial, Level, SensitivityRow
from .cost_gate import Headroom
from .host_eval import HostEval
from .precision import LowBranch
from .sensitivity_cache import SensitivityCache
from .steps import float_base


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
        (:func:`.precision.low_branches`; empty: f32 float parts only). skip: runtimes whose latency-aware
        search (and low-precision branch) is skipped, with why (:func:`.latency.hopeless_runtimes`); the
        chosen config is not measured there either (it cannot win). headroom: per INT8 runtime, its INT8 ceiling
        against the fastest passing level (:func:`.cost_gate.headrooms`): repairs and float sets that cannot beat
        it are skipped.
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
    headroom: dict[str, Headroom] = field(default_factory=dict)


class SearchCore:
    """A running search's inputs, budget, trials and per-runtime choices (what every branch of it reads and adds to)."""

    def __init__(self, model: Path, ctx: Context, plan: SearchPlan, run_level: LevelRunner,
                 emit: Callable[[dict[str, Any]], None]) -> None:
        self.started = time.perf_counter()
        self.deadline = self.started + plan.max_seconds
        self.ctx, self.plan, self.run_level, self.emit = ctx, plan, run_level, emit
        self.phases: dict[str, float] = {}  # phase -> seconds spent in it alone (nested phases subtracted)
        self._open: list[list[float]] = []  # per open phase: [start, seconds of the phases nested in it]
        plan.out.mkdir(parents=True, exist_ok=True)
        with self.timed("float_base"):
            self.base = float_base(model, plan.out, ctx.target, plan.targets_dirs)
        self.base_m = onnx.load(str(self.base))
        self.state = SearchState()
        self.model = model
        self.cache = SensitivityCache(plan.gains_dir or plan.out / "gains")
        self.chosen_by_rt: dict[str, Int8Trial] = {}
        self.float_sets: dict[str, dict[str, Any]] = {}
        # per runtime: the float set the float-set search chose and, per node of it, why it stayed float
        self.float_reasons: dict[str, tuple[frozenset[str], dict[str, str]]] = {}
        self.chosen_low_by_rt: dict[str, Int8Trial] = {}
        self.low_float_sets: dict[str, dict[str, Any]] = {}
        self.range_repair: dict[str, Any] | None = None  # what the per-tensor range repair did (:mod:`.repair_step`)
        self.nncf_repairs: dict[str, dict[str, Any]] = {}  # per runtime: NNCF's repairs tried (:mod:`.nncf_repair`)
        self.layers_by_rt: dict[str, list[dict[str, Any]]] = {}  # per runtime: the adopted config, layer by layer
        self.cost_gate: dict[str, dict[str, Any]] = {rt: h.record() for rt, h in plan.headroom.items()}
        self._host: HostEval | None = None
        self.work: Counter[str] = Counter()  # what the search did, counted (``int8_search.work``, :meth:`counts`)

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Adds the seconds spent inside to ``phase`` (``sweep.json``'s ``int8_search.phase_seconds``), less the
        seconds of phases opened inside it, so the phases add up to the search's wall time."""
        self._open.append([time.perf_counter(), 0.0])
        try:
            yield
        finally:
            start, nested = self._open.pop()
            took = time.perf_counter() - start
            self.phases[phase] = self.phases.get(phase, 0.0) + took - nested
            if self._open:
                self._open[-1][1] += took

    def phase_seconds(self) -> dict[str, float]:
        """Seconds per phase, the host checks' share of them, and ``other`` (the rest of the wall time)."""
        out = {k: round(v, 2) for k, v in self.phases.items()}
        if self._host is not None:
            out["host_checks_within"] = round(self._host.seconds, 2)
        out["other"] = round(max(0.0, time.perf_counter() - self.started - sum(self.phases.values())), 2)
        return out

    def count_build(self, cfg: dict[str, Any]) -> None:
        """Count one ``quantize_int8`` build of ``cfg`` about to run, and whether it calibrates (no calibration
        cache, or its file not written yet) or reads cached ranges."""
        self.work["quantize_builds"] += 1
        cache = (cfg.get("advanced") or {}).get("calibration_cache")
        if not cache or not Path(str(cache)).is_file():
            self.work["calibrations"] += 1

    def counts(self) -> dict[str, int]:
        """``int8_search.work``: builds, calibrations, profiles, device evaluations and trials, host checks."""
        evals = sum(int(f.get("evaluations") or 0) for f in [*self.float_sets.values(),
                                                              *self.low_float_sets.values()])
        return {"quantize_builds": self.work["quantize_builds"], "calibrations": self.work["calibrations"],
                "gain_profiles": self.cache.gains_written, "device_evaluations": evals,
                "device_trials": self.work["device_trials"],
                "host_checks": self._host.calls if self._host is not None else 0}

    def host_eval(self) -> HostEval:
        """The host-side proxy of the sweep's retention (one per search: the reference outputs are computed once)."""
        if self._host is None:
            with self.timed("host_reference"):
                self._host = HostEval(self.base_m, self.ctx.eval_npz, self.ctx.metric, self.ctx.selection,
                                      self.ctx.labels)
        return self._host

    def worth(self, runtime: str, step: str) -> bool:
        """Whether ``step`` (a repair) on ``runtime`` can still beat the fastest passing level (:mod:`.cost_gate`);
        the decision and its reason go to ``cost_gate[runtime]['decisions'][step]`` (and an info event when
        skipped). A runtime without a headroom (no confirmed levels to compare) always runs it."""
        head = self.plan.headroom.get(runtime)
        if head is None:
            return True
        ok = head.can_beat
        self.cost_gate[runtime]["decisions"][step] = "ran" if ok else f"skipped: {head.reason()}"
        if not ok:
            self.emit({"event": "info", "message": f"int8 search: no {step.replace('_', ' ')} on {runtime}: "
                                                   f"{head.reason()}"})
        return ok

    def budget_left(self, device: bool = True) -> bool:
        """Time left, and (for a device trial) trials left."""
        return (not device or len(self.state.trials) < self.plan.max_trials) and time.perf_counter() < self.deadline

    def record_trial(self, label: str, cfg: dict[str, Any], lvl: Level, precision: str | None = None) -> None:
        """Add a measured trial (announced as an ``int8_trial`` event); ``best.onnx`` follows the keeper."""
        row = self.state.record(label, cfg, lvl, precision)
        if not lvl.cached:
            self.work["device_trials"] += 1
        self.emit({"event": "int8_trial", **row.model_dump(mode="json", exclude={"config"})})
        out = self.plan.out
        keep = lvl.artifact.endswith(".onnx") and Path(lvl.artifact).is_file()  # best.onnx: ONNX trials only
        if self.state.keeper is row and keep:  # always keep the best model found so far
            shutil.copyfile(lvl.artifact, out / "best.onnx.tmp")
            (out / "best.onnx.tmp").replace(out / "best.onnx")
