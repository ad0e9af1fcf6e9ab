"""Short training loops for the PyTorch passes: fine-tuning a pruned model and distilling a student.

Both run on the user's calibration data (a few hundred samples, a few epochs, on the CPU): the goal is to recover
the teacher's behaviour on that data, not to train a model from scratch. Targets are the teacher's outputs (KL on
temperature-softened logits for classifier-like outputs, MSE otherwise) or, for fine-tuning, true labels when the
data carries them. Randomness (shuffling, re-initialisation) is seeded and does not touch torch's global RNG.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import InputError
from .base import CalibrationProvider
from .torch_io import LoadedTorchModel, signature_onnx

LossFn = Callable[[list[torch.Tensor], list[torch.Tensor]], torch.Tensor]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class TrainStats:
    """What a training run did: steps, wall time, and the mean loss of its first and last epochs."""

    epochs: int
    steps: int
    seconds: float
    first_epoch_loss: float
    last_epoch_loss: float

    def as_report(self) -> dict[str, Any]:
        return {
            "epochs": self.epochs,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "first_epoch_loss": round(self.first_epoch_loss, 6),
            "last_epoch_loss": round(self.last_epoch_loss, 6),
        }


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run a block with torch's CPU RNG seeded, restoring the caller's RNG state afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def calibration_tensors(
    provider: CalibrationProvider | None,
    loaded: LoadedTorchModel,
    work_dir: Path,
    *,
    limit: int | None,
    purpose: str,
) -> tuple[tuple[torch.Tensor, ...], torch.Tensor | None]:
    """The calibration samples for ``loaded``'s inputs, stacked along the batch axis, plus labels when given.

    Raises:
        InputError: no data provider was given to the pass.
        CalibrationError, ShapeError: the data does not fit the model's inputs.
    """
    if provider is None:
        raise InputError(f"{purpose} needs training data: pass --calib DATA (an .npz keyed by input name or .npy)")
    sig = signature_onnx(loaded, work_dir / "torch-inputs.signature.onnx")
    samples = provider.samples(sig, limit=limit)
    inputs = tuple(
        torch.from_numpy(np.ascontiguousarray(np.concatenate([s[spec.name] for s in samples], axis=0)))
        for spec in loaded.inputs
    )
    raw = getattr(provider, "labels", None)
    labels = None
    if raw is not None and not provider.is_random:
        arr = np.asarray(raw)
        n = inputs[0].shape[0]
        if arr.ndim == 1 and arr.dtype.kind in "iu" and len(arr) >= n:  # the provider's labels follow its samples
            labels = torch.from_numpy(arr[:n].astype(np.int64))
    return inputs, labels


def flatten_outputs(out: object) -> list[torch.Tensor]:
    """A model's output (tensor, tuple, list or dict of them, nested) as a flat list of tensors."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, Mapping):
        return [t for key in out for t in flatten_outputs(out[key])]
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in flatten_outputs(item)]
    return []


@torch.no_grad()
def batched_outputs(module: torch.nn.Module, inputs: Sequence[torch.Tensor], batch_size: int) -> list[torch.Tensor]:
    """Run ``module`` over ``inputs`` (stacked on axis 0) in batches; per output, the concatenated results."""
    _set_mode(module, train=False)
    n = inputs[0].shape[0]
    parts: list[list[torch.Tensor]] = []
    for start in range(0, n, batch_size):
        outs = flatten_outputs(module(*(t[start : start + batch_size] for t in inputs)))
        parts.append([o.detach() for o in outs])
    return [torch.cat([p[i] for p in parts], dim=0) for i in range(len(parts[0]))]


def classifier_like(outputs: Sequence[torch.Tensor]) -> bool:
    """One 2-D float output with at least 2 columns: logits of a classifier (top-1 and KL make sense)."""
    return len(outputs) == 1 and outputs[0].dim() == 2 and outputs[0].shape[1] >= 2 and outputs[0].is_floating_point()


def kl_loss(temperature: float) -> LossFn:
    """Hinton's distillation loss: KL(teacher || student) on softmax(logits / T), scaled by T^2."""

    def loss(student: list[torch.Tensor], teacher: list[torch.Tensor]) -> torch.Tensor:
        t = temperature
        return F.kl_div(
            F.log_softmax(student[0] / t, dim=1), F.log_softmax(teacher[0] / t, dim=1),
            reduction="batchmean", log_target=True,
        ) * (t * t)

    return loss


