"""Where a sweep's numbers come from (issue 21 goal: no first-pass p50 more than 15 % from its re-measured median):
each level's first pass runs in the served agent, the process of the rounds that confirm it, and the memory and
cold start a shared process cannot give come from a short fresh agent, for the recommendation and the passing
frontier levels only (edgeopt/sweep/memory_probe.py), also in the history. Real local agent, onnxruntime, the
digits MLP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")

from edgeopt.evaluation import parse_output, resolve_metric  # noqa: E402
from edgeopt.history import open_store  # noqa: E402
from edgeopt.runners.local import LocalRunner  # noqa: E402
from edgeopt.sweep import sweep  # noqa: E402
from edgeopt.sweep.api import level_settings  # noqa: E402
from edgeopt.sweep.measure import Context  # noqa: E402
from edgeopt.sweep.memory_probe import SOURCE, needs_probe  # noqa: E402
from edgeopt.sweep.result import Level, Recommendation  # noqa: E402
from tests.fake_agent import python_without_serve  # noqa: E402
from tests.unit.sweep.test_ranking import conv_model  # noqa: E402

FAST = {"iterations": 20, "min_duration_s": 0.1, "runtimes": ["onnxruntime"], "no_cache": True, "int8_search": False}


def _probed(lv: Level, frontier: set[tuple[str, str]], rec: tuple[str, str]) -> bool:
    return (lv.passed and (lv.recipe, lv.runtime) in frontier) or (lv.recipe, lv.runtime) == rec


@pytest.fixture(scope="module")
def served_sweep(digits: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One served sweep of the digits MLP (fp16 and int8, 0.999 retention) with its history and progress events,
    read by the two tests below (was one sweep each, ~17 CPU-s apiece, the same but for the threshold: 0.5 in
    the second, which changed nothing it asserts). Readers only read."""
    model, data = digits
    root = tmp_path_factory.mktemp("served-sweep")
    events: list[dict[str, Any]] = []
    res = sweep(model, eval=data, recipes=["fp16", "int8"], min_retention=0.999, out_dir=root / "out",
                history_db=root / "history.sqlite3", progress=events.append, **FAST)
    return {"result": res, "out": root / "out", "db": root / "history.sqlite3", "events": events}


def test_first_pass_served_memory_from_a_fresh_probe(served_sweep: dict[str, Any]) -> None:
    res, db = served_sweep["result"], served_sweep["db"]
    frontier = {(lv.recipe, lv.runtime) for lv in res.pareto}
    assert res.recommendation is not None
    rec = (res.recommendation.recipe, res.recommendation.runtime)
    for lv in res.levels:
        assert lv.first_pass_agent == "served", lv.recipe
        if _probed(lv, frontier, rec):
            assert lv.memory_source == SOURCE and lv.memory_mb_peak and lv.memory_mb_peak > 0, lv.recipe
            assert lv.cold_start_ms is not None and lv.cold_start_ms > 0
        else:  # not an answer a user picks from: no fresh process spent on it
            assert lv.memory_source is None and lv.memory_mb_peak is None and lv.cold_start_ms is None
    doc = json.loads((served_sweep["out"] / "sweep.json").read_text())
    assert {"first_pass_agent", "memory_source", "cold_start_ms"} <= set(doc["levels"][0])
    # the history records each level's own memory (the probe's), never the served process's
    mem = {r.label.split(" ")[0]: r.memory_mb_peak for r in open_store(db).runs(kind="sweep", limit=None)}
    for lv in res.levels:
        assert mem[f"{lv.recipe}/{lv.runtime}"] == lv.memory_mb_peak


