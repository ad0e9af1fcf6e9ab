"""Named zoo models with fixed sizes, so the demo, tests and benchmarks agree on what they run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from ..errors import InputError
from ..fsutil import atomic_write_bytes
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


def names() -> list[str]:
    return sorted(_MODELS)


def build(name: str, out: Path) -> Path:
    """Write zoo model ``name`` to ``out`` atomically and return the path."""
    if name not in _MODELS:
        raise InputError(f"unknown zoo model {name!r}: use one of {', '.join(names())}")
    atomic_write_bytes(Path(out), _MODELS[name].factory().SerializeToString())
    return Path(out)


def describe() -> dict[str, str]:
    return {n: _MODELS[n].description for n in names()}
