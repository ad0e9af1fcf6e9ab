"""Regression tests for what the fuzz campaign (tests/faults/test_fuzz_*.py, docs/reliability.md) found, plus a
short run of the campaign's strategies so `make test` keeps them honest (a few seconds)."""

from __future__ import annotations

import io
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from onnx import TensorProto, helper

from edgeopt.analysis.loader import read_model
from edgeopt.calib.arrays import load_arrays
from edgeopt.calib.base import CalibrationError, InputSpec
from edgeopt.cli.common import parse_runtime_options
from edgeopt.devices.loader import InventoryError, load_inventory
from edgeopt.errors import ModelLoadError, TargetError
from edgeopt.passes.validate import run_onnx
from edgeopt.qualify.loader import QualifySpecError, load_spec
from edgeopt.recipes import RecipeError, load_recipe
from edgeopt.targets.loader import load_target_file
from edgeopt.yamlio import MAX_YAML_BYTES, safe_load
from tests.fuzz_kit import Tally, Workspace, judge, run_in_process
from tests.fuzz_onnx import ModelCase, chain_model, hostile_models
from tests.fuzz_yaml import INVENTORY, YamlCase, billion_laughs, hostile_yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "device_agent"))
from edgeopt_agent.inputs import InputSpecError, load_npz, read_npz  # noqa: E402
from edgeopt_agent.protocol import TensorInfo  # noqa: E402

SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
BOMBS = {
    "alias bomb": billion_laughs(9) + "devices: *a8\n",
    "recursive alias": "devices: &loop [*loop]\n",
    "deep nesting": "devices: " + "[" * 5000 + "]" * 5000 + "\n",
    "deep nesting (block)": "devices:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 80)) + "  " * 80 + "x\n",
}


@pytest.mark.parametrize("text", BOMBS.values(), ids=BOMBS.keys())
def test_yaml_bombs_are_refused_fast(text: str) -> None:
    with pytest.raises(yaml.YAMLError):  # YamlLimitError, or libyaml's own nesting limit
        safe_load(text)


@pytest.mark.parametrize("text", BOMBS.values(), ids=BOMBS.keys())
def test_every_yaml_reader_names_the_file_of_a_bomb(tmp_path: Path, text: str) -> None:
    for name, load, error in (("devices.yaml", load_inventory, InventoryError),
                              ("fuzzed.yaml", load_target_file, TargetError),
                              ("spec.yaml", load_spec, QualifySpecError), ("recipe.yaml", load_recipe, RecipeError)):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(error, match=name) as info:
            load(path)
        assert "\n" not in str(info.value)


def test_huge_and_non_utf8_yaml_are_one_line_errors(tmp_path: Path) -> None:
    huge = tmp_path / "devices.yaml"
    huge.write_bytes(INVENTORY.encode() + b"#" * MAX_YAML_BYTES)
    with pytest.raises(InventoryError, match="KiB limit"):
        load_inventory(huge)
    latin = tmp_path / "fuzzed.yaml"
    latin.write_bytes(b"name: fuzzed\ndescription: caf\xe9\n")
    with pytest.raises(TargetError, match=r"not UTF-8 text \(byte 0xe9 at offset 29\)"):
        load_target_file(latin)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "devices.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + INVENTORY.encode())
    assert [d.name for d in load_inventory(path).devices] == ["dut"]


