"""Named zoo models with fixed sizes, so the demo, tests and benchmarks agree on what they run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from ..errors import InputError
from ..fsutil import atomic_write_bytes
from ..names import ModelFormat
from .mobilenet import mobilenet_like


@dataclass(frozen=True)
class ZooModel:
    name: str
    description: str
    factory: Callable[[], onnx.ModelProto]


_MODELS = {
    m.name: m
    for m in (
        ZooModel("mobilenet-tiny", "MobileNet-style CNN, 32x32 input, width 8, 10 classes: ~0.03 ms, for tests",
                 lambda: mobilenet_like(image_size=32, width=8, blocks=2, classes=10)),
        ZooModel("mobilenet-small", "MobileNet-style CNN, 128x128 input, width 16, 100 classes: ~0.25 ms (demo)",
                 lambda: mobilenet_like(image_size=128, width=16, blocks=6, classes=100)),
        ZooModel("mobilenet-large", "MobileNet-style CNN, 224x224 input, width 112, 1000 classes: ~20 ms",
                 lambda: mobilenet_like(image_size=224, width=112, blocks=8, classes=1000)),
    )
}


# Decoder LLMs: Hugging Face folders, not ONNX files (edgeopt.zoo.tiny_llama, edgeopt.zoo.llm_train; docs/llm.md).
LLM_MODELS: dict[str, str] = {
    "tiny-llama": "Llama decoder folder (HF format), ~1.3 M params, random weights, stdlib-trained BPE "
                  "tokenizer: seconds, for tests",
    "tiny-llama-trained": "Llama decoder folder, ~2.4 M params, trained a few minutes on 2 cores on stdlib "
                          "text (cached; --train-steps)",
}


def names() -> list[str]:
    return sorted([*_MODELS, *LLM_MODELS])


# What `edgeopt zoo build` writes, as its help says it (the zoo knows its families; the command names none).
BUILD_HELP = "Build zoo model NAME into OUT: an ONNX file, or a folder for the LLMs (tiny-llama*)."


# The format the zoo writes each family in (what its kind is told by: edgeopt.dispatch.zoo_kind).
_LLM_FORMAT = "hf_llm"  # a Hugging Face decoder folder


def zoo_format(name: str) -> str:
    """The format zoo model ``name`` is written in. Raises InputError for an unknown name."""
    if name in LLM_MODELS:
        return _LLM_FORMAT
    if name in _MODELS:
        return ModelFormat.ONNX.value
    raise InputError(f"unknown zoo model {name!r}: use one of {', '.join(names())}")


def build(name: str, out: Path, *, train_steps: int | None = None,
          progress: Callable[[str], None] | None = None) -> Path:
    """Write zoo model ``name`` to ``out`` (an ONNX file written atomically, or an LLM folder) and return the path.

    Raises:
        InputError: unknown name; ``train_steps`` for a model that is not trained; the ``llm`` extra missing.
    """
    if name not in _MODELS and name not in LLM_MODELS:
        raise InputError(f"unknown zoo model {name!r}: use one of {', '.join(names())}")
    if train_steps is not None and name != "tiny-llama-trained":
        raise InputError(f"--train-steps applies to tiny-llama-trained only, not {name}")
    if name == "tiny-llama":
        from .tiny_llama import build_tiny_llama

        build_tiny_llama(Path(out))
    elif name == "tiny-llama-trained":
        from .llm_train import TrainSettings, build_trained

        build_trained(Path(out), TrainSettings() if train_steps is None else TrainSettings(steps=train_steps),
                      progress=progress)
    else:
        atomic_write_bytes(Path(out), _MODELS[name].factory().SerializeToString())
    return Path(out)


def describe() -> dict[str, str]:
    return {n: _MODELS[n].description if n in _MODELS else LLM_MODELS[n] for n in names()}