@pytest.mark.slow  # every request a fresh agent process: ~40 s
def test_without_a_served_agent_the_first_pass_gives_memory(digits: tuple[Path, Path], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDGEOPT_AGENT_SERVE", "0")
    model, data = digits
    res = sweep(model, eval=data, recipes=["fp16"], min_retention=0.9, out_dir=tmp_path, **FAST)
    for lv in res.levels:
        assert lv.first_pass_agent == "fresh" and lv.memory_source == "first_pass"
        assert lv.confirm_rounds_id is None, "each level's first round is its own single run: nothing pairs"
        assert lv.memory_mb_peak and lv.memory_mb_peak > 0 and lv.cold_start_ms and lv.cold_start_ms > 0


def test_needs_probe_picks_the_recommendation_and_passing_frontier_levels(tmp_path: Path) -> None:
    art = tmp_path / "m.onnx"
    art.write_bytes(b"x")

    def lv(recipe: str, passed: bool, memory: float | None = None, no_change: bool = False,
           artifact: Path = art) -> Level:
        return Level(recipe=recipe, runtime="onnxruntime", runtime_version="", artifact=str(artifact), size_bytes=1,
                     latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=memory, energy_mj=None, energy_source=None,
                     metric="top1", metric_value=1.0, retention=1.0, meets_retention=passed, meets_budget=True,
                     passed=passed, valid=True, cached=False, no_change=no_change)

    levels = [lv("fp32", True), lv("int8", False), lv("int4", False), lv("fp16", True, memory=50.0),
              lv("bf16", True), lv("gone", True, artifact=tmp_path / "gone.onnx")]
    rec = Recommendation(recipe="bf16", runtime="onnxruntime", artifact=str(art), retention=1.0, latency_ms=1.0,
                         size_bytes=1)
    # passing on the frontier (0), the recommendation (4); not: failing (2), known memory (3), file gone (5)
    assert needs_probe(levels, frontier={0, 2, 3, 5}, recommended=rec) == [0, 4]
    assert needs_probe(levels, frontier={1}, recommended=None) == []


class _Counting(LocalRunner):
    """The real local runner, counting evaluations."""

    evaluations = 0

    def evaluate(self, request: Any, model_path: Path, progress: Any = None) -> Any:
        self.evaluations += 1
        return super().evaluate(request, model_path, progress)


def test_the_same_model_bytes_are_scored_once(tmp_path: Path) -> None:
    """The INT8 search evaluates a float set, then writes the chosen one to its trial's own file: the trial's
    retention is the evaluation's, not a second one; other options or other bytes are evaluated."""
    model = conv_model(tmp_path / "m.onnx", channels=4, kernel=3)
    copy = tmp_path / "trial" / "mixed.onnx"
    copy.parent.mkdir()
    shutil.copyfile(model, copy)
    np.savez(tmp_path / "eval.npz", x=np.random.default_rng(0).standard_normal((2, 16, 64, 64)).astype(np.float32))
    runner = _Counting()
    ctx = Context(target="local", runner=runner, eval_npz=tmp_path / "eval.npz", labels=None,
                  metric=resolve_metric("cosine", has_labels=False), selection=parse_output(None), min_retention=0.9,
                  measure=level_settings(threads=1), targets_dirs=(), versions={"onnxruntime": ""})
    first = ctx.accuracy(model, "onnxruntime", model)
    assert runner.evaluations == 1  # the reference's: the model is the reference (test_sweep_reuse.py)
    assert ctx.accuracy(copy, "onnxruntime", model) == first and runner.evaluations == 1  # same bytes elsewhere
    ctx.accuracy(copy, "onnxruntime", model, {"graph_optimization_level": "basic"})
    assert runner.evaluations == 2


def test_a_served_sweep_times_each_level_only_in_interleaved_rounds(served_sweep: dict[str, Any]) -> None:
    """No level is timed when it is built (one short run there read up to 66 % off, issue 21): its first
    measurement is its interleaved rounds, whose median is ``latency_ms_first_pass`` (the ranking rounds may refine
    ``latency_ms`` and its interval afterwards)."""
    res, events = served_sweep["result"], served_sweep["events"]
    built = [e for e in events if e["event"] == "level"]
    assert built and all(e["latency_ms"] is None for e in built), built
    timed = {(e["recipe"], e["runtime"]): e["latency_ms"] for e in events if e["event"] == "level_timed"}
    for lv in res.levels:
        assert not lv.single_run and lv.latency_confirm_rounds == 3, lv.recipe
        assert lv.latency_ms_first_pass == pytest.approx(timed[(lv.recipe, lv.runtime)]), lv.recipe
        # the rounds' medians, under the id of the rounds they ran in: what the INT8 search's cost gate pairs
        meds = lv.confirm_round_medians_ms
        assert meds is not None and len(meds) == 3 and lv.confirm_rounds_id, lv.recipe
        assert float(np.median(meds)) == pytest.approx(lv.latency_ms_first_pass, abs=1e-5), lv.recipe
        assert lv.latency_ms_low is not None and lv.latency_ms_high is not None
        assert lv.size_bytes > 0 and lv.latency_ms_p99 >= lv.latency_ms_first_pass * 0.5 and lv.valid
    assert len({lv.confirm_rounds_id for lv in res.levels}) == 1, "built together, timed in the same rounds"


def test_pooled_rounds_are_one_result_judged_on_all_samples(tiny_cnn: Path) -> None:
    """A deferred level's rounds pooled (edgeopt/sweep/pooled.py): samples and time add up, percentiles come from
    the pool, and validity is judged on the pool (three 40-sample runs support p99; one does not)."""
    from edgeopt.bench import run_benchmark
    from edgeopt.settings import MeasureSettings
    from edgeopt.sweep.pooled import pooled_bench

    settings = MeasureSettings.from_kwargs(iterations=40, min_duration_s=0.0, warmup=2, keep_samples=True,
                                           threads=1, use_target_fps=False, fps=1.0)
    runs = [run_benchmark(tiny_cnn, settings, target="local") for _ in range(3)]
    assert not runs[0].valid  # p99 needs 100 samples
    pooled = pooled_bench(runs, "p99")
    samples = [s for r in runs for s in r.samples_ms or []]
    assert pooled.run.samples == len(samples) == 120 and pooled.samples_ms == samples
    assert pooled.valid and pooled.percentiles_supported["p99"].supported
    assert pooled.latency_ms.p50 == pytest.approx(float(np.percentile(samples, 50, method="inverted_cdf")), rel=1e-6)
    assert pooled.fps_budget is not None and pooled.fps_budget.passed  # 1 FPS: 1000 ms of budget
    assert pooled.environment["pooled_rounds"] == 3 and pooled.settings.iterations == 120
    one = pooled_bench(runs[:1], "p99")
    assert not one.valid and "p99 needs" in one.invalid_reasons[0]


def test_after_a_fallback_to_one_shot_runs_levels_are_labelled_fresh(digits: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    """An agent that cannot serve (one from before ``serve``) turns the sweep's runner one-shot: the levels were then
    measured in fresh processes, and say so (before, they said 'served'). The size objective: no latency-ranking
    rounds after the first pass, each round a fresh process here, which the labels do not depend on."""
    model, data = digits
    old = python_without_serve(tmp_path / "python-without-serve")
    events: list[dict[str, Any]] = []
    res = sweep(model, eval=data, recipes=["fp16"], min_retention=0.9, out_dir=tmp_path / "out", objective="size",
                runner=LocalRunner(python=str(old)), progress=events.append, **FAST)
    assert any(e.get("event") == "info" and "did not serve" in str(e.get("message")) for e in events)
    assert res.levels and all(lv.first_pass_agent == "fresh" for lv in res.levels)
    assert all(lv.latency_ms > 0 for lv in res.levels)