def test_recipes_show_of_a_non_utf8_file_is_exit_2(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    recipe = ws.inputs / "recipe.yaml"
    recipe.write_bytes(b"name: x\xff\n")
    outcome = run_in_process(ws, ["recipes", "show", str(recipe)])
    assert outcome.code == 2 and not outcome.problems(names=("recipe.yaml",)), outcome.stderr


def test_targets_dir_given_to_the_group_reaches_show(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    (ws.inputs / "fuzzed.yaml").write_text("name: fuzzed\n")  # invalid: the error must name this file
    outcome = run_in_process(ws, ["targets", "--targets-dir", str(ws.inputs), "show", "fuzzed"])
    assert outcome.code == 2 and "fuzzed.yaml" in outcome.error_lines[0], outcome.stderr


def test_runtime_option_with_a_recursive_alias_stays_a_string() -> None:
    assert parse_runtime_options(("k=&a [*a]",)) == {"k": "&a [*a]"}


def test_nul_byte_in_an_external_data_location_is_refused(tmp_path: Path) -> None:
    case = ModelCase("nul", {})
    model = chain_model()
    w = model.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    entry = w.external_data.add()
    entry.key, entry.value = "location", "w.bin\0../../etc/hostname"
    case.files = {"model.onnx": model.SerializeToString()}
    with pytest.raises(ModelLoadError, match="NUL byte"):
        read_model(case.write(tmp_path))


def test_reference_with_float16_inputs_runs_on_float32_samples(tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "m.onnx")
    out = run_onnx(tmp_path / "m.onnx", [{"x": np.array([[-1, 2, -3, 4]], np.float32)}])
    assert out[0][0].tolist() == [[0, 2, 0, 4]]


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _npy(arr: np.ndarray, **kw: bool) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, **kw)
    return buf.getvalue()


BAD_DATA = {
    "not a zip": (b"PK\x03\x04 not really", "cannot read"),
    "junk member": (_zip({"x.npy": b"hello"}), "not a numpy array|unreadable header"),
    "object array": (_zip({"x.npy": _npy(np.array([1, "a"], dtype=object), allow_pickle=True)}), "pickles"),
    "nan": (_zip({"x.npy": _npy(np.array([[[np.nan, 0, 0, 0]]], np.float32))}), "NaN or infinite"),
    "npy named npz": (_npy(np.zeros((2, 1, 4), np.float32)), "single .npy array"),
}


@pytest.mark.parametrize("data,message", BAD_DATA.values(), ids=BAD_DATA.keys())
def test_bad_calibration_data_is_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "calib.npz"
    path.write_bytes(data)
    with pytest.raises(CalibrationError, match=message) as info:
        load_arrays(path, [InputSpec("x", np.dtype("float32"), (1, 4))])
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("data,message", list(BAD_DATA.values())[:3] + [BAD_DATA["npy named npz"]],
                         ids=["not a zip", "junk member", "object array", "npy named npz"])
def test_the_agent_refuses_bad_inputs_files(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "inputs.npz"
    path.write_bytes(data)
    with pytest.raises(InputSpecError, match=message.split()[0]):
        read_npz(str(path))


def test_the_agent_checks_the_shape_of_given_inputs(tmp_path: Path) -> None:
    path = tmp_path / "inputs.npz"
    np.savez(path, x=np.zeros((8, 1, 4), np.float32))
    with pytest.raises(InputSpecError, match="has shape 8x1x4 but the model expects 1x4"):
        load_npz(str(path), [TensorInfo(name="x", shape=[1, 4], dtype="float32")])


def test_hostile_inputs_short_run(tmp_path: Path) -> None:
    """Fifty of the campaign's inputs through inspect and devices list (a few seconds)."""
    tally = Tally("quick")

    @settings(max_examples=25, **SETTINGS)
    @given(hostile_models())
    def models(case: ModelCase) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as root:
            ws = Workspace(Path(root))
            judge(tally, case.kind, run_in_process(ws, ["inspect", str(case.write(ws.inputs)), "--json"]),
                  names=("model.onnx",), allowed={2} if case.must_refuse else None)

    @settings(max_examples=25, **SETTINGS)
    @given(hostile_yaml("inventory"))
    def inventories(case: YamlCase) -> None:
        with tempfile.TemporaryDirectory(dir=tmp_path) as root:
            ws = Workspace(Path(root))
            (ws.inputs / "devices.yaml").write_bytes(case.data)
            judge(tally, case.kind, run_in_process(ws, ["devices", "list", "--inventory",
                                                        str(ws.inputs / "devices.yaml")]), names=("devices.yaml",))

    models()
    inventories()
    assert tally.tried >= 50 and tally.clean == tally.tried


@pytest.mark.parametrize("dims,raw", [([-(2**40), 3], None), ([4, 3], b"\0" * 5)], ids=["negative dims", "short bytes"])
def test_a_corrupt_initializer_is_refused(tmp_path: Path, dims: list[int], raw: bytes | None) -> None:
    model = chain_model()
    w = model.graph.initializer[0]
    del w.dims[:]
    w.dims.extend(dims)
    if raw is not None:
        w.raw_data = raw
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ModelLoadError, match="weight 'W' declares"):
        read_model(path)
