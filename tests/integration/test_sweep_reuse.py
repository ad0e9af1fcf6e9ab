"""Work the sweep does not repeat (docs/sweep.md, "What the search reuses and skips"): the fp32 level is the
reference model run with the reference's options, so its evaluation is the reference's (one agent evaluation per
runtime, not two); any other model, or the same model with other options, is evaluated (real agent, onnxruntime)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import onnxruntime as ort

from edgeopt.evaluation import parse_output, resolve_metric
from edgeopt.runners.base import ProgressSink
from edgeopt.runners.local import LocalRunner
from edgeopt.sweep.measure import Context
from edgeopt.sweep.options import level_settings
from edgeopt.sweep.runtimes import float_options
from edgeopt_agent.protocol import RawRun, Request
from tests.unit.sweep.outlier_model import outlier_convnet, outlier_data

RT = "onnxruntime"


class CountingRunner(LocalRunner):
    """The local runner, counting the evaluations it runs (a real agent process each)."""

    def __init__(self) -> None:
        super().__init__()
        self.evaluated: list[Path] = []

    def evaluate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        self.evaluated.append(model_path)
        return super().evaluate(request, model_path, progress)


def _ctx(tmp_path: Path, runner: CountingRunner) -> tuple[Context, Path]:
    model = outlier_convnet(tmp_path / "m.onnx")
    _, data = outlier_data(tmp_path)
    ctx = Context(target="local", runner=runner, eval_npz=data, labels=None,
                  metric=resolve_metric("snr_db", has_labels=False), selection=parse_output(None),
                  min_retention=0.99, measure=level_settings(iterations=5, min_duration_s=0.0, threads=1),
                  targets_dirs=(), versions={RT: ort.__version__}, runtime_options=float_options([RT]))
    return ctx, model


def test_the_fp32_level_reads_the_reference_outputs_instead_of_evaluating_the_model_again(tmp_path: Path) -> None:
    runner = CountingRunner()
    ctx, model = _ctx(tmp_path, runner)
    value, ret = ctx.accuracy(model, RT, model)
    assert ret == 1.0 and runner.evaluated == [model], "one evaluation: the reference's"
    copy = tmp_path / "copy.onnx"
    m = onnx.load(str(model))
    m.doc_string = "the same graph in another file"
    onnx.save(m, str(copy))
    assert ctx.accuracy(copy, RT, model)[1] == 1.0 and runner.evaluated == [model, copy], "another file: evaluated"
    other: dict[str, Any] = {"graph_optimization_level": "disable"}
    ctx.accuracy(model, RT, model, other)
    assert len(runner.evaluated) == 3, "other runtime options: evaluated"
