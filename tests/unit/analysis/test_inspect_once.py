"""A benchmarked model is inspected once per version of its files (edgeopt/bench/inspected.py): a sweep benchmarks
the same file ~40 times and each inspection took ~0.1 s of host work before the run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from edgeopt.bench.inspected import inspect_once
from edgeopt.targets import load_registry
from tests.unit.sweep.test_ranking import conv_model


def test_same_file_inspected_once_and_again_when_rewritten(tmp_path: Path) -> None:
    tgt = load_registry().get("local")
    model = conv_model(tmp_path / "m.onnx", channels=4, kernel=3)
    first = inspect_once(model, target=tgt, shapes={}, batch=1)
    assert inspect_once(model, target=tgt, shapes={}, batch=1) is first  # kept
    assert inspect_once(model, target=tgt, shapes={}, batch=2) is not first  # other arguments: its own analysis
    (tmp_path / "other").mkdir()
    bigger = conv_model(tmp_path / "other" / "m.onnx", channels=16, kernel=3)
    shutil.copyfile(bigger, model)  # the same path written again: a new version
    os.utime(model, ns=(1, 2))
    again = inspect_once(model, target=tgt, shapes={}, batch=1)
    assert again is not first and again.flops > first.flops
