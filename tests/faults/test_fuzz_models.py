"""Hostile ONNX models through ``inspect``, ``bench`` (the local agent) and ``optimize``: every one ends in a
documented exit code with one clean line, no traceback, nothing written outside the output directory."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz_kit import Tally, Workspace, examples, judge, run_in_process, save
from tests.fuzz_onnx import ModelCase, hostile_models

pytestmark = pytest.mark.fuzz
SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
BENCH = ["-n", "20", "--min-duration", "0", "--warmup", "1", "--no-energy", "--no-budget", "--no-history"]


def _try(tally: Tally, base: Path, case: ModelCase, command: list[str], names: tuple[str, ...] = ("model.onnx",)) \
        -> None:
    with tempfile.TemporaryDirectory(dir=base) as root:
        ws = Workspace(Path(root))
        model = case.write(ws.inputs)
        args = [a.replace("{model}", str(model)).replace("{out}", str(ws.out / "o")) for a in command]
        judge(tally, case.kind, run_in_process(ws, args), names=names,
              allowed={2} if case.must_refuse else None)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-models")


def test_inspect_hostile_models(base: Path) -> None:
    tally = Tally("onnx models: inspect")

    @settings(max_examples=examples(300), **SETTINGS)
    @given(hostile_models())
    def prop(case: ModelCase) -> None:
        _try(tally, base, case, ["inspect", "{model}", "--target", "local", "--json"])

    try:
        prop()
    finally:
        save(tally)


def test_bench_hostile_models(base: Path) -> None:
    tally = Tally("onnx models: bench (local agent)")

    @settings(max_examples=examples(25), **SETTINGS)
    @given(hostile_models())
    def prop(case: ModelCase) -> None:
        _try(tally, base, case, ["bench", "{model}", *BENCH])

    try:
        prop()
    finally:
        save(tally)


def test_optimize_hostile_models(base: Path) -> None:
    tally = Tally("onnx models: optimize fp16")

    @settings(max_examples=examples(15), **SETTINGS)
    @given(hostile_models())
    def prop(case: ModelCase) -> None:
        _try(tally, base, case, ["optimize", "{model}", "-t", "local", "-r", "fp16", "--out", "{out}",
                                 "--no-bench", "--no-fidelity"], names=("model",))  # or an artifact made from it

    try:
        prop()
    finally:
        save(tally)
