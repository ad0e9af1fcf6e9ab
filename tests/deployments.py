"""Deployment folders for tests: a model (ONNX, or an OpenVINO IR converted with openvino) and a deployment.json
recording this machine's runtime version and CPU flags, as a sweep writes them (edgeopt.deploy)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from edgeopt.deploy import DeployedFile, Deployment, DeploymentMeasured, decision_cpu_flags, save_deployment
from edgeopt.fsutil import sha256_file
from edgeopt_agent.environment import cpu_flags


def runtime_version(runtime: str) -> str:
    """The version the agent reports for ``runtime`` here (what a sweep records)."""
    if runtime == "openvino":
        import openvino as ov

        return str(ov.get_version()).split("-", 1)[0]
    import onnxruntime

    return str(onnxruntime.__version__)


def to_ir(onnx_model: Path, out_dir: Path) -> Path:
    """``onnx_model`` converted to an OpenVINO IR (``model.xml`` + ``model.bin``) in ``out_dir``."""
    ov = pytest.importorskip("openvino")
    out_dir.mkdir(parents=True, exist_ok=True)
    xml = out_dir / "model.xml"
    ov.save_model(ov.convert_model(str(onnx_model)), str(xml), compress_to_fp16=False)
    return xml


def make_deployment(folder: Path, model: Path, *, runtime: str, **settings: Any) -> Path:
    """A deployment folder around ``model`` (copied in, with its IR .bin): ``settings`` are Deployment fields
    (runtime_options, threads, streams, batch, static_shapes, runtime_version, cpu_flags)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [model] + ([model.with_suffix(".bin")] if model.suffix == ".xml" else [])
    for f in files:
        shutil.copy2(f, folder / f.name)
    deployed = tuple(DeployedFile(path=f.name, sha256=sha256_file(folder / f.name),
                                  size_bytes=(folder / f.name).stat().st_size,
                                  role="model" if f == model else "companion") for f in files)
    measured = DeploymentMeasured(target="local", metric="agreement", min_retention=0.99, retention=1.0,
                                  latency_ms=1.0, size_bytes=sum(f.size_bytes for f in deployed))
    fields: dict[str, Any] = {"runtime_version": runtime_version(runtime),
                              "cpu_flags": tuple(decision_cpu_flags(cpu_flags())), **settings}
    dep = Deployment(name=f"test/{runtime}", recipe="fp32", model=model.name,
                     format="openvino_ir" if model.suffix == ".xml" else "onnx", files=deployed, runtime=runtime,
                     measured=measured, **fields)
    save_deployment(folder, dep)
    return folder


def edit_deployment(folder: Path, **changes: Any) -> None:
    """Re-save ``folder``'s deployment.json with ``changes`` (e.g. another runtime_version or cpu_flags)."""
    from edgeopt.deploy import load_deployment

    dep, _ = load_deployment(folder)
    save_deployment(folder, dep.model_copy(update=changes))
