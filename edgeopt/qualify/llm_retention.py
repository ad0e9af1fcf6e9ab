"""The retention gate of an LLM spec: the hook LLM retention plugs into (not wired yet).

LLM retention (next-token top-1 agreement, top-k overlap, KL, perplexity against the FP32 reference on a held-out
text) is being written as ``llm_retention(...)`` on another branch (``llm-sweep``). Until it is wired here,
:func:`llm_retention` raises :class:`LlmRetentionUnavailable`; the engine turns that into a retention result with
no value and the reason, so a ``retention`` gate on an LLM spec FAILS saying so (a gate is never passed on a value
that was not measured). Wiring it: replace the body of :func:`llm_retention` with a call to the real function,
returning a :class:`~edgeopt.qualify.result.RetentionResult` (``metric``, ``reference_value``, ``candidate_value``,
``retention`` = candidate / reference, ``samples``, ``data``, ``evaluated_on``, paths, ``notes``).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .result import RetentionResult


class LlmRetentionUnavailable(InputError):
    """LLM retention is not available in this build (the gate then fails with this reason)."""


def llm_retention(reference: Path, candidate: Path, *, text: Path | None, seed: int = 0) -> RetentionResult:
    """Retention of the ``candidate`` LLM folder against the ``reference`` (Hugging Face) folder on ``text``.

    Raises:
        LlmRetentionUnavailable: always, until the LLM retention metrics are wired in (see the module docstring).
    """
    raise LlmRetentionUnavailable(
        "LLM retention is not available yet in this edgeopt (next-token agreement / KL / perplexity land with "
        "`edgeopt sweep LLM_DIR`); drop gates.retention from this LLM spec for now")


def retention_or_reason(reference: Path, candidate: Path, *, text: Path | None, seed: int) -> RetentionResult:
    """:func:`llm_retention`'s result, or a result without a value whose note says why (the gate fails on it)."""
    try:
        return llm_retention(reference, candidate, text=text, seed=seed)
    except InputError as exc:
        return RetentionResult(metric="llm next-token agreement", reference_value=None, candidate_value=None,
                               retention=None, samples=0, data=str(text) if text else "none",
                               evaluated_on="host", reference_path=str(reference), candidate_path=str(candidate),
                               notes=[str(exc)])
