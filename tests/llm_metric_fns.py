"""A custom LLM retention metric for the tests (``--metric tests.llm_metric_fns:greedy_token_agreement``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def greedy_token_agreement(reference: dict[str, np.ndarray], candidate: dict[str, np.ndarray], labels: Any) -> float:
    """Share of greedy-generated tokens equal to the reference's, position by position."""
    del labels
    return float((reference["greedy"] == candidate["greedy"]).mean())
