"""What a served sweep's confirmation rounds run, counted through the real local agent (issue 32: the rounds were
the detector sweep's biggest single cost): each level's model loaded once and reused in its later rounds, a kept
model not warmed up again beyond one inference, and a no-change level not timed at all (the fp32 level's rounds on
its runtime stand in)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from edgeopt.evaluation import parse_output, resolve_metric
from edgeopt.runners.base import ProgressSink
from edgeopt.runners.local import LocalRunner
from edgeopt.runners.served import ServedRunner, agent_session
from edgeopt.sweep import sweep
from edgeopt.sweep.api import level_settings
from edgeopt.sweep.cache import LevelCache
from edgeopt.sweep.confirm import FIRST_ROUNDS
from edgeopt.sweep.levels import LevelTable
from edgeopt.sweep.measure import Context
from edgeopt.sweep.memory_probe import needs_probe
from edgeopt_agent.loaded import REUSED_WARMUP
from edgeopt_agent.protocol import RawRun, Request
from tests.unit.sweep.test_honest import conv_only


def _options(options: dict[str, Any] | None) -> str:
    """Runtime options as one comparable key."""
    return repr(sorted((options or {}).items()))


class _Recorded(LocalRunner):
    """The real local runner; its served agent's timed runs are written down as they come back."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[tuple[str, str, str, RawRun]] = []

    def serving(self, on_info: Any = None) -> ServedRunner:
        served = super().serving(on_info)
        run = served.run

        def recorded(request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
            raw = run(request, model_path, progress)
            self.runs.append((str(Path(model_path).resolve()), request.runtime, _options(request.runtime_options), raw))
            return raw

        served.run = recorded  # type: ignore[method-assign]
        return served


def test_rounds_load_once_warm_up_once_and_skip_a_no_change_level(tmp_path: Path) -> None:
    model = conv_only(tmp_path / "conv.onnx")
    np.savez(tmp_path / "eval.npz", x=np.random.default_rng(0).standard_normal((4, 3, 16, 16)).astype(np.float32))
    runner = _Recorded()
    result = sweep(model, eval=tmp_path / "eval.npz", recipes=["int4"], metric="cosine", min_retention=0.9,
                   runtimes=["onnxruntime", "openvino"], iterations=20, min_duration_s=0.1, int8_search=False,
                   out_dir=tmp_path / "out", runner=runner)
    by = {(lv.recipe, lv.runtime): lv for lv in result.levels}
    # keyed by the options too: on an AVX512_BF16/AMX CPU the bf16@openvino level is the same file at OpenVINO's
    # defaults, a second loaded model beside fp32's f32 one (this test failed on the Sapphire Rapids VM, session 19)
    per_model: dict[tuple[str, str], list[RawRun]] = {}
    per_options: dict[tuple[str, str, str], list[RawRun]] = {}
    for path, runtime, options, raw in runner.runs:
        assert raw.ok, raw.error
        per_model.setdefault((path, runtime), []).append(raw)
        per_options.setdefault((path, runtime, options), []).append(raw)
    for rt in ("onnxruntime", "openvino"):
        fp32, same = by[("fp32", rt)], by[("int4", rt)]
        assert same.no_change and Path(same.artifact).resolve() != Path(fp32.artifact).resolve()
        assert (str(Path(same.artifact).resolve()), rt) not in per_model  # never run: fp32's rounds stand in
        assert same.details["latency_of"] == f"fp32@{rt}" and same.latency_confirm_rounds == FIRST_ROUNDS
        assert not same.single_run and same.valid and same.size_bytes == Path(same.artifact).stat().st_size
        for f in ("latency_ms", "latency_ms_p99", "latency_ms_low", "latency_ms_high", "latency_ms_first_pass",
                  "host_cpu_busy_pct", "interference", "confirm_round_medians_ms", "confirm_rounds_id"):
            assert getattr(same, f) == getattr(fp32, f), f
        runs = per_options[(str(Path(fp32.artifact).resolve()), rt, _options(fp32.runtime_options))]
        assert len(runs) >= FIRST_ROUNDS
        loads = [r for r in runs if not r.runtime.get("reused_load")]
        assert len(loads) == 1 and runs[0] is loads[0]  # loaded in its first round, kept for every later run
        assert loads[0].warmup_done["iterations"] >= 5  # a fresh load warms up for the sweep's whole count
        assert all(r.warmup_done["iterations"] == REUSED_WARMUP for r in runs[1:])
    # the no-change levels tie their fp32 levels exactly, so both sit on the frontier: only fp32 gets a memory probe
    front = [i for i, lv in enumerate(result.levels) if lv.recipe == "fp32" or lv.no_change]
    served = [lv.model_copy(update={"memory_mb_peak": None}) for lv in result.levels]
    assert [served[i].recipe for i in needs_probe(served, front, None)] == ["fp32", "fp32"]


def test_a_level_whose_artifact_is_gone_before_its_rounds_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """A deferred level is timed only in its rounds; if its artifact vanished before them, the level is dropped with
    a warning and the others keep their rounds (it once ended the sweep with a ValueError from a strict zip)."""
    model = conv_only(tmp_path / "conv.onnx")
    np.savez(tmp_path / "eval.npz", x=np.random.default_rng(0).standard_normal((4, 3, 16, 16)).astype(np.float32))
    copy = tmp_path / "copy.onnx"

    def make_copy() -> Path:
        shutil.copyfile(model, copy)
        return copy

    with agent_session(LocalRunner()) as served:
        ctx = Context(target="local", runner=LocalRunner(), eval_npz=tmp_path / "eval.npz", labels=None,
                      metric=resolve_metric("cosine", has_labels=False), selection=parse_output(None),
                      min_retention=0.9, measure=level_settings(threads=1, iterations=20, min_duration_s=0.1),
                      targets_dirs=(), versions={"onnxruntime": ""}, served=served)
        table = LevelTable(ctx, LevelCache(tmp_path / "cache"), {"model": str(model)}, model, lambda e: None)
        table("fp32", "fp32", "onnxruntime", lambda: model)
        table("copy", "copy", "onnxruntime", make_copy)
        copy.unlink()
        table.confirm()
    assert [lv.recipe for lv in table.levels] == ["fp32"]
    assert table.levels[0].latency_confirm_rounds == FIRST_ROUNDS and not table.levels[0].single_run
    assert any("copy on onnxruntime" in w and "gone before it was timed" in w for w in table.warnings)
