from __future__ import annotations

import numpy as np
import pytest

from edgeopt.errors import InputError
from edgeopt.evaluation import parse_output, resolve_metric, retention

REF = np.array([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], dtype=np.float32)
LABELS = np.array([1, 0, 2, 1])


def test_top1_and_retention_vs_reference() -> None:
    out = REF.copy()
    out[2] = [0.9, 0.0, 0.1]  # one correct answer lost
    value, ret = retention(resolve_metric("top1"), REF, out, LABELS)
    assert value == pytest.approx(0.5)
    assert ret == pytest.approx(0.5 / 0.75)


def test_top5_agreement_cosine() -> None:
    assert resolve_metric("top5").score(REF, REF, LABELS) == 1.0
    flipped = REF[:, ::-1].copy()
    assert resolve_metric("agreement").score(REF, flipped, None) == pytest.approx(0.25)  # only row 0 keeps its class
    assert retention(resolve_metric("cosine"), REF, REF * 3, None)[1] == pytest.approx(1.0)


def test_error_metrics_retention() -> None:
    out = REF + 0.09
    value, ret = retention(resolve_metric("max_abs_err"), REF, out, None)
    assert value == pytest.approx(0.09, abs=1e-6)
    assert ret == pytest.approx(1 - 0.09 / 0.9, abs=1e-6)
    noisy = REF * 1.1  # noise power = 1% of the signal -> 20 dB -> retention 0.99
    snr, ret = retention(resolve_metric("snr_db"), REF, noisy, None)
    assert snr == pytest.approx(20.0, abs=1e-3)
    assert ret == pytest.approx(0.99, abs=1e-6)


def test_custom_metric_and_unknown() -> None:
    m = resolve_metric("numpy:vdot")  # any importable callable(ref, out, labels) works; here a 2-arg one fails
    assert m.name == "numpy:vdot"
    with pytest.raises(InputError, match="unknown metric"):
        resolve_metric("top7")
    with pytest.raises(InputError, match="needs labels"):
        retention(resolve_metric("top1"), REF, REF, None)


def test_output_selection_slice() -> None:
    det = np.arange(2 * 3 * 6, dtype=np.float32).reshape(2, 3, 6)
    sel = parse_output("boxes,slice=[...,4:]")
    assert sel.pick([np.zeros(1), det], ["x", "boxes"]).shape == (2, 3, 2)
    assert parse_output("1").pick([np.zeros(1), det], ["a", "b"]) is not None
    with pytest.raises(InputError, match="outputs: a, b"):
        parse_output("nope").pick([det, det], ["a", "b"])
