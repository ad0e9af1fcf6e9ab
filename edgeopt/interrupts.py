"""What a Ctrl-C or SIGTERM must stop at once, and whether one arrived.

Python runs a signal's handler in the main thread at the next bytecode, which can be anywhere inside a
library: in paramiko that is inside ``SFTPFile.__init__`` (its ``__del__`` then fails with AttributeError), inside
a ``__del__`` (where a ``KeyboardInterrupt`` is printed and dropped, and the run goes on), or before
``SFTPFile.close`` waits for the acknowledgement of every pipelined write (seconds). So while a block registered
with :func:`stop_on_interrupt` runs (an SSH upload), the CLI's handlers do not raise: they record the signal and
call the block's hook (closing the connection, which makes the next paramiko call fail at once), and the block
raises the interrupt itself when the failure, or its end, reaches it. A second signal raises at once.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator

_hooks: list[Callable[[], None]] = []
_requested: list[int] = []


@contextlib.contextmanager
def stop_on_interrupt(hook: Callable[[], None]) -> Iterator[None]:
    """Within the block, a first SIGINT/SIGTERM calls ``hook`` instead of raising where the code happens to be
    (``hook`` runs in the signal handler: it must be quick, like closing a socket); the block then ends with
    the interrupt (KeyboardInterrupt or :class:`Terminated`), whatever error the hook caused there."""
    _hooks.append(hook)
    try:
        yield
    except BaseException:
        if requested() is not None:
            raise interrupt_error() from None
        raise
    finally:
        with contextlib.suppress(ValueError):
            _hooks.remove(hook)
    if requested() is not None:  # the block finished before the hook's effect reached it
        raise interrupt_error()


def interrupt(signum: int) -> bool:
    """Record ``signum`` and run every hook (called by the CLI's handlers). True when the handler should not
    raise: a block with a hook is running and will raise the interrupt itself (only for the first signal)."""
    first = not _requested
    _requested.append(signum)
    hooks = list(_hooks)
    for hook in hooks:
        with contextlib.suppress(Exception):
            hook()
    return first and bool(hooks)


def requested() -> int | None:
    """The signal that interrupted this process (SIGINT or SIGTERM), or None."""
    return _requested[-1] if _requested else None


def reset() -> None:
    """Forget an earlier interrupt (a new CLI invocation in the same process, as tests do)."""
    _requested.clear()


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C (sessions closed, local agents stopped, temp files removed)."""


def interrupt_error() -> BaseException:
    """The exception the recorded interrupt unwinds with: KeyboardInterrupt (SIGINT) or :class:`Terminated`."""
    return Terminated() if requested() == signal.SIGTERM else KeyboardInterrupt()
