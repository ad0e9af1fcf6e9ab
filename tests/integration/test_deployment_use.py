"""bench and profile of a deployment run its files with exactly its settings; a flag that contradicts it, or a
file changed since it was measured, is exit 2; another runtime version or CPU is a warning (issue 21)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import edgeopt
from edgeopt.deploy.use import DeploymentConflictError
from edgeopt.errors import InputError
from edgeopt.fsutil import sha256_file
from edgeopt.qualify.result import QualifyResult
from tests.cli_here import edgeopt_here
from tests.conftest import make_matmul_model
from tests.deployments import edit_deployment, make_deployment, to_ir

# 100 iterations: p99's 100 samples whatever the CPU's load (20 gave 76 samples on a loaded 2-core machine)
FAST = ["--iterations", "100", "--min-duration", "0.1", "--warmup", "2", "--no-budget", "--no-energy"]
API_FAST = {"iterations": 100, "min_duration_s": 0.1, "warmup": 2, "use_target_fps": False, "energy": False}


def edgeopt_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``edgeopt ARGS`` in this process (tests/cli_here.py; tests/integration/test_cli_bench.py runs real ones)."""
    return edgeopt_here(*args)


@pytest.fixture(scope="module")
def onnx_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_matmul_model(tmp_path_factory.mktemp("m") / "mm.onnx")


@pytest.fixture(scope="module")
def ir_deployment(tmp_path_factory: pytest.TempPathFactory, onnx_model: Path) -> Path:
    """An OpenVINO IR deployment measured in f32 on one thread."""
    xml = to_ir(onnx_model, tmp_path_factory.mktemp("ir"))
    return make_deployment(tmp_path_factory.mktemp("dep") / "recommended", xml, runtime="openvino",
                           runtime_options={"inference_precision": "f32"}, threads=1)


@pytest.fixture()
def ort_deployment(tmp_path: Path, onnx_model: Path) -> Path:
    return make_deployment(tmp_path / "recommended", onnx_model, runtime="onnxruntime", threads=1)


def test_bench_of_an_ir_deployment_applies_its_options(ir_deployment):
    """The runtime reports what it compiled with: f32 (not bf16, OpenVINO's default on AMX CPUs) on 1 thread."""
    result = edgeopt.benchmark(ir_deployment, **API_FAST)
    assert result.runtime.name == "openvino" and result.settings.threads == 1
    details = result.runtime.model_dump()
    assert details["inference_precision"] == "f32" and details["inference_num_threads"] == 1
    assert result.settings.runtime_options == {"inference_precision": "f32"}
    assert result.deployment is not None and result.deployment.name == "test/openvino"
    assert result.deployment.sha256 == sha256_file(ir_deployment / "deployment.json")
    assert result.model.path.endswith("model.xml")
    assert not [w for w in result.warnings if "deployment" in w]


