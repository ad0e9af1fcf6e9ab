"""What setup installs where: platform tags for host-side downloads, runtime spellings, vendor-only runtimes."""

from __future__ import annotations

import sys

import pytest

from edgeopt.devices.dependency import name_device_in_hint
from edgeopt.devices.setup.packages import install_plan, parse_runtimes
from edgeopt.devices.setup.wheels import local_wheels, platform_tags
from edgeopt.errors import InputError
from edgeopt.names import RuntimeName
from edgeopt.targets import load_registry
from tests.plugin_kit import runtime_plugin


def test_platform_tags_cover_every_manylinux_the_device_can_load():
    tags = platform_tags("aarch64", ["glibc", "2.36"])
    assert tags[0] == "manylinux_2_36_aarch64" and tags[-1] == "manylinux2014_aarch64"
    assert "manylinux_2_28_aarch64" in tags and not any("_2_16_" in t for t in tags)
    x86 = platform_tags("x86_64", ["glibc", "2.31"])
    assert {"manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64", "manylinux_2_5_x86_64"} <= set(x86)
    with pytest.raises(InputError, match="musl .*--wheels DIR"):
        platform_tags("x86_64", ["musl", "1.2"])


def test_runtimes_by_name_or_package_and_vendor_only_ones_are_named_not_installed():
    assert parse_runtimes("onnxruntime, ai-edge-litert,tflite") == [RuntimeName.ONNXRUNTIME, RuntimeName.TFLITE]
    assert parse_runtimes(None) is None
    with pytest.raises(InputError, match="unknown runtime; known:"):
        parse_runtimes("onnx-runtime")
    reg = load_registry()
    pi, orin, coral = reg.get("rpi5"), reg.get("jetson-orin-nano"), reg.get("coral-devboard")
    assert install_plan(RuntimeName.TFLITE, target=pi, arch="aarch64", python=(3, 11)).requirements == \
        ("ai-edge-litert",)
    assert install_plan(RuntimeName.TFLITE, target=pi, arch="aarch64", python=(3, 8)).requirements == \
        ("tflite-runtime",)
    trt = install_plan(RuntimeName.TENSORRT, target=orin, arch="aarch64", python=(3, 10))
    assert trt.requirements == () and "python3-libnvinfer" in (trt.vendor or "")
    edgetpu = install_plan(RuntimeName.TFLITE, target=coral, arch="aarch64", python=(3, 9))
    assert edgetpu.requirements == () and "libedgetpu1-std" in (edgetpu.vendor or "")


def test_wheel_directory_must_hold_wheels(tmp_path):
    with pytest.raises(InputError, match="no .whl files"):
        local_wheels(tmp_path)
    with pytest.raises(InputError, match="no such directory"):
        local_wheels(tmp_path / "none")


def test_setup_hint_names_the_inventory_device():
    line = "numpy is not installed for /usr/bin/python3 on raspberrypi: run 'edgeopt devices setup raspberrypi' (or: x)"
    assert name_device_in_hint(line, "pi5-01") == ("numpy is not installed for /usr/bin/python3 on raspberrypi: run "
                                                   "'edgeopt devices setup pi5-01' (or: x)")


