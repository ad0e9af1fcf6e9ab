"""End to end: ``edgeopt.optimize`` on a ``package.module:factory`` teacher with the shipped ``distill-half`` recipe."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from .conftest import TORCH_REASON

torch = pytest.importorskip("torch", reason=TORCH_REASON)
pytest.importorskip("torch_pruning", reason=TORCH_REASON)
pytest.importorskip("onnxscript", reason=TORCH_REASON)
pytest.importorskip("sklearn", reason="this test trains on scikit-learn's bundled digits: pip install scikit-learn")

from edgeopt import optimize  # noqa: E402
from edgeopt.analysis import inspect_model  # noqa: E402
from edgeopt.passes.base import ArtifactFormat  # noqa: E402

from ..builders import run_model  # noqa: E402
from .models import SPEC, digits_data  # noqa: E402


def test_distill_half_recipe_on_a_factory_teacher(tmp_path: Path) -> None:
    x, y = digits_data()
    calib, evaluation = tmp_path / "calib.npz", tmp_path / "eval.npz"
    np.savez(calib, x=x[:400])
    np.savez(evaluation, x=x[1500:], labels=y[1500:])
    result = optimize(
        f"{SPEC}:digits_teacher", target="local", recipe="distill-half", calib=calib, eval_data=evaluation,
        input_shapes={"x": [1, 1, 8, 8]}, out_dir=tmp_path / "out", bench=False,
    )
    assert [a.pass_name for a in result.artifacts] == ["distill", "export", "cleanup"]
    distilled, exported, final = result.artifacts
    assert distilled.format is ArtifactFormat.PYTORCH and final.format is ArtifactFormat.ONNX
    assert distilled.report["student_params"] < 0.3 * distilled.report["teacher_params"]
    assert distilled.report["fidelity"]["top1_agreement"] >= 0.85
    assert exported.report["max_abs_error"] < 1e-4 and exported.parent_sha256 == distilled.sha256
    manifest = json.loads(Path(result.manifest_path).read_text())
    assert [a["pass_name"] for a in manifest["artifacts"]] == ["distill", "export", "cleanup"]

    student = inspect_model(Path(final.path))
    assert student.params < 0.3 * 24170  # the teacher's parameter count
    (logits,) = run_model(Path(final.path), {"x": x[1500:]})
    with torch.no_grad():
        from .models import digits_teacher

        teacher = digits_teacher()(torch.from_numpy(x[1500:])).numpy()
    agreement = float((logits.argmax(1) == teacher.argmax(1)).mean())
    assert agreement >= 0.85, agreement
