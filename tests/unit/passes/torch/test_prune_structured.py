"""``prune_structured``: channels really go (fewer params and MACs in the exported ONNX), the model still runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from .conftest import TORCH_REASON

torch = pytest.importorskip("torch", reason=TORCH_REASON)
pytest.importorskip("torch_pruning", reason=TORCH_REASON)
pytest.importorskip("onnxscript", reason=TORCH_REASON)

from edgeopt.analysis import inspect_model  # noqa: E402
from edgeopt.calib import DataSource  # noqa: E402
from edgeopt.passes.base import Artifact, ArtifactFormat, PassError  # noqa: E402
from edgeopt.passes.export_torch import ExportConfig, ExportPass  # noqa: E402
from edgeopt.passes.prune_structured import PruneStructuredConfig, PruneStructuredPass  # noqa: E402
from edgeopt.passes.torch_io import load_torch_model, save_exported_program, torch_artifact  # noqa: E402
from edgeopt.passes.torch_prune import output_layers  # noqa: E402

from ..builders import Recorder, context, run_model  # noqa: E402
from .models import SPEC  # noqa: E402

CNN_SHAPE = {"x": [1, 1, 8, 8]}


def _prune(
    out_dir: Path, spec: str, shapes: dict[str, list[int]], calibration: DataSource | None = None, **cfg: object
) -> tuple[Artifact, Recorder]:
    out_dir.mkdir(parents=True, exist_ok=True)
    recorder = Recorder()
    ctx = context(out_dir, name="pruned.pt2", input_shapes=shapes, reporter=recorder, calibration=calibration)
    art = PruneStructuredPass(PruneStructuredConfig.model_validate(cfg)).apply(
        torch_artifact(spec), ctx, name="1-prune_structured")
    return art, recorder


def test_pruning_shrinks_the_exported_graph_and_keeps_the_classes(tmp_path: Path, cnn_export: Artifact) -> None:
    art, _ = _prune(tmp_path / "prune", f"{SPEC}:small_cnn", CNN_SHAPE, pruning_ratio=0.5)
    assert art.format is ArtifactFormat.PYTORCH and Path(art.path).suffix == ".pt2"
    r = art.report
    assert r["output_layers"] == ["classifier"] and "classifier" not in r["layer_widths"]
    assert r["layer_widths"]["features.0"] == [16, 8] and r["layers_pruned"] == 3
    # Halving every width cuts a conv chain's params and MACs by ~3/4.
    assert 0.6 < r["params_reduction"] < 0.8 and 0.6 < r["mac_reduction"] < 0.8
    assert r["params_after"] < r["params_before"] and r["macs_after"] < r["macs_before"] and r["dynamic_batch"]

    pruned = ExportPass(ExportConfig(verify_samples=2)).apply(
        art, context(tmp_path, name="pruned.onnx"), name="2-export")
    before, after = inspect_model(Path(cnn_export.path)), inspect_model(Path(pruned.path))
    assert after.params < 0.4 * before.params and after.macs < 0.4 * before.macs
    x = np.random.default_rng(0).standard_normal((3, 1, 8, 8)).astype(np.float32)
    (logits,) = run_model(Path(pruned.path), {"x": x})
    assert logits.shape == (3, 10) and np.isfinite(logits).all()


def test_attention_block_prunes_with_whole_heads(tmp_path: Path) -> None:
    art, _ = _prune(tmp_path, f"{SPEC}:tiny_attention", {"tokens": [1, 6, 16]}, pruning_ratio=0.5)
    widths = art.report["layer_widths"]
    assert widths["embed"] == [32, 16] and art.report["output_layers"] == ["head"]
    loaded = load_torch_model(art.path)
    out = loaded.module(torch.randn(2, 6, 16))
    assert tuple(out.shape) == (2, 5)
    assert widths["attn.out_proj"] == [32, 16] and widths["mlp.0"] == [64, 32]  # 16 = 4 heads x 4 dims


def test_ignore_layers_and_output_layer_detection(tmp_path: Path) -> None:
    loaded = load_torch_model(f"{SPEC}:small_cnn", CNN_SHAPE)
    assert output_layers(loaded.module, loaded.example_inputs()) == ["classifier"]
    art, recorder = _prune(tmp_path, f"{SPEC}:small_cnn", CNN_SHAPE, pruning_ratio=0.25,
                           ignore_layers=["features.0", "nothing.matches*"], round_to_channels=4)
    widths = art.report["layer_widths"]
    assert "features.0" not in widths and "features.0" in art.report["ignored_layers"]
    assert widths["features.3"] == [32, 24] and all(after % 4 == 0 for _, after in widths.values())
    assert any("'nothing.matches*' matches no module" in w for w in recorder.warnings)


def test_fine_tune_uses_labels_when_given_else_the_unpruned_model(
    tmp_path: Path, digits_npz: tuple[Path, Path]
) -> None:
    unlabeled, labeled = digits_npz
    art, recorder = _prune(tmp_path / "labels", f"{SPEC}:digits_teacher", CNN_SHAPE, pruning_ratio=0.5, epochs=2,
                           max_samples=256, calibration=DataSource(labeled))
    ft = art.report["fine_tune"]
    assert ft["mode"] == "labels" and ft["samples"] == 256 and ft["epochs"] == 2 and ft["steps"] == 16
    assert ft["last_epoch_loss"] < ft["first_epoch_loss"]
    assert [e[1:] for e in recorder.progress_events] == [(1, 2), (2, 2)]

    art, _ = _prune(tmp_path / "distill", f"{SPEC}:digits_teacher", CNN_SHAPE, pruning_ratio=0.5, epochs=1,
                    max_samples=128, calibration=DataSource(unlabeled))
    assert art.report["fine_tune"]["mode"] == "distill-kl"


def test_graphs_without_modules_are_refused(tmp_path: Path) -> None:
    loaded = load_torch_model(f"{SPEC}:small_cnn", CNN_SHAPE)
    pt2, _ = save_exported_program(loaded.module, loaded, tmp_path / "cnn.pt2", dynamic_batch=False)
    ctx = context(tmp_path, name="out.pt2")
    with pytest.raises(PassError, match="needs the model's nn.Module.*give 'package.module:factory'"):
        PruneStructuredPass(PruneStructuredConfig()).apply(torch_artifact(pt2), ctx, name="1-prune_structured")
    with pytest.raises(PassError, match="removed no channel"):
        PruneStructuredPass(PruneStructuredConfig(ignore_layers=["features.*"])).apply(
            torch_artifact(f"{SPEC}:small_cnn"), context(tmp_path, name="o.pt2", input_shapes=CNN_SHAPE),
            name="1-prune_structured")


def test_fine_tune_without_data_is_an_input_error(tmp_path: Path) -> None:
    from edgeopt.errors import InputError

    with pytest.raises(InputError, match="needs training data: pass --calib"):
        _prune(tmp_path, f"{SPEC}:small_cnn", CNN_SHAPE, epochs=1)