def test_setup_reads_the_runtime_descriptors_so_a_new_runtime_is_one_file():
    from edgeopt.devices.setup.packages import aliases
    from edgeopt.enums import AcceleratorKind, Arch
    from edgeopt.registry.runtime_spec import RuntimeDescriptor, SetupRule

    reg = load_registry()
    pi, orin, local = reg.get("rpi5"), reg.get("jetson-orin-nano"), reg.get("local")
    names = aliases()  # every runtime, its setup aliases and its pip names
    assert names["ai-edge-litert"] is names["tflite-runtime"] is names["litert"] is RuntimeName.TFLITE
    assert names["onnxruntime-gpu"] is RuntimeName.ONNXRUNTIME and names["trt"] is RuntimeName.TENSORRT
    assert install_plan(RuntimeName.ONNXRUNTIME, target=orin, arch="aarch64", python=(3, 10)).vendor
    assert install_plan(RuntimeName.ONNXRUNTIME, target=pi, arch="aarch64", python=(3, 11)).requirements == \
        ("onnxruntime",)
    assert install_plan(RuntimeName.OPENVINO, target=local, arch="x86_64", python=(3, 11)).requirements == \
        ("openvino",)
    coreml = install_plan(RuntimeName.COREML, target=local, arch="x86_64", python=(3, 11))
    assert coreml.requirements == () and "macOS" in (coreml.vendor or "")  # no rule: its install hint, named
    assert install_plan(RuntimeName.NULL, target=local, arch="x86_64", python=(3, 11)) == \
        install_plan(RuntimeName.NULL, target=None, arch="x86_64", python=(3, 8))  # built into the agent: nothing
    new = RuntimeDescriptor(name="npu_rt", display_name="NPU RT", module_sets=(("npu_rt",),),
                            install="ask the vendor",
                            setup=(SetupRule(accelerator=AcceleratorKind.OTHER_NPU, arch=Arch.AARCH64,
                                             vendor="sudo apt-get install npu-rt"),
                                   SetupRule(min_python=(3, 10), pip=("npu-rt",))))
    assert new.setup_plan(None, "x86_64", (3, 11)) == (("npu-rt",), None)
    assert new.setup_plan(None, "x86_64", (3, 9)) == ((), "ask the vendor")  # no rule matches: named


def test_a_plugin_runtime_is_accepted_by_name(tmp_path, monkeypatch):
    """``devices setup --runtimes ortplug``: plug-in runtimes are spelled like built-ins (issue 20)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("EDGEOPT_PLUGIN_PATH", str(runtime_plugin(tmp_path / "rt")))
    assert parse_runtimes("ortplug,onnxruntime") == [RuntimeName("ortplug"), RuntimeName.ONNXRUNTIME]
    plan = install_plan(RuntimeName("ghostrt"), target=None, arch="x86_64", python=(3, 11))
    assert plan.requirements == () and "ghost-runtime-lib" in (plan.vendor or "")


def test_devices_setup_knows_the_llm_runtimes_by_name_and_pip_alias():
    ort, ov = parse_runtimes("onnxruntime-genai,openvino_genai")
    assert (ort, ov) == ("onnxruntime_genai", "openvino_genai")
    assert install_plan(ort, target=None, arch="aarch64", python=(3, 8)).requirements == ("onnxruntime-genai",)
    assert install_plan(ov, target=None, arch="x86_64", python=(3, 11)).requirements == \
        ("openvino-genai", "openvino-tokenizers")
    (llama,) = parse_runtimes("llama-cpp-python")  # built from source on the board (docs/llm.md, "llama.cpp")
    assert llama == "llama_cpp"
    assert install_plan(llama, target=None, arch="aarch64", python=(3, 8)).requirements == ("llama-cpp-python",)


def test_llama_cpp_compiles_on_the_board_and_its_wheel_is_found_by_project_and_version(tmp_path):
    from edgeopt.devices.setup.built_wheels import cached_wheel, project_of

    plan = install_plan(RuntimeName("llama_cpp"), target=load_registry().get("rpi5"), arch="aarch64", python=(3, 11))
    assert plan.requirements == ("llama-cpp-python",) and plan.compiles and plan.vendor is None
    assert dict(plan.build_env) == {"CMAKE_ARGS": "-DLLAVA_BUILD=OFF"}
    assert not install_plan(RuntimeName.ONNXRUNTIME, target=None, arch="x86_64", python=(3, 11)).compiles
    assert project_of("llama-cpp-python==0.3.36") == "llama_cpp_python" == project_of("Llama.Cpp_Python>=0.3")
    assert project_of("/x/probe_built-1.0.tar.gz") == "probe_built"
    for name in ("llama_cpp_python-0.3.36-cp311-cp311-linux_aarch64.whl",
                 "llama_cpp_python-0.3.35-cp311-cp311-linux_aarch64.whl", "numpy-2.0-cp311-cp311-linux_aarch64.whl"):
        (tmp_path / name).write_bytes(b"")
    found = cached_wheel(tmp_path, "llama-cpp-python==0.3.36")
    assert found is not None and found.name.startswith("llama_cpp_python-0.3.36-")
    assert cached_wheel(tmp_path, "llama-cpp-python==0.3.30") is None
