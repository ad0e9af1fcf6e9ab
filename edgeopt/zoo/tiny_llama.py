"""The zoo's Llama-architecture decoder: a Hugging Face folder written without any hub access.

``tiny-llama`` has random weights (seconds to build: plumbing tests, the fast suite); ``tiny-llama-trained``
(:mod:`edgeopt.zoo.llm_train`) is the same kind of folder trained on standard-library text, so that quantization
changes a learned distribution. Both carry a byte-level BPE tokenizer trained here with ``tokenizers`` on
:mod:`edgeopt.zoo.llm_corpus`. Needs the ``llm`` extra (torch, transformers, tokenizers, safetensors).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .llm_corpus import corpus_texts, split_texts

EOS = "<|endoftext|>"


@dataclass(frozen=True)
class TinyLlamaConfig:
    """Shape of a zoo decoder (a Llama config's fields that matter here)."""

    vocab_size: int = 2048
    hidden_size: int = 128
    intermediate_size: int = 384
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 512
    seed: int = 0


RANDOM = TinyLlamaConfig()  # ~1.3 M parameters
# Sized for a few minutes on 2 CPU cores (~15 GFLOP a training step): ~2.4 M parameters.
TRAINED = TinyLlamaConfig(hidden_size=192, intermediate_size=512, num_hidden_layers=4, num_attention_heads=6,
                          num_key_value_heads=3)


def _require_llm_packages() -> None:
    missing = []
    for module in ("torch", "transformers", "tokenizers", "safetensors"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise InputError(f"the zoo LLM needs {', '.join(missing)}: pip install 'edgeopt[llm,torch]'")


def train_tokenizer(texts: list[str], vocab_size: int) -> Any:
    """A byte-level BPE tokenizer (GPT-2 style: every byte encodable, no unknown token) trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def save_tokenizer(tok: Any, out: Path, max_length: int) -> None:
    tok.save(str(out / "tokenizer.json"))
    config = {"tokenizer_class": "GPT2Tokenizer", "bos_token": EOS, "eos_token": EOS, "unk_token": EOS,
              "model_max_length": max_length, "add_bos_token": False, "clean_up_tokenization_spaces": False}
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def make_model(cfg: TinyLlamaConfig, eos_id: int) -> Any:
    """A ``LlamaForCausalLM`` with seeded random weights."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(cfg.seed)
    hf = LlamaConfig(vocab_size=cfg.vocab_size, hidden_size=cfg.hidden_size,
                     intermediate_size=cfg.intermediate_size, num_hidden_layers=cfg.num_hidden_layers,
                     num_attention_heads=cfg.num_attention_heads, num_key_value_heads=cfg.num_key_value_heads,
                     max_position_embeddings=cfg.max_position_embeddings, bos_token_id=eos_id,
                     eos_token_id=eos_id, tie_word_embeddings=False)
    return LlamaForCausalLM(hf)


def build_tiny_llama(out: Path, cfg: TinyLlamaConfig = RANDOM) -> dict[str, Any]:
    """Write a random-weight zoo decoder folder to ``out`` and return its facts (also in ``zoo_llm.json``).

    Raises:
        InputError: the ``llm`` extra is not installed, or ``out`` is a file.
    """
    _require_llm_packages()
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is a file: the zoo LLM is a folder; pass a directory path")
    out.mkdir(parents=True, exist_ok=True)
    texts = corpus_texts()
    tok = train_tokenizer(split_texts(texts)[0], cfg.vocab_size)
    model = make_model(cfg, tok.token_to_id(EOS))
    return save_folder(model, tok, out, cfg, {"trained": False})


def save_folder(model: Any, tok: Any, out: Path, cfg: TinyLlamaConfig, extra: dict[str, Any]) -> dict[str, Any]:
    """Save weights (safetensors), config, generation config, tokenizer and ``zoo_llm.json`` into ``out``."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model.generation_config.do_sample = False
    model.save_pretrained(out, safe_serialization=True)
    save_tokenizer(tok, out, cfg.max_position_embeddings)
    facts = {"architecture": "LlamaForCausalLM", "parameters": sum(p.numel() for p in model.parameters()),
             "config": asdict(cfg), **extra}
    (out / "zoo_llm.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return facts
