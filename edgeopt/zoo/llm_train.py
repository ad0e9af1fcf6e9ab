"""``tiny-llama-trained``: the zoo decoder trained a few minutes on 2 CPU cores on standard-library text.

Random weights make every INT4 export look either perfect or meaningless; a model that has learned something
gives quantization a real distribution to change. Training is deterministic (seeded data order and init, 2
threads) and cached by a content hash of the config, the corpus text, the seed and the step count
(``$EDGEOPT_ZOO_CACHE``, else ``$XDG_CACHE_HOME/edgeopt/zoo``), so the ``make zoo-llm`` target and the benchmarks
pay once. Never run by the fast suite.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..inbound import read_json
from .llm_corpus import CORPUS_FILES, corpus_digest, corpus_texts, split_texts
from .tiny_llama import EOS, TRAINED, TinyLlamaConfig, _require_llm_packages, make_model, save_folder, train_tokenizer

CACHE_VERSION = 1


@dataclass(frozen=True)
class TrainSettings:
    """The training run: the step count is the knob (~1.3 CPU-seconds a step on this Xeon: a few minutes on 2
    idle cores; 21 min wall on 2 cores shared with other jobs; docs/llm.md)."""

    steps: int = 400
    seq_len: int = 128
    batch: int = 8
    lr: float = 3e-3
    threads: int = 2


def cache_root() -> Path:
    explicit = os.environ.get("EDGEOPT_ZOO_CACHE", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(home) / "edgeopt" / "zoo"


def cache_key(cfg: TinyLlamaConfig, train: TrainSettings, texts: list[str]) -> str:
    """Content hash of everything the trained weights depend on."""
    blob = json.dumps({"v": CACHE_VERSION, "config": asdict(cfg), "train": asdict(train), "files": CORPUS_FILES,
                       "text": corpus_digest(texts)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _batches(ids: Any, train: TrainSettings, seed: int) -> Any:
    import torch

    gen = torch.Generator().manual_seed(seed)
    span = ids.numel() - train.seq_len - 1
    for _ in range(train.steps):
        starts = torch.randint(0, span, (train.batch,), generator=gen)
        yield torch.stack([ids[s:s + train.seq_len + 1] for s in starts.tolist()])


def _lr(step: int, train: TrainSettings) -> float:
    warm = max(1, train.steps // 20)
    if step < warm:
        return train.lr * (step + 1) / warm
    return train.lr * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, train.steps - warm)))


def _loss(model: Any, batch: Any) -> Any:
    import torch.nn.functional as F

    logits = model(input_ids=batch[:, :-1]).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))


Progress = Callable[[str], None]


def train_model(cfg: TinyLlamaConfig, train: TrainSettings, out: Path,
                progress: Progress | None = None) -> dict[str, Any]:
    """Train from scratch and write the folder into ``out`` (a fresh directory); return its facts.

    ``progress`` gets a line every 5 % of the steps (step, mean loss of the last ones, seconds so far)."""
    import torch

    torch.set_num_threads(train.threads)
    train_texts, held_texts = split_texts(corpus_texts())
    tok = train_tokenizer(train_texts, cfg.vocab_size)
    eos = tok.token_to_id(EOS)
    ids = torch.tensor([i for t in train_texts for i in [*tok.encode(t).ids, eos]], dtype=torch.long)
    held = torch.tensor([i for t in held_texts for i in [*tok.encode(t).ids, eos]], dtype=torch.long)
    model = make_model(cfg, eos)
    opt = torch.optim.AdamW(model.parameters(), lr=train.lr, weight_decay=0.01)
    start, losses = time.monotonic(), []
    model.train()
    for step, batch in enumerate(_batches(ids, train, cfg.seed)):
        for group in opt.param_groups:
            group["lr"] = _lr(step, train)
        loss = _loss(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None and (step + 1) % max(1, train.steps // 20) == 0:
            recent = losses[-max(1, train.steps // 20):]
            progress(f"step {step + 1}/{train.steps}: loss {sum(recent) / len(recent):.3f}, "
                     f"{time.monotonic() - start:.0f} s")
    model.eval()
    with torch.no_grad():
        chunks = [held[i:i + train.seq_len + 1] for i in range(0, held.numel() - train.seq_len - 1, train.seq_len)]
        held_loss = float(_loss(model, torch.stack(chunks[:32])))
    tail = losses[-max(1, len(losses) // 20):]
    return save_folder(model, tok, out, cfg, {
        "trained": True, "train": asdict(train), "tokens_seen": train.steps * train.batch * train.seq_len,
        "train_tokens": int(ids.numel()), "final_loss": round(sum(tail) / len(tail), 4),
        "held_out_loss": round(held_loss, 4), "train_seconds": round(time.monotonic() - start, 1),
        "corpus_files": list(CORPUS_FILES)})


def build_trained(out: Path, train: TrainSettings | None = None, cfg: TinyLlamaConfig = TRAINED,
                  progress: Progress | None = None) -> dict[str, Any]:
    """Write the trained zoo decoder to ``out``, training it first unless the cache holds it.

    Raises:
        InputError: the ``llm`` extra is missing, or ``out`` is a file.
    """
    _require_llm_packages()
    train = train or TrainSettings()
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is a file: the zoo LLM is a folder; pass a directory path")
    cached = cache_root() / f"tiny-llama-trained-{cache_key(cfg, train, corpus_texts())}"
    if not (cached / "zoo_llm.json").is_file():
        partial = cached.with_name(cached.name + f".partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        if progress is not None:
            progress(f"training tiny-llama-trained ({train.steps} steps) into the cache {cached}")
        train_model(cfg, train, partial, progress)
        shutil.rmtree(cached, ignore_errors=True)
        partial.rename(cached)
    out.mkdir(parents=True, exist_ok=True)
    for item in cached.iterdir():
        shutil.copy2(item, out / item.name)
    facts = read_json(cached / "zoo_llm.json")
    return {**facts, "cache": str(cached)}
