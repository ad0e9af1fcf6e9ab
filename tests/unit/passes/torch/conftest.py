"""Fixtures of the PyTorch pass tests. Test modules skip themselves when torch is missing (importorskip)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

TORCH_REASON = "the PyTorch passes need edgeopt[torch] (torch, onnxscript, torch-pruning): pip install 'edgeopt[torch]'"


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread() -> Iterator[None]:
    """Tiny models train ~15x faster on one thread than on two when the 2-core machine is busy; restored after."""
    try:
        import torch
    except ImportError:  # the test modules skip themselves
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def cnn_export(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``export`` of the SmallCNN factory (default options), made once: several tests compare against it."""
    from edgeopt.passes.export_torch import ExportConfig, ExportPass
    from edgeopt.passes.torch_io import torch_artifact

    from ..builders import Recorder, context
    from .models import SPEC

    out = tmp_path_factory.mktemp("cnn-export")
    ctx = context(out, input_shapes={"x": [1, 1, 8, 8]}, reporter=Recorder())
    return ExportPass(ExportConfig()).apply(torch_artifact(f"{SPEC}:small_cnn"), ctx, name="1-export")


@pytest.fixture(scope="session")
def digits_npz(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The first 1500 scikit-learn digits as calibration data: (x only, x with labels)."""
    from .models import digits_data

    x, y = digits_data()
    root = tmp_path_factory.mktemp("digits")
    np.savez(root / "digits.npz", x=x[:1500])
    np.savez(root / "digits-labels.npz", x=x[:1500], labels=y[:1500])
    return root / "digits.npz", root / "digits-labels.npz"
