"""Public API functions that resolve names (targets) before calling the stage that does the work."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .analysis import inspect_model
from .analysis.report import InspectResult
from .targets import load_registry


def inspect(
    model: str | Path,
    *,
    target: str | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
    batch: int = 1,
    targets_dirs: Sequence[Path] = (),
) -> InspectResult:
    """Inspect ``model``; with ``target``, add a roofline estimate for that device.

    Open input dims not set by ``shapes`` take the target's ``default_input_shape`` or the model's own example
    shape when there is one (docs/inspect.md, "Dynamic shapes")."""
    tgt = load_registry(extra_dirs=targets_dirs).get(target) if target else None
    shape_map = {k: [int(d) for d in v] for k, v in (shapes or {}).items()}
    return inspect_model(Path(model), target=tgt, shapes=shape_map, batch=batch, example_shapes=True)
