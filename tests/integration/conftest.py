"""Expensive results several integration files assert on, computed once per test session (per xdist worker).

``make test`` runs the suite on two pytest-xdist workers: every test that uses a session-scoped fixture runs on the
worker that computed it (``tests/xdist_groups.py``), so the result is computed once. Readers only read: no test may
change what these return.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration import chromium, shared_runs
from tests.llm_models import tiny_llama_fp32  # noqa: F401 - the LLM sweep tests' built model (llm/, ssh/)


@pytest.fixture(scope="session")
def digits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The digits MLP (trained with scikit-learn, seconds) and its labelled eval data: (model.onnx, eval.npz)."""
    pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")
    from tests.digits_model import build_digits

    return build_digits(tmp_path_factory.mktemp("digits"))


@pytest.fixture(scope="session")
def digits_int8_search(digits: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> shared_runs.Int8Search:
    """The digits INT8-search sweep on onnxruntime (see :func:`shared_runs.digits_int8_search`)."""
    model, data = digits
    return shared_runs.digits_int8_search(model, data, tmp_path_factory.mktemp("digits-int8-search"))


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chromium.DevTools]:
    """One headless Chromium per worker for the report tests (tests/integration/chromium.py), a tab per page: a
    Chromium start costs ~1-2 CPU-s, and those files started one or two per test. Tests close the tabs they open."""
    if chromium.unavailable_reason() is not None:
        pytest.skip(chromium.unavailable_reason() or "")
    with chromium.DevTools(tmp_path_factory.mktemp("chromium") / "profile") as shared:
        yield shared
