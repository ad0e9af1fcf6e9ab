"""Calibration data: .npz, .npy, image folders with preprocessing, random inputs with a loud warning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgeopt.calib import RANDOM_WARNING, CalibrationError, DataSource, ImagePreprocessing, model_inputs
from edgeopt.errors import ShapeError
from tests.unit.passes.builders import Recorder, mlp_model, paddle_style_model


def test_npz_rows_become_samples_and_labels_are_kept(tmp_path: Path) -> None:
    model = mlp_model(tmp_path / "mlp.onnx")
    data = tmp_path / "d.npz"
    np.savez(data, x=np.arange(5 * 64, dtype=np.float64).reshape(5, 64), labels=np.arange(5))
    src = DataSource(data, purpose="evaluation")
    samples = src.samples(model)
    assert len(samples) == 5 and samples[0]["x"].shape == (1, 64) and samples[0]["x"].dtype == np.float32
    np.testing.assert_array_equal(src.labels, np.arange(5))
    assert len(src.samples(model, limit=2)) == 2


def test_npz_with_sample_axis_and_wrong_keys_or_shapes(tmp_path: Path) -> None:
    model = paddle_style_model(tmp_path / "p.onnx")
    ok = tmp_path / "ok.npz"
    np.savez(ok, x=np.zeros((3, 1, 3, 16, 16), np.float32))
    assert len(DataSource(ok).samples(model)) == 3
    wrong_key = tmp_path / "k.npz"
    np.savez(wrong_key, input=np.zeros((3, 1, 3, 16, 16), np.float32))
    with pytest.raises(CalibrationError, match="no array for input.* x; it has input"):
        DataSource(wrong_key).samples(model)
    wrong_shape = tmp_path / "s.npz"
    np.savez(wrong_shape, x=np.zeros((3, 1, 3, 8, 8), np.float32))
    with pytest.raises(ShapeError, match=r"takes \[.*16, 16\]"):
        DataSource(wrong_shape).samples(model)


def test_npy_is_for_single_input_models(tmp_path: Path) -> None:
    model = mlp_model(tmp_path / "mlp.onnx")
    data = tmp_path / "d.npy"
    np.save(data, np.ones((4, 64), np.float32))
    assert len(DataSource(data).samples(model)) == 4


def test_missing_or_unknown_data_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="not found"):
        DataSource(tmp_path / "missing.npz")
    (tmp_path / "d.csv").write_text("1,2")
    with pytest.raises(CalibrationError, match="unknown kind '.csv'"):
        DataSource(tmp_path / "d.csv")


def test_random_inputs_warn_loudly_once(tmp_path: Path) -> None:
    model = mlp_model(tmp_path / "mlp.onnx")
    rec = Recorder()
    src = DataSource(None, reporter=rec)
    samples = src.samples(model, limit=4)
    src.samples(model, limit=4)
    assert src.is_random and len(samples) == 4 and samples[0]["x"].shape == (1, 64)
    assert rec.warnings == [RANDOM_WARNING] and "accuracy will be poor" in RANDOM_WARNING


def test_random_inputs_need_shapes_for_dynamic_dims(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "T"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "T"])])
    path = tmp_path / "dyn.onnx"
    import onnx

    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(ShapeError, match="--input-shape x=NxN"):
        DataSource(None).samples(path)
    assert DataSource(None, input_shapes={"x": [1, 7]}).samples(path, 1)[0]["x"].shape == (1, 7)


def test_image_folder_with_preprocessing(tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image", reason="Pillow not installed (pip install 'edgeopt[images]')")
    folder = tmp_path / "imgs"
    folder.mkdir()
    red = np.zeros((40, 60, 3), np.uint8)
    red[..., 0] = 255
    for i in range(3):
        pil.fromarray(red).save(folder / f"{i}.png")
    model = paddle_style_model(tmp_path / "p.onnx")  # x: [N, 3, 16, 16]
    src = DataSource(folder, preprocessing=ImagePreprocessing(resize_shorter_px=20, mean=(0.5,), std=(0.5,)))
    samples = src.samples(model)
    assert len(samples) == 3 and samples[0]["x"].shape == (1, 3, 16, 16)
    np.testing.assert_allclose(samples[0]["x"][0, 0], 1.0, atol=1e-5)  # red: (1 - 0.5) / 0.5
    np.testing.assert_allclose(samples[0]["x"][0, 2], -1.0, atol=1e-5)
    bgr = DataSource(folder, preprocessing=ImagePreprocessing(color="bgr")).samples(model)
    np.testing.assert_allclose(bgr[0]["x"][0, 2], 1.0, atol=1e-5)  # red ends up last
    specs = model_inputs(model)
    assert specs[0].name == "x"


def test_image_folder_errors(tmp_path: Path) -> None:
    pytest.importorskip("PIL.Image", reason="Pillow not installed (pip install 'edgeopt[images]')")
    (tmp_path / "empty").mkdir()
    model = paddle_style_model(tmp_path / "p.onnx")
    with pytest.raises(CalibrationError, match="no image files"):
        DataSource(tmp_path / "empty").samples(model)
    with pytest.raises(CalibrationError, match="not an image batch"):
        DataSource(tmp_path / "empty").samples(mlp_model(tmp_path / "mlp.onnx"))
    with pytest.raises(ValueError, match="1 or 3 values"):
        ImagePreprocessing(mean=(0.1, 0.2))
