"""``devices check``: the agent's probe facts (real, from this machine and emulated sysfs trees) and the
report built from them against a target's runtimes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edgeopt.devices.check import build_report, install_hint
from edgeopt.names import RuntimeName
from edgeopt.runners.base import agent_dir
from edgeopt.targets import load_registry
from edgeopt_agent import probe


def _agent_probe(*args: str) -> dict:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(agent_dir()), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-m", "edgeopt_agent", "probe", *args], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    workdir = tmp_path_factory.mktemp("wd") / "not" / "yet"
    result = _agent_probe("--workdir", str(workdir))
    result["workdir"] = str(workdir)
    return result


def test_probe_reports_packages_disk_memory_and_sensors(facts):
    import numpy
    import onnxruntime

    assert facts["packages"]["numpy"] == {"installed": True, "version": numpy.__version__, "distribution": "numpy"}
    assert facts["packages"]["onnxruntime"]["version"] == onnxruntime.__version__
    assert set(facts["packages"]) == {"numpy", "onnxruntime", "ai_edge_litert", "tflite_runtime", "openvino",
                                      "tensorrt", "pycoral", "onnxruntime_genai", "openvino_genai",
                                      "openvino_tokenizers", "llama_cpp"}
    disk = facts["disk"]
    assert disk["free_bytes"] > 0 and Path(facts["workdir"]).is_relative_to(disk["measured_at"])
    assert facts["memory_available_mb"] > 0 and isinstance(facts["power_sensors"], list)


def test_power_sensors_on_emulated_boards(tmp_path: Path):
    assert probe.power_sensors(str(tmp_path)) == []
    ina = tmp_path / "sys/bus/i2c/drivers/ina3221x"
    (ina / "1-0040/iio:device0").mkdir(parents=True)
    hw = tmp_path / "sys/class/hwmon/hwmon3"
    hw.mkdir(parents=True)
    (hw / "name").write_text("ina3221\n")
    (hw / "in1_label").write_text("VDD_IN\n")
    (hw / "in2_label").write_text("VDD_CPU_GPU_CV\n")
    (tmp_path / "sys/class/hwmon/hwmon0").mkdir()  # a hwmon without rail labels (e.g. a CPU sensor): ignored
    (tmp_path / "sys/class/powercap/intel-rapl:0").mkdir(parents=True)
    found = {s["kind"]: s for s in probe.power_sensors(str(tmp_path))}
    assert set(found) >= {"ina3221", "hwmon", "rapl"}
    assert found["hwmon"]["rails"] == ["VDD_IN", "VDD_CPU_GPU_CV"] and found["hwmon"]["name"] == "ina3221"


def test_vcgencmd_on_path_is_a_sensor(tmp_path: Path, monkeypatch):
    tool = tmp_path / "bin" / "vcgencmd"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho ok\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert [s for s in probe.power_sensors(str(tmp_path)) if s["kind"] == "vcgencmd"][0]["path"] == str(tool)


def test_ready_report_for_this_machine(facts):
    local = load_registry().get("local")
    r = build_report(facts, device="box", runner="ssh:root@h:22", target=local)
    assert r.ready and r.problems == [] and r.target == "local"
    assert r.runtimes[0].runtime is RuntimeName.ONNXRUNTIME and r.runtimes[0].available
    assert r.arch == os.uname().machine and r.disk_free_mb and r.disk_free_mb > 0
    assert r.workdir == facts["workdir"]


def test_missing_runtimes_get_board_specific_install_hints(facts):
    bare = json.loads(json.dumps(facts))
    for name in bare["packages"]:
        bare["packages"][name] = {"installed": False, "version": None, "distribution": None}
    bare["runtimes"] = {name: {"available": name == "null", "hint": "x"} for name in bare["runtimes"]}
    registry = load_registry()
    pi = build_report(bare, device="pi", runner="ssh:pi@h:22", target=registry.get("rpi5"))
    assert not pi.ready and [s.runtime for s in pi.runtimes] == [RuntimeName.TFLITE, RuntimeName.ONNXRUNTIME]
    text = " | ".join(pi.problems)
    assert "python3-numpy" in text and "pip install ai-edge-litert" in text and "pip install onnxruntime" in text
    orin = build_report(bare, device="o", runner="ssh:o@h:22", target=registry.get("jetson-orin-nano"))
    assert "JetPack" in orin.runtimes[0].install and "Jetson Zoo" in (orin.runtimes[1].install or "")
    coral = build_report(bare, device="c", runner="ssh:c@h:22", target=registry.get("coral-devboard"))
    assert "libedgetpu" in (coral.runtimes[0].install or "") and any("pycoral" in p for p in coral.problems)


def test_agent_without_a_runtime_registered_is_judged_by_its_package(facts):
    old_agent = json.loads(json.dumps(facts))
    old_agent["runtimes"] = {"onnxruntime": old_agent["runtimes"]["onnxruntime"]}
    old_agent["packages"]["ai_edge_litert"] = {"installed": True, "version": "9.9", "distribution": "ai-edge-litert"}
    r = build_report(old_agent, device="pi", runner="ssh:pi@h:22", target=load_registry().get("rpi5"))
    assert r.runtimes[0].available and r.runtimes[0].version == "9.9" and r.ready


def test_install_hint_without_target():
    assert install_hint(RuntimeName.ONNXRUNTIME, None) == "pip install onnxruntime"
    assert install_hint(RuntimeName.OPENVINO, None) == "pip install openvino"


def test_the_generative_runtimes_are_reported_beside_the_targets_own(facts):
    """Issue 30: devices check said nothing about the LLM runtimes (the target's list holds the one-pass ones)."""
    local = load_registry().get("local")
    mixed = json.loads(json.dumps(facts))
    mixed["runtimes"]["onnxruntime_genai"] = {"available": True, "version": "9.9"}
    mixed["runtimes"]["openvino_genai"] = {"available": False, "hint": "x"}
    r = build_report(mixed, device="box", runner="ssh:root@h:22", target=local)
    found = {s.runtime.value: s for s in r.other_kinds["generative"]}
    assert found["onnxruntime_genai"].available and found["onnxruntime_genai"].version == "9.9"
    assert not found["openvino_genai"].available and "openvino-genai" in (found["openvino_genai"].install or "")
    assert "generative: onnxruntime_genai ready, openvino_genai missing" in r.summary
    assert r.ready and r.problems == []  # an LLM runtime missing does not make a one-pass target not ready
