"""Hostile ``.npz``/``.npy`` data through ``optimize --calib``, ``optimize --eval`` and ``bench --inputs`` (read
by the agent): documented exit codes, one line, no traceback, and no pickle ever loaded (edgeopt never passes
``allow_pickle=True``; tests/unit/test_no_pickle.py checks the source)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz_kit import Tally, Workspace, examples, judge, run_in_process, save
from tests.fuzz_npz import PWNED, NpzCase, hostile_npz
from tests.fuzz_onnx import chain_model

pytestmark = pytest.mark.fuzz
SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
COMMANDS = {
    "calib": (["optimize", "{model}", "-t", "local", "-r", "int8", "--calib", "{file}", "--out", "{out}",
               "--no-bench", "--no-fidelity"], 30),
    "eval": (["optimize", "{model}", "-t", "local", "-r", "fp16", "--eval", "{file}", "--out", "{out}", "--no-bench"],
             20),
    "bench-inputs": (["bench", "{model}", "--inputs", "{file}", "-n", "20", "--min-duration", "0", "--warmup", "1",
                      "--no-energy", "--no-budget", "--no-history"], 20),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-data")


@pytest.mark.parametrize("use", sorted(COMMANDS))
def test_hostile_data(base: Path, use: str) -> None:
    command, budget = COMMANDS[use]
    tally = Tally(f"npz data: {use}")

    @settings(max_examples=examples(budget), **SETTINGS)
    @given(hostile_npz())
    def prop(case: NpzCase) -> None:
        with tempfile.TemporaryDirectory(dir=base) as root:
            ws = Workspace(Path(root))
            file = ws.inputs / f"data{case.suffix}"
            file.write_bytes(case.data)
            model = ws.inputs / "model.onnx"
            model.write_bytes(chain_model().SerializeToString())
            args = [a.format(model=model, file=file, out=ws.out / "o") for a in command]
            outcome = run_in_process(ws, args)
            assert not (ws.cwd / PWNED).exists() and not (ws.out / "o" / PWNED).exists(), "a pickle was loaded"
            judge(tally, case.kind, outcome, names=(file.name, "data"))

    try:
        prop()
    finally:
        save(tally)