def test_cli_bench_of_a_deployment_json_runs_its_runtime_and_threads(ort_deployment):
    proc = edgeopt_cli("bench", str(ort_deployment / "deployment.json"), *FAST, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["runtime"]["name"] == "onnxruntime" and doc["settings"]["threads"] == 1
    assert doc["deployment"]["name"] == "test/onnxruntime" and doc["deployment"]["path"] == str(ort_deployment)


@pytest.mark.parametrize("flags, words", [
    (["--threads", "4"], "--threads 4 contradicts deployment"),
    (["--threads", "0"], "(threads 1)"),
    (["--runtime", "null"], "--runtime null contradicts"),
    (["--runtime-option", "graph_optimization_level=basic"], "--runtime-option graph_optimization_level=basic"),
    (["--batch", "2"], "(batch 1)"),
])
def test_a_flag_that_contradicts_the_deployment_is_exit_2(ort_deployment, flags, words):
    proc = edgeopt_cli("bench", str(ort_deployment), *FAST, *flags)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip()
    assert words in line and "--override-deployment" in line and "\n" not in line


def test_override_lets_the_flag_win(ort_deployment):
    proc = edgeopt_cli("bench", str(ort_deployment), *FAST, "--threads", "2", "--override-deployment", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["settings"]["threads"] == 2


def test_a_flag_that_agrees_is_fine(ort_deployment):
    proc = edgeopt_cli("bench", str(ort_deployment), *FAST, "--threads", "1", "--runtime", "onnxruntime", "--json")
    assert proc.returncode == 0, proc.stderr


def test_api_contradiction_raises(ort_deployment):
    with pytest.raises(DeploymentConflictError, match="--threads 3 contradicts"):
        edgeopt.benchmark(ort_deployment, threads=3, **API_FAST)
    assert edgeopt.benchmark(ort_deployment, threads=3, override_deployment=True, **API_FAST).settings.threads == 3


def test_a_changed_file_is_exit_2(ort_deployment):
    (ort_deployment / "mm.onnx").write_bytes((ort_deployment / "mm.onnx").read_bytes() + b"\0")
    proc = edgeopt_cli("bench", str(ort_deployment), *FAST)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "'mm.onnx' changed since it was measured" in line and "\n" not in line


def test_another_runtime_version_and_cpu_is_a_warning(ort_deployment):
    edit_deployment(ort_deployment, runtime_version="0.0.1", cpu_flags=("not_a_flag_here",))
    proc = edgeopt_cli("bench", str(ort_deployment), *FAST, "--json")
    assert proc.returncode == 0, proc.stderr
    warnings = [w for w in json.loads(proc.stdout)["warnings"] if "deployment" in w]
    assert len(warnings) == 1
    assert "runtime onnxruntime" in warnings[0] and "!= 0.0.1 measured" in warnings[0]
    assert "cpu lacks not_a_flag_here" in warnings[0]
    table = edgeopt_cli("bench", str(ort_deployment), *FAST)
    assert table.returncode == 0 and "!= 0.0.1 measured" in table.stdout + table.stderr
    assert "deployment" in table.stdout and "test/onnxruntime" in table.stdout


def test_profile_of_a_deployment_applies_its_options(ir_deployment, onnx_model):
    result = edgeopt.profile(ir_deployment, graph=onnx_model, iterations=5, warmup=1)
    assert result.runtime["name"] == "openvino" and result.runtime["inference_precision"] == "f32"
    assert result.settings.threads == 1 and result.settings.runtime_options == {"inference_precision": "f32"}
    assert result.deployment is not None and result.deployment.name == "test/openvino"
    assert not [n for n in result.notes if "measured elsewhere" in n]


def test_cli_profile_refuses_a_contradicting_flag(ir_deployment):
    proc = edgeopt_cli("profile", str(ir_deployment), "--iterations", "5", "--runtime-option",
                       "inference_precision=bf16")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--runtime-option inference_precision=bf16 contradicts" in proc.stderr
    assert "(runtime_options inference_precision=f32)" in proc.stderr


def _qualify_spec(tmp_path: Path, optimized: Path, reference: Path, extra: str = "") -> Path:
    path = tmp_path / "q.yaml"
    path.write_text(f"name: dep\nmodel: {{path: {reference}}}\noptimized: {optimized}\n"
                    "measure: {iterations: 20, min_duration_s: 0.1, warmup: 2, energy: false}\n"
                    f"gates: {{latency: {{max_ms: 1000, percentile: p50}}}}\n{extra}")
    return path


def _run_qualify(tmp_path: Path, spec: Path) -> QualifyResult:
    return edgeopt.qualify(spec, report_dir=tmp_path / "report", record=False)


def test_qualify_runs_the_deployment_and_gates_a_mismatch(tmp_path, ir_deployment, onnx_model):
    """As measured: deployment_match passes with its settings applied; another runtime version or CPU fails it,
    unless allow_deployment_mismatch."""
    folder = tmp_path / "recommended"
    shutil.copytree(ir_deployment, folder)
    spec = _qualify_spec(tmp_path, folder / "deployment.json", onnx_model)
    result = _run_qualify(tmp_path, spec)
    device = result.devices[0]
    gates = {g.gate: g for g in device.gates}
    assert result.passed and gates["deployment_match"].status.value == "pass", gates["deployment_match"].detail
    assert device.bench.settings.threads == 1 and device.bench.runtime.model_dump()["inference_precision"] == "f32"
    assert device.bench.deployment is not None and device.bench.deployment.name == "test/openvino"

    edit_deployment(folder, runtime_version="2025.1", cpu_flags=("avx2", "not_a_flag_here"))
    failed = _run_qualify(tmp_path, spec)
    gate = {g.gate: g for g in failed.devices[0].gates}["deployment_match"]
    assert not failed.passed and failed.exit_code == 1 and gate.status.value == "fail"
    assert "openvino" in gate.detail and "!= 2025.1 measured" in gate.detail and "cpu lacks" in gate.detail
    assert "not_a_flag_here" in gate.detail
    assert "deployment_match" in (tmp_path / "report" / "junit.xml").read_text()
    assert "DEPLOYMENT MISMATCH" in (tmp_path / "report" / "summary.md").read_text()

    allowed = _run_qualify(tmp_path, _qualify_spec(tmp_path, folder, onnx_model, "allow_deployment_mismatch: true\n"))
    gate = {g.gate: g for g in allowed.devices[0].gates}["deployment_match"]
    assert allowed.passed and gate.status.value == "pass" and "allowed by allow_deployment_mismatch" in gate.detail


def test_qualify_refuses_a_measure_key_that_contradicts_the_deployment(tmp_path, ir_deployment, onnx_model):
    spec = _qualify_spec(tmp_path, ir_deployment, onnx_model)
    spec.write_text(spec.read_text().replace("energy: false}", "energy: false, threads: 3}"))
    proc = edgeopt_cli("qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "measure.threads 3 contradicts deployment" in proc.stderr and "override_deployment: true" in proc.stderr


def test_qualify_refuses_a_changed_deployment_file(tmp_path, ort_deployment, onnx_model):
    (ort_deployment / "mm.onnx").write_bytes(b"changed")
    spec = _qualify_spec(tmp_path, ort_deployment, onnx_model)
    proc = edgeopt_cli("qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history")
    assert proc.returncode == 2 and "optimized" in proc.stderr and "changed since it was measured" in proc.stderr


def test_qualify_refuses_a_recipe_on_a_deployment(tmp_path, ort_deployment):
    """A recipe applied to a deployment's file would qualify another model without its settings: exit 2, one line."""
    spec = tmp_path / "recipe-on-deployment.yaml"
    spec.write_text(f"name: t\nmodel: {{path: {ort_deployment}}}\nrecipe: fp16\n"
                    "measure: {iterations: 10, min_duration_s: 0.05, warmup: 1, energy: false}\n"
                    "gates: {latency: {max_ms: 1000, percentile: p50}}\n")
    proc = edgeopt_cli("qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "a deployment" in proc.stderr and "remove recipe" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_public_benchmark_takes_the_typed_settings_the_cli_builds(tiny_cnn):
    from edgeopt.settings import MeasureSettings

    settings = MeasureSettings.from_kwargs(iterations=100, min_duration_s=0.05, warmup=2, use_target_fps=False,
                                           energy=False, threads=1)
    with pytest.raises(InputError, match="threads given with settings="):  # never silently dropped
        edgeopt.benchmark(tiny_cnn, settings=settings, threads=4)
    result = edgeopt.benchmark(tiny_cnn, settings=settings)
    assert result.settings.threads == 1 and result.settings.iterations == 100 and result.fps_budget is None
    assert result.valid and len(result.samples_ms or []) == 0
