"""A tiny random-weight Llama exported to an int4 onnxruntime-genai folder, once per test session (~20 s)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_ortgenai(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("onnxruntime_genai", reason="pip install onnxruntime-genai to run the LLM bench tests")
    pytest.importorskip("transformers", reason="transformers builds the tiny Llama (pip install transformers)")
    pytest.importorskip("tokenizers", reason="tokenizers trains the tiny tokenizer (pip install tokenizers)")
    os.environ["HF_HUB_OFFLINE"] = "1"
    from tests.llm_models import cached_ortgenai

    return cached_ortgenai(tmp_path_factory.mktemp("tiny-llm"))
