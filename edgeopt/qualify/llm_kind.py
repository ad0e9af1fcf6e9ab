"""The generative kind's qualify checks: the format of an LLM folder, and what of a spec does not fit an LLM.

An LLM spec's ``model`` is a Hugging Face decoder folder (``hf_llm``: qualified after an LLM ``recipe``), an already
exported onnxruntime-genai or OpenVINO GenAI folder, a deployment an LLM sweep wrote (its ``recommended/``), or an
LLM zoo model (``tiny-llama``). Its gates are ``ttft_ms``, ``tpot_ms``, ``decode_tokens_per_s``, ``kv_cache_mb``,
``energy_per_token``, ``memory`` and ``retention``; a one-pass gate on it (latency, fps, ...) is a spec error
(:mod:`.kind_check` tells the kind).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..deploy.io import DEPLOYMENT_FILE
from ..registry import KindDescriptor, get_format
from ..registry.kind_spec import GENERATIVE
from ..registry.lookup import format_of_kind
from .kind_check import Problem, gate_problem
from .spec import QualifySpec


def generative_problem(spec: QualifySpec, kind: KindDescriptor, resolve: Callable[[str], Path]) -> Problem | None:
    """The generative kind's ``qualify_check``: its gates, and an ``optimized`` that is an exported folder."""
    problem = gate_problem(spec, kind)
    optimized = resolve(spec.optimized) if spec.optimized else None
    if optimized is not None and optimized.name == DEPLOYMENT_FILE:  # a deployment's record: its folder
        optimized = optimized.parent
    if problem is None and optimized is not None and not _deployable(format_of_kind(optimized, GENERATIVE)):
        return ("optimized",), "an LLM spec's 'optimized' is an exported onnxruntime-genai or OpenVINO GenAI folder"
    return problem


def _deployable(fmt: str | None) -> bool:
    return fmt is not None and get_format(fmt).deployable
