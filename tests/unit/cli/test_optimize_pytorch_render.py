"""A PyTorch optimize draws its table (issue 16, item 3): the fidelity rows start at the first ONNX export, not at
the input, which used to raise ``KeyError: 'input'`` after all the work was done; the table now says which model
the rows compare with and shows the passes' own fidelity to the original (a student's holdout cosine)."""

from __future__ import annotations

import io

from rich.console import Console

from edgeopt.cli.optimize_render import render_optimize
from edgeopt.optimize import OptimizeResult
from edgeopt.optimize.fidelity import FidelityRow
from edgeopt.passes.base import Artifact


def _art(name: str, fmt: str, pass_name: str | None, report: dict | None = None) -> Artifact:
    return Artifact(name=name, path="mynet:build" if fmt == "pytorch" and not pass_name else f"/out/{name}",
                    format=fmt, precision="fp32", sha256="ab" * 32, size_bytes=1000, pass_name=pass_name,
                    report=report or {})


def test_pytorch_optimize_renders_and_shows_fidelity_to_the_original():
    distilled = {"fidelity_on": "holdout", "fidelity": {"samples": 20, "top1_agreement": 0.95, "cosine_mean": 0.959,
                                                        "mse": 0.1, "max_abs_error": 1.0}}
    arts = [_art("1-distill", "pytorch", "distill", distilled), _art("2-export", "onnx", "export"),
            _art("3-cleanup", "onnx", "cleanup")]
    rows = [FidelityRow(artifact=a.name, path=a.path, precision="fp32", size_bytes=1000, size_ratio=1.0, samples=16,
                        data="calibration", cosine_similarity=1.0, top1_agreement=1.0) for a in arts[1:]]
    result = OptimizeResult(edgeopt_version="0.1.0", started_at="2026-01-01T00:00:00+00:00", seconds=3.0,
                            model=_art("input", "pytorch", None), target="local", recipe="distill",
                            recipe_source="distill.yaml", formats=["onnx"], out_dir="/out",
                            manifest_path="/out/manifest.json", artifacts=arts, calibration=None, fidelity=rows,
                            warnings=[])
    buf = io.StringIO()
    render_optimize(result, Console(file=buf, width=140, color_system=None))  # raised KeyError: 'input'
    text = buf.getvalue()
    assert "fidelity on 16 calibration samples" in text
    assert "compare with 2-export, the first ONNX export" in text and "not with the original model mynet:build" in text
    assert "fidelity of 1-distill to the original (holdout, 20 samples): cosine 0.95900, top-1 agreement 95.0%" in text
