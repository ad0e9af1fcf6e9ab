"""``export``: dynamo export of a CNN and an attention block matching onnxruntime, and mismatches failing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from .conftest import TORCH_REASON

torch = pytest.importorskip("torch", reason=TORCH_REASON)
pytest.importorskip("onnxscript", reason=TORCH_REASON)

from edgeopt.passes.base import Artifact, ArtifactFormat, PassError  # noqa: E402
from edgeopt.passes.export_torch import ExportConfig, ExportPass, convert_opset, verify_onnx  # noqa: E402
from edgeopt.passes.torch_io import load_torch_model, torch_artifact  # noqa: E402

from ..builders import Recorder, context, run_model  # noqa: E402
from .models import SPEC  # noqa: E402


def _export(out_dir: Path, spec: str, shapes: dict[str, list[int]], **cfg: object) -> Artifact:
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx = context(out_dir, input_shapes=shapes, reporter=Recorder())
    return ExportPass(ExportConfig.model_validate(cfg)).apply(torch_artifact(spec), ctx, name="1-export")


def test_cnn_exports_to_a_single_file_matching_torch_with_dynamic_batch(cnn_export: Artifact) -> None:
    art = cnn_export
    assert art.format is ArtifactFormat.ONNX and art.pass_name == "export"
    report = art.report
    assert report["exporter"] == "dynamo" and report["opset"] == 18 and report["dynamic_batch"] is True
    assert report["samples_checked"] == 4 and report["max_abs_error"] < 1e-5
    assert report["value_info_cleared"] > 0
    model = onnx.load(art.path)
    assert not model.graph.value_info and [i.name for i in model.graph.input] == ["x"]
    assert not list(Path(art.path).parent.glob("*.data"))  # small model: weights inside the one file
    x = np.random.default_rng(0).standard_normal((3, 1, 8, 8)).astype(np.float32)
    (got,) = run_model(Path(art.path), {"x": x})
    with torch.no_grad():
        want = load_torch_model(f"{SPEC}:small_cnn", {"x": [1, 1, 8, 8]}).module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_attention_block_exports_and_matches(tmp_path: Path) -> None:
    art = _export(tmp_path, f"{SPEC}:tiny_attention", {"tokens": [1, 6, 16]}, verify_samples=2, dynamic_batch=False)
    assert art.report["max_abs_error"] < 1e-5 and art.report["dynamic_batch"] is False
    model = onnx.load(art.path)
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1
    assert {"Softmax", "LayerNormalization"} & {n.op_type for n in model.graph.node}


def test_a_mismatch_fails_the_pass_with_the_max_error(tmp_path: Path) -> None:
    # CallCounter's output depends on how often it was called: torch.export bakes in one count, so the ONNX
    # file is silently wrong for every later call. The check must catch that.
    with pytest.raises(PassError, match=r"does not match torch: output '.*' differs by max abs [0-9.e+-]+ > tolerance"):
        _export(tmp_path, f"{SPEC}:call_counter", {"x": [1, 4]})


def test_verify_onnx_catches_a_perturbed_weight(cnn_export: Artifact, tmp_path: Path) -> None:
    art = cnn_export
    model = onnx.load(art.path)
    init = max(model.graph.initializer, key=lambda t: int(np.prod(t.dims)))
    arr = onnx.numpy_helper.to_array(init).copy()
    arr.flat[0] += 0.5
    init.CopyFrom(onnx.numpy_helper.from_array(arr, init.name))
    bad = tmp_path / "perturbed.onnx"
    onnx.save(model, str(bad))
    loaded = load_torch_model(f"{SPEC}:small_cnn", {"x": [1, 1, 8, 8]})
    feeds = [loaded.example_inputs(seed=s) for s in range(2)]
    assert verify_onnx(art.path, loaded.module, feeds, 1e-4, 1e-4, "cnn") < 1e-5
    with pytest.raises(PassError, match="does not match torch"):
        verify_onnx(bad, loaded.module, feeds, 1e-4, 1e-4, "cnn")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_torchscript_goes_through_the_legacy_exporter_with_a_warning(tmp_path: Path) -> None:
    loaded = load_torch_model(f"{SPEC}:small_cnn", {"x": [1, 1, 8, 8]})
    ts = tmp_path / "cnn.ts"
    torch.jit.trace(loaded.module, loaded.example_inputs()).save(str(ts))
    recorder = Recorder()
    ctx = context(tmp_path, input_shapes={"x": [1, 1, 8, 8]}, reporter=recorder)
    art = ExportPass(ExportConfig(opset=17, verify_samples=2)).apply(torch_artifact(ts), ctx, name="1-export")
    assert art.report["exporter"] == "torchscript-legacy" and art.report["opset"] == 17
    assert art.report["max_abs_error"] < 1e-5
    assert any("legacy exporter" in w for w in art.warnings) and recorder.warnings == art.warnings
    with pytest.raises(PassError, match="legacy_for_torchscript"):
        ExportPass(ExportConfig.model_validate({"advanced": {"legacy_for_torchscript": False}})).apply(
            torch_artifact(ts), ctx, name="1-export")


def test_external_data_on_request_lands_beside_the_model(tmp_path: Path) -> None:
    art = _export(tmp_path, f"{SPEC}:mlp", {"input": [1, 12]}, verify_samples=1,
                  advanced={"external_data": True})
    data = Path(art.path).parent / f"{Path(art.path).name}.data"
    assert data.is_file() and art.report["external_data"] is True and art.report["max_abs_error"] < 1e-5
    assert art.size_bytes == Path(art.path).stat().st_size + data.stat().st_size
    assert not onnx.load(art.path, load_external_data=False).graph.value_info


def test_an_opset_below_the_exporters_is_converted_or_refused_clearly(tmp_path: Path, cnn_export: Artifact) -> None:
    art = _export(tmp_path / "mlp", f"{SPEC}:mlp", {"input": [1, 12]}, opset=17, verify_samples=2)
    assert art.report["opset"] == 17 and art.report["max_abs_error"] < 1e-5
    # The CNN's global pooling is an opset-18 ReduceMean, which the converter cannot take back to 17: the
    # converted model would not even pass the checker (this is the step the pass runs after exporting).
    with pytest.raises(PassError, match="converting opset 18 to 17 failed .*; use opset >= 18"):
        convert_opset(onnx.load(cnn_export.path), 17, "small_cnn")
