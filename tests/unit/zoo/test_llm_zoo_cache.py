"""The trained zoo LLM's cache key: what the weights depend on changes it, nothing else does; the corpus is fixed."""

from __future__ import annotations

import dataclasses

import pytest

from edgeopt.zoo.llm_corpus import corpus_digest, corpus_texts, split_texts
from edgeopt.zoo.llm_train import TrainSettings, cache_key, cache_root
from edgeopt.zoo.tiny_llama import TRAINED


def test_the_key_follows_config_steps_seed_and_text_only():
    texts = corpus_texts()
    base = cache_key(TRAINED, TrainSettings(), texts)
    assert base == cache_key(TRAINED, TrainSettings(), list(texts))
    assert base != cache_key(TRAINED, TrainSettings(steps=401), texts)
    assert base != cache_key(dataclasses.replace(TRAINED, seed=1), TrainSettings(), texts)
    assert base != cache_key(TRAINED, TrainSettings(), [*texts[:-1], texts[-1] + " "])


def test_the_corpus_is_stdlib_text_with_a_held_out_tail():
    texts = corpus_texts()
    train, held = split_texts(texts)
    assert len(texts) >= 20 and sum(map(len, texts)) > 200_000
    assert all(t == a + b for t, a, b in zip(texts, train, held, strict=True)) and all(held)
    assert corpus_digest(texts) == corpus_digest(corpus_texts())


def test_the_cache_root_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEOPT_ZOO_CACHE", str(tmp_path / "z"))
    assert cache_root() == tmp_path / "z"
    monkeypatch.delenv("EDGEOPT_ZOO_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_root() == tmp_path / "x" / "edgeopt" / "zoo"


@pytest.mark.slow
def test_a_short_training_run_records_its_facts_and_is_cached(monkeypatch, tmp_path):
    pytest.importorskip("torch", reason="training needs torch (pip install 'edgeopt[llm,torch]')")
    pytest.importorskip("transformers", reason="needs transformers (pip install 'edgeopt[llm]')")
    from edgeopt.zoo.llm_train import build_trained

    monkeypatch.setenv("EDGEOPT_ZOO_CACHE", str(tmp_path / "cache"))
    lines: list[str] = []
    first = build_trained(tmp_path / "a", TrainSettings(steps=20), progress=lines.append)
    assert first["trained"] and first["tokens_seen"] == 20 * 8 * 128 and first["final_loss"] < 7.7  # ln(2048)=7.6
    assert len(lines) == 21 and lines[-1].startswith("step 20/20")
    second = build_trained(tmp_path / "b", TrainSettings(steps=20), progress=lines.append)
    assert second["cache"] == first["cache"] and len(lines) == 21  # no training the second time
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()
