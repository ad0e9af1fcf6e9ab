"""Which output (and which slice of it) a metric looks at: ``0``, ``logits``, ``0,slice=[:,4:,:]`` (the class
rows of a ``[1, 4+C, N]`` head; the slice applies to ``[samples, ...]``, axis 0 is the sample)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError

_SLICE = re.compile(r"^\s*(?P<out>[^,]+?)\s*(?:,\s*slice\s*=\s*\[(?P<sl>[^\]]*)\])?\s*$")


def _index(part: str, spec: str) -> Any:
    part = part.strip()
    if part == "...":
        return Ellipsis
    try:
        if ":" in part:
            bounds = [int(b) if b.strip() else None for b in part.split(":")]
            if len(bounds) > 3:
                raise ValueError(part)
            return slice(*bounds)
        return int(part)
    except ValueError:
        raise InputError(f"--output {spec!r}: bad slice item {part!r}; use integers, ':' ranges and '...'") from None


@dataclass(frozen=True)
class OutputSelection:
    """An output by index or name, plus a numpy index applied to ``[samples, ...]`` (axis 0 is the sample)."""

    output: int | str = 0
    index: tuple[Any, ...] = ()
    spec: str = "0"

    def pick(self, outputs: list[np.ndarray], names: list[str]) -> np.ndarray:
        """The selected array (sliced) from one model's outputs.

        Raises:
            InputError: the output does not exist or the slice does not fit it.
        """
        if isinstance(self.output, int):
            if not -len(outputs) <= self.output < len(outputs):
                raise InputError(f"--output {self.spec!r}: the model has {len(outputs)} output(s); "
                                 f"use 0..{len(outputs) - 1}")
            arr = outputs[self.output]
        else:
            if self.output not in names:
                raise InputError(f"--output {self.spec!r}: no output named {self.output!r}; "
                                 f"outputs: {', '.join(names)}")
            arr = outputs[names.index(self.output)]
        if self.index:
            try:
                arr = arr[self.index]
            except IndexError as exc:
                raise InputError(f"--output {self.spec!r}: slice does not fit shape {list(arr.shape)} "
                                 f"({exc})") from None
        return np.asarray(arr)


def parse_output(spec: str | int | None) -> OutputSelection:
    """Parse ``"0"``, ``"scores"``, ``"0,slice=[:,4:,:]"`` (None: the first output, whole).

    Raises:
        InputError: a malformed spec.
    """
    if spec is None:
        return OutputSelection()
    if isinstance(spec, int):
        return OutputSelection(output=spec, spec=str(spec))
    m = _SLICE.match(spec)
    if not m:
        raise InputError(f"--output {spec!r}: use NAME or INDEX, optionally ',slice=[:,4:,:]' "
                         "(axis 0 is the sample)")
    out_s = m.group("out")
    out: int | str = int(out_s) if out_s.lstrip("-").isdigit() else out_s
    sl = m.group("sl")
    index = tuple(_index(p, spec) for p in sl.split(",")) if sl and sl.strip() else ()
    return OutputSelection(output=out, index=index, spec=spec)
