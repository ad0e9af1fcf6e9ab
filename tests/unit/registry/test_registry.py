"""The descriptor registry: lazy loading, duplicate and unknown names, plug-ins through EDGEOPT_PLUGIN_PATH, and
target behaviour read from target properties (accelerator kind), not from target names."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import onnx
import pytest

from edgeopt.enums import AcceleratorKind
from edgeopt.names import ModelFormat, RuntimeName
from edgeopt.passes.base import ArtifactFormat
from edgeopt.passes.int8_target import QuantTypeName, int8_defaults
from edgeopt.registry import (
    FormatDescriptor,
    LazyRegistry,
    RegistryError,
    format_names,
    get_format,
    get_runtime,
    loaders,
    runtime_names,
)
from edgeopt.registry.lookup import default_onnxruntime_providers, model_digest, model_files
from edgeopt.runners import ssh_cache
from edgeopt.targets import Target, load_registry
from edgeopt_agent import runtimes as agent
from tests.conftest import make_matmul_model

ONNX = "edgeopt.registry.formats.onnx:DESCRIPTOR"


def _target(**overrides: object) -> Target:
    data: dict[str, object] = {"name": "board", "description": "a test board", "arch": "aarch64",
                               "accelerator": "cpu", "runtimes": ["onnxruntime"], "precisions": ["fp32"],
                               "detect": True}
    return Target.model_validate({**data, **overrides})


def test_one_enum_for_files_and_artifacts():
    assert ArtifactFormat is ModelFormat
    assert {"pytorch", "tensorrt_onnx", "tensorrt_engine"} <= set(ModelFormat.constants())


def test_registering_a_name_twice_names_both_paths():
    reg = LazyRegistry("format", FormatDescriptor, {"onnx": ONNX})
    with pytest.raises(RegistryError, match=r"format 'onnx' is registered twice: .*onnx:DESCRIPTOR.*other:X"):
        reg.register("onnx", "other:X", origin="entry point in edgeopt.formats")
    with pytest.raises(RegistryError, match="is not 'package.module:attribute'"):
        reg.register("x", "no_colon")


def test_unknown_name_suggests_the_closest_and_lists_all():
    with pytest.raises(RegistryError, match=r"unknown runtime 'onnxrutime' \(did you mean 'onnxruntime'\?\); "
                                            r"known runtimes: onnxruntime, openvino"):
        get_runtime("onnxrutime")


def test_a_path_must_load_a_descriptor_of_that_name():
    reg = LazyRegistry("format", FormatDescriptor, {"tflite": ONNX, "bad": "edgeopt.registry:BUILTIN_FORMATS",
                                                     "gone": "edgeopt.nothing_here:X"})
    with pytest.raises(RegistryError, match="is named 'onnx'"):
        reg.get("tflite")
    with pytest.raises(RegistryError, match="is not a FormatDescriptor"):
        reg.get("bad")
    with pytest.raises(RegistryError, match="could not be loaded: ModuleNotFoundError"):
        reg.get("gone")


def test_loaders_follow_the_fallback_order_and_leave_out_null():
    assert [r.name for r in loaders(ModelFormat.ONNX)] == ["onnxruntime", "openvino", "tensorrt"]
    assert [r.name for r in loaders(ModelFormat.TENSORRT_ONNX)] == ["tensorrt"]
    assert loaders(ModelFormat.PYTORCH) == [] and get_runtime("null").loads("tflite")


def test_an_unregistered_name_is_not_a_member():
    with pytest.raises(ValueError):
        RuntimeName("warp_drive")
    with pytest.raises(ValueError):
        ModelFormat("onnxc")


def _plugin(root: Path, entry_points: str, module: str) -> Path:
    dist = root / "edgeopt_unitplug-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: edgeopt-unitplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    (root / "edgeopt_unitplug.py").write_text(textwrap.dedent(module))
    return root


@pytest.fixture()
def plugin_env(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "path", list(sys.path))

    def activate(root: Path) -> None:
        monkeypatch.setenv("EDGEOPT_PLUGIN_PATH", str(root))

    return activate


def test_plugin_runtime_joins_both_registries_and_the_enum(tmp_path, plugin_env):
    plugin_env(_plugin(tmp_path, """
        [edgeopt.runtimes]
        unitrt = edgeopt_unitplug:RT
        [edgeopt_agent.runtimes]
        unitrt = edgeopt_unitplug:UnitRuntime
    """, """
        from edgeopt.registry import RuntimeDescriptor
        from edgeopt_agent.runtimes.null_rt import NullRuntime
        RT = RuntimeDescriptor(name="unitrt", display_name="Unit")
        class UnitRuntime(NullRuntime):
            name = "unitrt"
            formats = ("onnx",)
    """))
    assert runtime_names()[-1] == "unitrt" and "unitrt" in agent.names() and "unitrt" in RuntimeName.all()
    assert get_runtime("unitrt").formats == ("onnx",)  # declared once, by the agent class
    assert RuntimeName("unitrt") is RuntimeName("unitrt") and RuntimeName("unitrt").value == "unitrt"
    assert _target(runtimes=["unitrt", "onnxruntime"]).runtimes[0].value == "unitrt"
    assert agent.create("unitrt").version()


def test_plugin_reusing_a_builtin_name_is_an_error(tmp_path, plugin_env):
    plugin_env(_plugin(tmp_path, """
        [edgeopt.formats]
        onnx = edgeopt_unitplug:FMT
    """, "FMT = None\n"))
    with pytest.raises(RegistryError, match=r"format 'onnx' is registered twice.*entry point in edgeopt.formats"):
        format_names()


def test_accelerator_kind_is_a_target_property_not_a_name():
    nvidia = _target(name="lab-box", accelerator="gpu", accelerator_kind="nvidia_gpu")
    assert default_onnxruntime_providers(nvidia) == ["TensorrtExecutionProvider", "CUDAExecutionProvider",
                                                     "CPUExecutionProvider"]
    named_jetson = _target(name="jetson-but-cpu", accelerator="cpu", accelerator_kind="cpu")
    assert default_onnxruntime_providers(named_jetson) == ["CPUExecutionProvider"]
    assert get_runtime("onnxruntime").install_hint(named_jetson) == "pip install onnxruntime"
    assert "Jetson Zoo" in get_runtime("onnxruntime").install_hint(nvidia)


@pytest.mark.parametrize("name,accelerator,kind", [
    ("my-jetson", "gpu (Ampere)", AcceleratorKind.NVIDIA_GPU),
    ("box", "edgetpu", AcceleratorKind.EDGETPU),
    ("nuc2", "gpu (Iris Xe)", AcceleratorKind.INTEL_GPU),
    ("pi", "cpu", AcceleratorKind.CPU),
    ("odroid", "gpu (Mali-G52)", AcceleratorKind.OTHER_GPU),
])
def test_a_yaml_without_the_kind_gets_it_from_its_text(name, accelerator, kind):
    assert _target(name=name, accelerator=accelerator).accelerator_kind is kind


def test_shipped_targets_state_their_kind():
    for path in sorted((Path(__file__).resolve().parents[3] / "targets").glob("*.yaml")):
        assert "accelerator_kind:" in path.read_text(), path.name
    assert load_registry().get("jetson-nano").accelerator_kind is AcceleratorKind.NVIDIA_GPU


def test_int8_defaults_follow_the_preferred_runtime_descriptor():
    trt = int8_defaults(_target(runtimes=["tensorrt", "onnxruntime"], arch="x86_64"))
    assert trt.activation_type is QuantTypeName.S8 and trt.reason == "TensorRT target: symmetric S8/S8 QDQ"
    assert int8_defaults(_target(runtimes=["onnxruntime", "tensorrt"])).activation_type is QuantTypeName.U8


def test_one_answer_for_the_files_of_a_model(tmp_path):
    src = make_matmul_model(tmp_path / "src.onnx")
    model = tmp_path / "m" / "big.onnx"
    model.parent.mkdir()
    onnx.save_model(onnx.load(src), model, save_as_external_data=True, location="big.onnx.data", size_threshold=0)
    files = [p.name for p in model_files(model, ModelFormat.ONNX)]
    assert files == ["big.onnx", "big.onnx.data"] == [p.name for p in ssh_cache.model_files(model)]
    assert model_files(model, ModelFormat.TENSORRT_ONNX) == model_files(model, ModelFormat.ONNX)
    assert model_digest(model, ModelFormat.ONNX)[1] == sum((model.parent / f).stat().st_size for f in files)
    assert get_format("onnx").companions(model) == [(model.parent / "big.onnx.data").resolve()]
