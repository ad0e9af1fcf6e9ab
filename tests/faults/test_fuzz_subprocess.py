"""A sample of the hostile inputs through the real ``edgeopt`` console entry (``python -m edgeopt``, its own
process): what the in-process runs of test_fuzz_*.py judge holds for what a user's shell sees too (exit code,
one line on stderr, no traceback, nothing written outside the output directory)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_kit import Tally, Workspace, examples, judge, run_subprocess, save
from tests.fuzz_npz import PWNED, hostile_npz
from tests.fuzz_onnx import chain_model, hostile_models
from tests.fuzz_yaml import hostile_yaml

pytestmark = pytest.mark.fuzz
SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))


@st.composite
def any_input(draw: st.DrawFn) -> tuple[str, str, bytes, str]:
    """(category, kind, file bytes, file name)."""
    which = draw(st.sampled_from(["model", "inventory", "target", "spec", "calib"]))
    if which == "model":
        case = draw(hostile_models())
        return which, case.kind, case.files.get("model.onnx", b""), "model.onnx"
    if which == "calib":
        data = draw(hostile_npz())
        return which, data.kind, data.data, f"data{data.suffix}"
    doc = draw(hostile_yaml(which))
    return which, doc.kind, doc.data, {"inventory": "devices.yaml", "target": "fuzzed.yaml", "spec": "spec.yaml"}[which]


def _args(which: str, file: Path, model: Path, out: Path) -> list[str]:
    return {
        "model": ["inspect", str(file), "--json"],
        "inventory": ["devices", "list", "--inventory", str(file)],
        "target": ["targets", "show", "fuzzed", "--targets-dir", str(file.parent)],
        "spec": ["qualify", str(file), "--report-dir", str(out), "--no-history"],
        "calib": ["optimize", str(model), "-t", "local", "-r", "int8-dynamic", "--calib", str(file), "--out", str(out),
                  "--no-bench", "--no-fidelity"],
    }[which]


def test_hostile_inputs_in_a_real_process(tmp_path: Path) -> None:
    tally = Tally("subprocess sample (python -m edgeopt)")

    @settings(max_examples=examples(8), **SETTINGS)
    @given(any_input())
    def prop(item: tuple[str, str, bytes, str]) -> None:
        which, kind, data, name = item
        with tempfile.TemporaryDirectory(dir=tmp_path) as root:
            ws = Workspace(Path(root))
            folder = ws.inputs / which
            folder.mkdir()
            file = folder / name
            file.write_bytes(data)
            model = folder / "model.onnx"
            if which != "model":
                model.write_bytes(chain_model().SerializeToString())
            outcome = run_subprocess(ws, _args(which, file, model, ws.out / "o"))
            assert not (ws.cwd / PWNED).exists()
            judge(tally, f"{which}:{kind}", outcome, names=(name,))

    try:
        prop()
    finally:
        save(tally)
