"""Whether a spec qualifies an LLM (a generative model folder) or a one-pass model, and the gates each kind takes.

An LLM spec's ``model`` is a Hugging Face decoder folder (``hf_llm``: qualified after an LLM ``recipe``), an already
exported onnxruntime-genai or OpenVINO GenAI folder, or an LLM zoo model (``tiny-llama``). Its gates are
``ttft_ms``, ``tpot_ms``, ``decode_tokens_per_s``, ``kv_cache_mb``, ``energy_per_token``, ``memory`` and
``retention``; a one-pass gate on it (latency, fps, ...) or an LLM gate on an ONNX model is a spec error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import EdgeoptError
from ..registry import KindDescriptor, format_kind, get_format, get_kind
from ..registry.kind_spec import GENERATIVE, TENSOR
from ..registry.lookup import detect_format, model_kind
from ..zoo.registry import is_llm
from .gate_spec import GATE_KINDS
from .spec import QualifySpec


def folder_format(path: Path) -> str | None:
    """The format of a generative model folder (``hf_llm``, ``onnxruntime_genai``, ...: every registered format of
    the generative kind), else None."""
    if not path.is_dir():
        return None
    try:
        fmt = str(detect_format(path))
    except EdgeoptError:
        return None
    return fmt if format_kind(fmt).name == GENERATIVE else None


def is_llm_model(spec: QualifySpec, resolve: Callable[[str], Path]) -> bool:
    """The spec's model is an LLM folder or an LLM zoo model (``resolve``: a spec path -> a file system path)."""
    m = spec.model
    if m.zoo is not None:
        return is_llm(m.zoo)
    return m.path is not None and folder_format(resolve(m.path)) is not None


def generic_spec_kind(spec: QualifySpec, resolve: Callable[[str], Path]) -> KindDescriptor | None:
    """The kind of the spec's model when the generic engine qualifies it (a plug-in kind), else None."""
    if spec.model.path is None:
        return None
    kind = get_kind(model_kind(resolve(spec.model.path)))
    return kind if kind.engine == "generic" else None


def kind_problem(spec: QualifySpec, resolve: Callable[[str], Path]) -> tuple[tuple[str, ...], str] | None:
    """``(key, message)`` of a gate, ``llm:``, ``workload:`` or ``optimized`` that does not fit the kind of model,
    or None (the loader raises it as a spec error at that key)."""
    generic = generic_spec_kind(spec, resolve)
    if generic is not None:
        from .kind_gates import generic_problem

        return generic_problem(spec, generic)
    if spec.workload is not None:
        return ("workload",), ("'workload' sets the workload of a plug-in kind's model, and the model is not one: "
                               "drop it (docs/qualify.md)")
    llm = is_llm_model(spec, resolve)
    kind = get_kind(GENERATIVE if llm else TENSOR)
    allowed = tuple(g for g in kind.gates if g in GATE_KINDS)
    for gate in spec.gates.active():
        if gate not in allowed:
            return ("gates", gate), (f"gate '{gate}' does not apply: the model is {kind.model_word}; gates here: "
                                     f"{', '.join(allowed)} (docs/qualify.md)")
    if not llm and spec.llm is not None:
        return ("llm",), ("'llm' sets the generative workload of an LLM folder, and the model is not one: drop it, "
                          "or point model.path at an LLM folder")
    if llm and spec.optimized and not _deployable(folder_format(resolve(spec.optimized))):
        return ("optimized",), "an LLM spec's 'optimized' is an exported onnxruntime-genai or OpenVINO GenAI folder"
    return None


def _deployable(fmt: str | None) -> bool:
    return fmt is not None and get_format(fmt).deployable
