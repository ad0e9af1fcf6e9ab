"""Which runtime a benchmark on a remote device uses when none is given: the target's first that the device has.

A target lists its runtimes in order of preference (``jetson-orin-nano``: tensorrt, onnxruntime). Sending the
first blindly made ``bench`` on a board without TensorRT fail ("tensorrt is not importable") right after
``devices check`` called it ready. The agent answers that question itself before anything else (its dependency
check runs before the device lock and the model load, a fraction of a second): when it reports the runtime
missing, the target's next runtime that loads the model is tried, and the result carries a note naming what was
skipped. Asking first (the probe ``devices check`` reads imports every runtime, ~1 s) would cost every run on a
target with two runtimes that time, for the rare board that lacks the first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..errors import RuntimeUnavailableError
from ..registry.lookup import ModelFormat, target_candidates
from ..targets import Target

T = TypeVar("T")


def first_present(fmt: ModelFormat | str, target: Target, where: str, attempt: Callable[[str | None], T],
                  *, choose: bool) -> tuple[T, str | None]:
    """``attempt(runtime)`` with the target's runtimes in order until the device has one; ``(its value, note)``.

    Args:
        fmt: the model's format (which of the target's runtimes load it).
        target: the device's target.
        where: the runner's name, for the note.
        attempt: runs the benchmark with a runtime (None: the usual default choice).
        choose: False (a runtime was given, or a local run, which checks what is installed itself): one
            ``attempt(None)``.

    Returns:
        What the successful attempt returned, and a one-line note when it is not the target's first choice.

    Raises:
        RuntimeUnavailableError: the device has none of them (the first runtime's message: what to install).
    """
    candidates = [c.value for c in target_candidates(fmt, target)] if choose else []
    if len(candidates) < 2:
        return attempt(None), None
    first_error: RuntimeUnavailableError | None = None
    for i, runtime in enumerate(candidates):
        try:
            value = attempt(runtime)
        except RuntimeUnavailableError as exc:
            first_error = first_error or exc
            continue
        if i == 0:
            return value, None
        return value, (f"{', '.join(candidates[:i])} not on {where}: measured with {runtime}, target "
                       f"{target.name}'s next runtime (pass --runtime to choose; edgeopt devices check lists what "
                       "to install)")
    assert first_error is not None
    raise first_error
