"""Entry point: the command group and the one place where errors become exit codes.

Exit codes (docs/exit-codes.md): 0 pass, 1 a budget or gate failed, 2 usage or input error,
3 device or runner error, 130 interrupted (SIGINT), 143 terminated (SIGTERM).

This module imports only the standard library at its top: :func:`main` installs the signal handlers first and
only then imports the commands (onnx, numpy, the runtimes: about a second), so a signal during start-up also
ends edgeopt with one line and the documented code, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .. import interrupts
from ..errors import EdgeoptError, ExitCode
from ..interrupts import Terminated

INTERRUPTED = (130, "interrupted")
TERMINATED = (143, "terminated (SIGTERM); the device's agent stops itself, run again to resume")


def _fail(message: str, code: int, as_json: bool) -> int:
    import click

    from ..untrusted import clean_text
    from .json_out import emit_json

    # An error line may quote a device (its error text, its stderr): one line, no escapes (edgeopt.untrusted).
    message = clean_text(message, limit=4000)
    click.echo(f"edgeopt: error: {message}", err=True)
    if as_json:
        emit_json({"error": message, "exit_code": code})
    return code


def _on_sigint(signum: int, frame: object) -> None:
    _quiet_teardown()
    if interrupts.interrupt(signum):  # an SSH upload closes its connection and raises this itself
        return
    raise KeyboardInterrupt


def _on_sigterm(signum: int, frame: object) -> None:
    _quiet_teardown()
    if interrupts.interrupt(signum):
        return
    raise Terminated()


def _quiet_teardown() -> None:
    """Once interrupted, errors in finalizers (``__del__`` of a paramiko file whose connection was just closed)
    are the teardown's, not news: they must not print a traceback after the one error line."""

    def hook(unraisable: Any) -> None:
        if interrupts.requested() is None:
            sys.__unraisablehook__(unraisable)

    sys.unraisablehook = hook


def _exit_at_startup(as_json: bool) -> Callable[[int, Any], None]:
    """The handler while the commands are imported: nothing has started yet, so print the line and exit now
    (raising KeyboardInterrupt inside an extension module's import would print that import's traceback)."""

    def handler(signum: int, frame: object) -> None:
        code, message = INTERRUPTED if signum == signal.SIGINT else TERMINATED
        with contextlib.suppress(OSError):
            os.write(2, f"edgeopt: error: {message}\n".encode())
            if as_json:
                os.write(1, (json.dumps({"error": message, "exit_code": code}) + "\n").encode())
        os._exit(code)

    return handler


def _import_commands(as_json: bool, args: Sequence[str] = ()) -> Any:
    """The click group, imported with start-up handlers for SIGINT and SIGTERM; afterwards SIGINT raises
    KeyboardInterrupt (unless it was ignored, as for a background job) and SIGTERM raises Terminated, each after
    running the interrupt hooks (:mod:`edgeopt.interrupts`)."""
    if threading.current_thread() is not threading.main_thread():
        from .group import cli, preload

        preload(list(args))
        return cli
    sigint = signal.getsignal(signal.SIGINT)
    startup = _exit_at_startup(as_json)
    if sigint is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, startup)
    signal.signal(signal.SIGTERM, startup)
    try:
        from .group import cli, preload

        preload(list(args))  # the command's modules load here, under the start-up handlers
    finally:
        if sigint is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _on_sigint)
        signal.signal(signal.SIGTERM, _on_sigterm)
    return cli


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (never a traceback for an expected error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    interrupts.reset()
    cli = _import_commands(as_json, args)
    import click

    from .json_out import stdout_reserved_for_json

    try:
        with stdout_reserved_for_json() if as_json else contextlib.nullcontext():
            rv = cli.main(args=args, prog_name="edgeopt", standalone_mode=False)
    except EdgeoptError as exc:
        if interrupts.requested() is not None:  # an error the interrupt caused (its connection closed)
            return _interrupted(as_json)
        return _fail(str(exc), int(exc.exit_code), as_json)
    except click.exceptions.Abort as exc:  # click turns Ctrl-C into Abort
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            return _fail(INTERRUPTED[1], INTERRUPTED[0], as_json)
        return _fail("aborted", int(ExitCode.USAGE), as_json)
    except click.ClickException as exc:
        return _fail(exc.format_message(), int(ExitCode.USAGE), as_json)
    except KeyboardInterrupt:
        return _fail(INTERRUPTED[1], INTERRUPTED[0], as_json)
    except Terminated:
        return _fail(TERMINATED[1], TERMINATED[0], as_json)
    except Exception:
        # a signal that landed inside an extension module's import (onnxruntime, openvino, loaded on first use)
        # surfaces as that import's ImportError: it is the interrupt, not a bug to show as a traceback
        if interrupts.requested() is not None:
            return _interrupted(as_json)
        raise
    return int(rv or 0)


def run() -> int:
    """The process entry point (the ``edgeopt`` script, ``python -m edgeopt``): :func:`main`, after which a late
    SIGINT or SIGTERM is ignored: the exit code is decided and nothing is left to stop, so the process exits with
    it instead of dying of the signal between ``main`` and interpreter exit."""
    code = main()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return code


def _interrupted(as_json: bool) -> int:
    code, message = TERMINATED if interrupts.requested() == signal.SIGTERM else INTERRUPTED
    return _fail(message, code, as_json)


if __name__ == "__main__":
    sys.exit(run())
