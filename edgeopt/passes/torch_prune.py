"""Structured channel pruning of an eager PyTorch model with torch-pruning (L1/L2 magnitude importance).

Whole output channels of Conv/Linear layers are removed together with everything that depends on them (the
following BatchNorm, the next layer's input channels, residual partners), so the model really gets smaller: fewer
parameters and fewer MACs, not zeros. The layers that produce the model's outputs (a classifier head, detection
heads) are never pruned, or the output would lose classes; users may name more layers to leave alone.

Used by ``prune_structured`` and by ``distill`` (to build a narrower copy of the teacher).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch_pruning as tp

from .torch_train import flatten_outputs

ROOT_TYPES: tuple[type[torch.nn.Module], ...] = (
    torch.nn.modules.conv._ConvNd,
    torch.nn.Linear,
    torch.nn.MultiheadAttention,
)


@dataclass
class PruneResult:
    """What a pruning step did."""

    ignored: list[str]
    output_layers: list[str]
    changed_layers: dict[str, list[int]]  # name -> [out channels before, after]
    warnings: list[str] = field(default_factory=list)


def count_macs_params(module: torch.nn.Module, example: tuple[torch.Tensor, ...]) -> tuple[int, int]:
    """(MACs, parameters) of one forward on ``example`` (torch-pruning's counter)."""
    was_training = module.training
    module.eval()
    with torch.no_grad():
        macs, params = tp.utils.count_ops_and_params(module, example)
    module.train(was_training)
    return int(macs), int(params)


def output_layers(module: torch.nn.Module, example: tuple[torch.Tensor, ...]) -> list[str]:
    """Names of the Conv/Linear/attention modules whose outputs reach the model's outputs without passing through
    another such module (found by walking the autograd graph back from the outputs)."""
    by_grad_fn: dict[object, str] = {}

    def hook(name: str) -> Callable[[torch.nn.Module, object, object], None]:
        def record(_mod: torch.nn.Module, _args: object, out: object) -> None:
            for t in flatten_outputs(out):
                if t.grad_fn is not None:
                    by_grad_fn.setdefault(t.grad_fn, name)

        return record

    handles = [
        m.register_forward_hook(hook(name)) for name, m in module.named_modules() if isinstance(m, ROOT_TYPES)
    ]
    try:
        with torch.enable_grad():
            outs = flatten_outputs(module(*example))
    finally:
        for h in handles:
            h.remove()
    found: list[str] = []
    seen: set[object] = set()
    stack: list[Any] = [t.grad_fn for t in outs if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if fn in by_grad_fn:
            if by_grad_fn[fn] not in found:
                found.append(by_grad_fn[fn])
            continue
        stack.extend(nxt for nxt, _ in fn.next_functions)
    return found


def prune_channels(
    module: torch.nn.Module,
    example: tuple[torch.Tensor, ...],
    *,
    ratio: float,
    importance_p: int = 1,
    ignore: Sequence[str] = (),
    ignore_output_layers: bool = True,
    round_to: int | None = None,
    global_pruning: bool = False,
) -> PruneResult:
    """Remove ``ratio`` of the output channels of each prunable layer of ``module``, in place.

    Args:
        module: an eager ``nn.Module`` (its parameters must require grad for the dependency trace).
        example: example inputs (batch >= 1).
        ratio: fraction of channels to remove, in (0, 1).
        importance_p: 1 for L1-norm, 2 for L2-norm channel importance.
        ignore: ``fnmatch`` patterns of module names (``named_modules``) to leave unpruned.
        ignore_output_layers: leave the layers that produce the model's outputs unpruned.
        round_to: keep channel counts multiples of this (attention head counts are folded in).
        global_pruning: rank channels across layers instead of per layer.

    Returns:
        Which layers were ignored and how the prunable layers' widths changed.
    """
    named = dict(module.named_modules())
    warnings: list[str] = []
    ignored: list[str] = []
    for pattern in ignore:
        hits = [n for n in named if n and fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            warnings.append(f"ignore pattern '{pattern}' matches no module; names look like {_sample_names(named)}")
        ignored.extend(h for h in hits if h not in ignored)
    outs = output_layers(module, example) if ignore_output_layers else []
    ignored.extend(n for n in outs if n not in ignored)
    heads = [m.num_heads for m in named.values() if isinstance(m, torch.nn.MultiheadAttention)]
    step = round_to or 1
    for h in heads:
        step = step * h // math.gcd(step, h)
    before = _widths(named)
    importance = tp.importance.MagnitudeImportance(p=importance_p)
    with torch.enable_grad():
        pruner = tp.pruner.MetaPruner(
            module,
            example,
            importance=importance,
            pruning_ratio=ratio,
            ignored_layers=[named[n] for n in ignored],
            round_to=step if step > 1 else None,
            global_pruning=global_pruning,
        )
        pruner.step()
    after = _widths(dict(module.named_modules()))
    changed = {n: [before[n], after[n]] for n in before if n in after and after[n] != before[n]}
    return PruneResult(ignored=ignored, output_layers=outs, changed_layers=changed, warnings=warnings)


def reinitialize(module: torch.nn.Module) -> int:
    """Reset every submodule that has ``reset_parameters`` (weights, biases, BatchNorm statistics); returns how many."""
    count = 0
    for m in module.modules():
        reset = getattr(m, "reset_parameters", None)
        if callable(reset):
            reset()
            count += 1
    return count


def _widths(named: dict[str, torch.nn.Module]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, m in named.items():
        if isinstance(m, torch.nn.modules.conv._ConvNd):
            out[name] = int(m.out_channels)
        elif isinstance(m, torch.nn.Linear):
            out[name] = int(m.out_features)
    return out


def _sample_names(named: dict[str, torch.nn.Module]) -> str:
    names = [n for n, m in named.items() if isinstance(m, ROOT_TYPES)][:4]
    return ", ".join(names) or "(none)"
