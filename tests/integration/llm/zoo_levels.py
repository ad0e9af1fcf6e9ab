"""The zoo tiny-llama's fp32 and int4 onnxruntime-genai levels where an LLM sweep looks for them, and the short
retention settings: shared by the retention and the LLM sweep tests (one module-scoped fixture per file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.llm.retention import RetentionSettings
from edgeopt.llm.sweep_levels import LlmLevel, all_levels, build_level
from edgeopt.registry.lookup import model_digest

FAST = RetentionSettings(window=32, windows=4, prompts=2, prompt_tokens=8, gen_tokens=8)


def zoo_level(name: str, runtime: str = "onnxruntime_genai") -> LlmLevel:
    """The level ``name`` of ``runtime`` (the registry's levels as data)."""
    return next(lv for lv in all_levels() if (lv.name, lv.runtime) == (name, runtime))


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> dict[str, Path]:
    """tiny-llama and its fp32 and int4 onnxruntime-genai levels (the suite's cached builds, copied: issue 30
    shares the LLM fixtures across files), where the sweep looks for them."""
    from tests.llm_models import tiny_llama_levels

    root = tmp_path_factory.mktemp("llm-ret")
    sweep = root / "sweep"
    src = tiny_llama_levels(sweep, ("onnxruntime_genai", "fp32"), ("onnxruntime_genai", "int4-b32-rtn"))["src"]
    digest = model_digest(src, "hf_llm")[0]  # read only here: every sweep writes under root
    fp32, reused = build_level(zoo_level("fp32"), src, digest, sweep / "levels")
    int4, reused_int4 = build_level(zoo_level("int4-b32-rtn"), src, digest, sweep / "levels")
    assert reused and reused_int4, "the cached levels have another stamp"
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts

    text = root / "heldout.txt"
    text.write_text("\n".join(split_texts(corpus_texts())[1])[:12000], encoding="utf-8")
    return {"src": src, "fp32": fp32, "int4": int4, "text": text, "sweep": sweep}

