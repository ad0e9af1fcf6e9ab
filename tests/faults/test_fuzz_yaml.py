"""Hostile target, recipe, qualification spec and inventory YAML through the commands that read them: every one
ends in a documented exit code with one line naming the file, no traceback, nothing written outside the output
directory, and no alias bomb, deep nesting or huge file hangs or exhausts memory."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_kit import Tally, Workspace, examples, judge, run_in_process, save
from tests.fuzz_onnx import chain_model
from tests.fuzz_yaml import YamlCase, hostile_yaml

pytestmark = pytest.mark.fuzz
SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))

# section -> (file name, commands: {model}, {file}, {dir}, {out} are filled in)
COMMANDS: dict[str, tuple[str, list[list[str]]]] = {
    "target": ("targets/fuzzed.yaml", [["targets", "--targets-dir", "{dir}", "--json"],
                                       ["targets", "--targets-dir", "{dir}", "show", "fuzzed"],
                                       ["inspect", "{model}", "-t", "fuzzed", "--targets-dir", "{dir}"]]),
    "recipe": ("recipe.yaml", [["recipes", "show", "{file}"], ["recipes", "show", "{file}", "--json"],
                               ["optimize", "{model}", "-t", "local", "-r", "{file}", "--out", "{out}", "--no-bench",
                                "--no-fidelity"]]),
    "spec": ("spec.yaml", [["qualify", "{file}", "--report-dir", "{out}", "--no-history"]]),
    "inventory": ("devices.yaml", [["devices", "list", "--inventory", "{file}"],
                                   ["devices", "list", "--inventory", "{file}", "--json"],
                                   ["devices", "check", "dut", "--inventory", "{file}"]]),
}
BUDGET = {"target": 150, "recipe": 100, "spec": 50, "inventory": 150}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-yaml")


@pytest.mark.parametrize("section", sorted(COMMANDS))
def test_hostile_yaml(base: Path, section: str) -> None:
    name, commands = COMMANDS[section]
    tally = Tally(f"yaml: {section}")
    # the slow command of a section (optimize, a valid qualify) on a share of the inputs only
    weights = st.sampled_from(commands[:-1] * 4 + commands[-1:]) if len(commands) > 1 else st.just(commands[0])

    @settings(max_examples=examples(BUDGET[section]), **SETTINGS)
    @given(hostile_yaml(section), weights)
    def prop(case: YamlCase, command: list[str]) -> None:
        with tempfile.TemporaryDirectory(dir=base) as root:
            ws = Workspace(Path(root))
            file = ws.inputs / name
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(case.data)
            model = ws.inputs / "model.onnx"
            model.write_bytes(chain_model().SerializeToString())
            args = [a.format(model=model, file=file, dir=file.parent, out=ws.out / "o") for a in command]
            judge(tally, case.kind, run_in_process(ws, args), names=(file.name,))

    try:
        prop()
    finally:
        save(tally)
