"""Model format detection and the format -> runtime -> execution provider choices, on the shipped targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.errors import InputError, ModelLoadError
from edgeopt.names import RuntimeName
from edgeopt.registry.lookup import (
    ModelFormat,
    choose_runtime,
    default_onnxruntime_providers,
    default_runtime,
    detect_format,
    model_digest,
    model_files,
    runtime_installed_here,
)
from edgeopt.targets import load_registry
from tests.tflite_models import write_fully_connected

IR_XML = '<?xml version="1.0"?>\n<net name="m" version="11">\n<layers/>\n</net>\n'


@pytest.fixture(scope="module")
def targets():
    return load_registry()


@pytest.fixture()
def files(tmp_path: Path, matmul_model: Path) -> dict[str, Path]:
    xml = tmp_path / "m.xml"
    xml.write_text(IR_XML)
    xml.with_suffix(".bin").write_bytes(b"\x00" * 8)
    pkg = tmp_path / "m.mlpackage"
    (pkg / "Data").mkdir(parents=True)
    (pkg / "Manifest.json").write_text("{}")
    (pkg / "Data" / "weights.bin").write_bytes(b"w")
    engine = tmp_path / "m.engine"
    engine.write_bytes(b"ftrt")
    mlmodel = tmp_path / "m.mlmodel"
    mlmodel.write_bytes(b"\x08\x04")
    return {"onnx": matmul_model, "xml": xml, "tflite": write_fully_connected(tmp_path / "m.tflite"),
            "engine": engine, "mlpackage": pkg, "mlmodel": mlmodel}


@pytest.mark.parametrize("key,fmt", [
    ("onnx", ModelFormat.ONNX), ("xml", ModelFormat.OPENVINO_IR), ("tflite", ModelFormat.TFLITE),
    ("engine", ModelFormat.TENSORRT_ENGINE), ("mlpackage", ModelFormat.COREML), ("mlmodel", ModelFormat.COREML),
])
def test_detect_by_suffix(files, key, fmt):
    assert detect_format(files[key]) is fmt


def test_plan_suffix_is_a_tensorrt_engine(tmp_path):
    (tmp_path / "m.plan").write_bytes(b"x")
    assert detect_format(tmp_path / "m.plan") is ModelFormat.TENSORRT_ENGINE


def test_unknown_suffix_is_decided_by_content(files, tmp_path):
    renamed_tflite = tmp_path / "model.bin"
    renamed_tflite.write_bytes(files["tflite"].read_bytes())
    assert detect_format(renamed_tflite) is ModelFormat.TFLITE
    renamed_onnx = tmp_path / "model"
    renamed_onnx.write_bytes(files["onnx"].read_bytes())
    assert detect_format(renamed_onnx) is ModelFormat.ONNX  # no marker: read as ONNX, inspect validates it


@pytest.mark.parametrize("name,content,needle", [
    ("fake.tflite", b"not a flatbuffer at all", "not a TFLite flatbuffer"),
    ("fake.xml", b"<?xml version='1.0'?><html/>", "not an OpenVINO IR"),
])
def test_content_that_contradicts_the_suffix_is_refused(tmp_path, name, content, needle):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ModelLoadError, match=needle):
        detect_format(tmp_path / name)


def test_ir_without_bin_and_bad_package_and_missing_file(tmp_path):
    (tmp_path / "a.xml").write_text(IR_XML)
    with pytest.raises(ModelLoadError, match=r"no weights file a\.bin"):
        detect_format(tmp_path / "a.xml")
    (tmp_path / "b.mlpackage").mkdir()
    with pytest.raises(ModelLoadError, match="Manifest.json"):
        detect_format(tmp_path / "b.mlpackage")
    with pytest.raises(ModelLoadError, match="not found"):
        detect_format(tmp_path / "none.onnx")
    with pytest.raises(ModelLoadError, match="is a directory"):
        detect_format(tmp_path)


def test_model_files_and_digest_cover_every_file(files):
    xml = files["xml"]
    assert model_files(xml, ModelFormat.OPENVINO_IR) == [xml, xml.with_suffix(".bin")]
    sha, size = model_digest(xml, ModelFormat.OPENVINO_IR)
    assert size == xml.stat().st_size + 8
    xml.with_suffix(".bin").write_bytes(b"\x01" * 8)  # weights change -> digest changes
    assert model_digest(xml, ModelFormat.OPENVINO_IR)[0] != sha
    pkg = files["mlpackage"]
    assert [p.name for p in model_files(pkg, ModelFormat.COREML)] == ["weights.bin", "Manifest.json"]
    assert model_digest(pkg, ModelFormat.COREML)[1] == 3


@pytest.mark.parametrize("target,fmt,runtime", [
    ("rpi5", ModelFormat.TFLITE, RuntimeName.TFLITE),
    ("rpi5", ModelFormat.ONNX, RuntimeName.ONNXRUNTIME),
    ("jetson-orin-nano", ModelFormat.ONNX, RuntimeName.TENSORRT),
    ("jetson-orin-nano", ModelFormat.TENSORRT_ENGINE, RuntimeName.TENSORRT),
    ("intel-nuc", ModelFormat.ONNX, RuntimeName.OPENVINO),
    ("intel-nuc", ModelFormat.OPENVINO_IR, RuntimeName.OPENVINO),
    ("coral-usb", ModelFormat.TFLITE, RuntimeName.TFLITE),
    ("local", ModelFormat.ONNX, RuntimeName.ONNXRUNTIME),
    ("local", ModelFormat.TFLITE, RuntimeName.TFLITE),  # a detected target falls back to any loader
])
def test_default_runtime_follows_the_target_preference(targets, target, fmt, runtime):
    assert default_runtime(fmt, targets.get(target)) is runtime


def test_no_runtime_of_the_target_loads_the_format(targets):
    with pytest.raises(InputError, match=r"coral-usb runs tflite, none of which loads onnx models.*--runtime"):
        default_runtime(ModelFormat.ONNX, targets.get("coral-usb"))


def test_installed_check_picks_the_first_installed_preferred_runtime(targets):
    jetson = targets.get("jetson-orin-nano")
    assert default_runtime(ModelFormat.ONNX, jetson, installed=lambda r: r is RuntimeName.ONNXRUNTIME) \
        is RuntimeName.ONNXRUNTIME
    # nothing installed: the first preferred one, and the agent will say what to install
    assert default_runtime(ModelFormat.ONNX, jetson, installed=lambda r: False) is RuntimeName.TENSORRT


def test_runtime_installed_here_matches_this_python():
    import importlib.util

    assert runtime_installed_here(RuntimeName.ONNXRUNTIME) and runtime_installed_here(RuntimeName.NULL)
    assert runtime_installed_here(RuntimeName.OPENVINO) == (importlib.util.find_spec("openvino") is not None)


@pytest.mark.parametrize("target,expected", [
    ("local", ["CPUExecutionProvider"]),
    ("rpi5", ["CPUExecutionProvider"]),
    ("jetson-orin-nano", ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]),
    ("jetson-nano", ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]),
    ("intel-nuc", ["OpenVINOExecutionProvider", "CPUExecutionProvider"]),
])
def test_preferred_providers_per_target(targets, target, expected):
    assert default_onnxruntime_providers(targets.get(target)) == expected


def test_providers_are_filtered_to_what_the_build_has(targets):
    jetson = targets.get("jetson-agx-orin")
    assert default_onnxruntime_providers(jetson, ["CUDAExecutionProvider", "CPUExecutionProvider"]) == [
        "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert default_onnxruntime_providers(jetson, ["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert default_onnxruntime_providers(jetson, []) == ["CPUExecutionProvider"]


def test_choose_runtime_remote_jetson_sends_the_preferred_list_with_fallback(targets):
    name, options = choose_runtime(ModelFormat.ONNX, targets.get("jetson-orin-nano"), "onnxruntime", None,
                                   local=False)
    assert name == "onnxruntime"
    assert options == {"providers": ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
                       "providers_fallback": True}


def test_choose_runtime_local_filters_and_keeps_user_providers(targets):
    import onnxruntime

    jetson = targets.get("jetson-orin-nano")
    name, options = choose_runtime(ModelFormat.ONNX, jetson, "onnxruntime", None, local=True)
    want = [p for p in ("TensorrtExecutionProvider", "CUDAExecutionProvider")
            if p in onnxruntime.get_available_providers()]
    assert options == ({"providers": want + ["CPUExecutionProvider"]} if want else {})
    mine = {"providers": ["CPUExecutionProvider"]}
    assert choose_runtime(ModelFormat.ONNX, jetson, "onnxruntime", mine, local=False) == ("onnxruntime", mine)


def test_choose_runtime_auto_and_mismatch(targets):
    local = targets.get("local")
    assert choose_runtime(ModelFormat.ONNX, local, None, None, local=True) == ("onnxruntime", {})
    assert choose_runtime(ModelFormat.TFLITE, local, "null", None, local=True) == ("null", {})
    with pytest.raises(InputError, match="--runtime onnxruntime does not load tflite models: use one of tflite"):
        choose_runtime(ModelFormat.TFLITE, local, "onnxruntime", None, local=True)
