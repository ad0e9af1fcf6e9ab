"""Accuracy on the device over SSH: the agent's evaluate command on the loopback sshd, outputs fetched back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgeopt.evaluation import device_outputs
from edgeopt.runners import LocalRunner
from tests.integration.ssh.conftest import Device

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")


def test_eval_outputs_over_ssh_match_local(shared_device: Device, tmp_path: Path) -> None:
    from tests.digits_model import build_digits

    model, data = build_digits(tmp_path)
    remote, names, raw = device_outputs(model, data, runtime="onnxruntime", runner=shared_device.runner())
    local, _, _ = device_outputs(model, data, runtime="onnxruntime", runner=LocalRunner())
    assert names == ["logits"] and raw.timed_inferences == len(np.load(data)["labels"])
    np.testing.assert_allclose(remote[0], local[0], rtol=1e-5)
    assert not shared_device.job_dirs(), "the job directory (with the outputs file) is removed after the fetch"
