"""Tiny PyTorch models for the PyTorch pass tests, reachable as ``package.module:factory`` specs.

Imported only by tests that have already checked torch is importable.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

SPEC = "tests.unit.passes.torch.models"
DIGITS_SHAPE = (1, 1, 8, 8)


class SmallCNN(nn.Module):
    """Conv-BN-ReLU x3 + global pool + Linear: a digits classifier (8x8 grey images, 10 classes)."""

    def __init__(self, width: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.BatchNorm2d(4 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.classifier = nn.Linear(4 * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class TinyAttention(nn.Module):
    """A transformer-ish block: embedding, multi-head self-attention, LayerNorm, GELU MLP, mean-pooled head."""

    def __init__(self, features: int = 16, dim: int = 32, heads: int = 4, classes: int = 5) -> None:
        super().__init__()
        self.embed = nn.Linear(features, dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        a, _ = self.attn(h, h, h, need_weights=False)
        h = self.norm1(h + a)
        h = self.norm2(h + self.mlp(h))
        return self.head(h.mean(dim=1))


class CallCounter(nn.Module):
    """Multiplies by how many times it was called: torch.export bakes the count in, so ONNX silently differs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return self.fc(x) * float(self.calls)


def small_cnn() -> nn.Module:
    torch.manual_seed(0)
    return SmallCNN()


def tiny_attention() -> nn.Module:
    torch.manual_seed(0)
    return TinyAttention()


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 3))


def call_counter() -> nn.Module:
    torch.manual_seed(0)
    return CallCounter()


def narrow_cnn() -> nn.Module:
    """A user-named student for the digits teacher: the same layout at a quarter of the width."""
    torch.manual_seed(1)
    return SmallCNN(width=4)


def wrong_classes() -> nn.Module:
    """A would-be student for the digits teacher with 5 outputs instead of 10."""
    return SmallCNN(width=4, classes=5)


class Regressor(nn.Module):
    """8x8 image -> one number: an output that is not class logits (distillation falls back to MSE)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def mlp_regressor() -> nn.Module:
    torch.manual_seed(0)
    return Regressor()


def not_a_module() -> int:
    return 42


def broken_factory() -> nn.Module:
    raise RuntimeError("weights file missing")


def digits_data() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits: x [1797, 1, 8, 8] float32 in [0, 1], labels [1797] int64."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[:, None, :, :]
    return x, digits.target.astype(np.int64)


@functools.lru_cache(maxsize=1)
def _digits_teacher_state() -> dict[str, torch.Tensor]:
    """The trained SmallCNN (:func:`_train_digits_teacher`), once per checkout: kept in the suite's cache
    (``_shared`` of tests/llm_models.py, keyed by this file and the torch and scikit-learn versions), so the other
    xdist worker and later runs load it instead of training again (~3 CPU-s each)."""
    from tests.llm_models import _shared, cache_root

    def build() -> Path:
        cache_root().mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=".digits-teacher-", dir=cache_root()))  # same file system: renamed
        torch.save(_train_digits_teacher(), folder / "state.pt")
        return folder

    found = _shared("digits-teacher", ("torch", "scikit-learn"), "state.pt", build, sources=(Path(__file__),))
    return dict(torch.load(found / "state.pt", weights_only=True))


def _train_digits_teacher() -> dict[str, torch.Tensor]:
    """Train SmallCNN on the first 1500 digits for 250 Adam steps of 32 (~3 s on one core)."""
    x, y = digits_data()
    xs, ys = torch.from_numpy(x[:1500]), torch.from_numpy(y[:1500])
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = SmallCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(250):
        idx = torch.randint(0, len(xs), (32,), generator=gen)
        loss = nn.functional.cross_entropy(model(xs[idx]), ys[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {k: v.clone() for k, v in model.state_dict().items()}


def digits_teacher() -> nn.Module:
    """SmallCNN trained on digits (accuracy ~94% on the 297 digits after the first 1500)."""
    model = SmallCNN()
    model.load_state_dict(_digits_teacher_state())
    return model.eval()