def mse_loss(student: list[torch.Tensor], teacher: list[torch.Tensor]) -> torch.Tensor:
    """Mean squared error summed over every float output."""
    terms = [F.mse_loss(s, t) for s, t in zip(student, teacher, strict=True) if t.is_floating_point()]
    return torch.stack(terms).sum()


def label_loss(student: list[torch.Tensor], labels: list[torch.Tensor]) -> torch.Tensor:
    """Cross-entropy of the first output against integer class labels."""
    return F.cross_entropy(student[0], labels[0])


def train(
    module: torch.nn.Module,
    inputs: Sequence[torch.Tensor],
    targets: Sequence[torch.Tensor],
    loss_fn: LossFn,
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    seed: int,
    weight_decay: float = 0.0,
    progress: Progress | None = None,
) -> TrainStats:
    """Adam with a cosine learning-rate decay over ``epochs`` passes of shuffled mini-batches.

    Args:
        module: the model to train (its parameters are updated in place).
        inputs: model inputs stacked on axis 0.
        targets: per-sample targets stacked on axis 0 (teacher outputs, or labels), passed to ``loss_fn``.
        loss_fn: ``loss_fn(student_outputs, target_batch)``.
        epochs, lr, batch_size, seed, weight_decay: the usual; ``seed`` fixes the shuffling.
        progress: called with (epoch done, epochs) after each epoch.

    Returns:
        Steps, seconds and the mean loss of the first and last epochs.

    Raises:
        InputError: the loss became NaN or infinite (lower lr).
    """
    n = inputs[0].shape[0]
    batch = min(batch_size, n)
    # BatchNorm cannot train on a batch of one sample: drop a last batch of size 1.
    steps_per_epoch = n // batch if n % batch == 1 else -(-n // batch)
    params = [p for p in module.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs * steps_per_epoch))
    gen = torch.Generator().manual_seed(seed)
    started = time.perf_counter()
    epoch_losses: list[float] = []
    steps = 0
    _set_mode(module, train=True)
    try:
        for epoch in range(epochs):
            order = torch.randperm(n, generator=gen)
            total = 0.0
            for step in range(steps_per_epoch):
                idx = order[step * batch : (step + 1) * batch]
                out = flatten_outputs(module(*(t[idx] for t in inputs)))
                loss = loss_fn(out, [t[idx] for t in targets])
                if not torch.isfinite(loss):
                    raise InputError(
                        f"training diverged at epoch {epoch + 1} (loss {loss.item()}); lower lr (now {lr})"
                    )
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                total += float(loss.item())
                steps += 1
            epoch_losses.append(total / max(1, steps_per_epoch))
            if progress:
                progress(epoch + 1, epochs)
    finally:
        _set_mode(module, train=False)
    return TrainStats(
        epochs=epochs,
        steps=steps,
        seconds=time.perf_counter() - started,
        first_epoch_loss=epoch_losses[0] if epoch_losses else float("nan"),
        last_epoch_loss=epoch_losses[-1] if epoch_losses else float("nan"),
    )


def fidelity(student: Sequence[torch.Tensor], teacher: Sequence[torch.Tensor]) -> dict[str, Any]:
    """How closely ``student`` outputs follow ``teacher`` outputs on the same samples.

    Returns:
        ``samples``; ``top1_agreement`` (fraction of samples with the same arg-max, classifier-like outputs only,
        else None); ``cosine_mean`` (mean per-sample cosine similarity of all float outputs, flattened); ``mse``;
        ``max_abs_error``.
    """
    floats = [(s.float(), t.float()) for s, t in zip(student, teacher, strict=True) if t.is_floating_point()]
    n = teacher[0].shape[0]
    s_flat = torch.cat([s.reshape(n, -1) for s, _ in floats], dim=1)
    t_flat = torch.cat([t.reshape(n, -1) for _, t in floats], dim=1)
    cosine = F.cosine_similarity(s_flat, t_flat, dim=1, eps=1e-12)
    top1 = None
    if classifier_like(list(teacher)):
        top1 = float((student[0].argmax(dim=1) == teacher[0].argmax(dim=1)).float().mean())
    return {
        "samples": int(n),
        "top1_agreement": None if top1 is None else round(top1, 4),
        "cosine_mean": round(float(cosine.mean()), 5),
        "mse": float(F.mse_loss(s_flat, t_flat)),
        "max_abs_error": float((s_flat - t_flat).abs().max()),
    }


def _set_mode(module: torch.nn.Module, *, train: bool) -> None:
    """train()/eval(), tolerating an ExportedProgram's module, which refuses mode switches."""
    with suppress(NotImplementedError, RuntimeError):
        module.train(train)
