import numpy as np
import pytest

from edgeopt_agent.inputs import InputSpecError, generate, load_npz, resolve_shape
from edgeopt_agent.protocol import TensorInfo

IMG = TensorInfo(name="img", shape=["N", 3, 8, 8], dtype="float32")
TOK = TensorInfo(name="ids", shape=[1, "seq"], dtype="int64")


def test_dynamic_batch_takes_batch_and_data_is_seeded():
    a = generate([IMG], {}, batch=4, seed=7)["img"]
    b = generate([IMG], {}, batch=4, seed=7)["img"]
    c = generate([IMG], {}, batch=4, seed=8)["img"]
    assert a.shape == (4, 3, 8, 8) and a.dtype == np.float32
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_dynamic_inner_dim_needs_a_shape_and_says_how():
    with pytest.raises(InputSpecError, match=r"--shape ids=1x1"):
        generate([TOK], {}, batch=1, seed=0)
    ids = generate([TOK], {"ids": [1, 16]}, batch=1, seed=0)["ids"]
    assert ids.shape == (1, 16) and ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < 100


def test_shape_for_unknown_input_lists_real_inputs():
    with pytest.raises(InputSpecError, match="does not have; its inputs are: img"):
        generate([IMG], {"image": [1, 3, 8, 8]}, batch=1, seed=0)


def test_shape_conflicting_with_fixed_dim_or_rank_is_refused():
    with pytest.raises(InputSpecError, match="fixed dim 3 at axis 1"):
        resolve_shape(IMG, {"img": [1, 4, 8, 8]}, 1)
    with pytest.raises(InputSpecError, match="rank 2"):
        resolve_shape(IMG, {"img": [1, 3]}, 1)


def test_batch_on_fixed_batch_model_is_refused():
    fixed = TensorInfo(name="x", shape=[1, 3], dtype="float32")
    with pytest.raises(InputSpecError, match="fixed batch dim of 1"):
        resolve_shape(fixed, {}, 2)


def test_npz_inputs_checked_against_signature(tmp_path):
    good = tmp_path / "in.npz"
    np.savez(good, img=np.zeros((2, 3, 8, 8), np.float32))
    assert load_npz(str(good), [IMG])["img"].shape == (2, 3, 8, 8)
    bad = tmp_path / "bad.npz"
    np.savez(bad, img=np.zeros((2, 3, 8, 8), np.float64))
    with pytest.raises(InputSpecError, match="dtype float64 but the model expects float32"):
        load_npz(str(bad), [IMG])
    with pytest.raises(InputSpecError, match="lacks input"):
        load_npz(str(good), [IMG, TOK])
