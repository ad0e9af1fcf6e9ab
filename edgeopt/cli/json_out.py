"""``--json`` keeps stdout for the JSON result alone.

While a ``--json`` command runs, whatever else writes to stdout (a library's progress bar such as NNCF's, a C
extension's printf) is sent to stderr at the file-descriptor level; :func:`emit_json` writes the result to the
real stdout. Where stdout has no file descriptor (an in-process test capture), the redirection is Python-level.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

import click
from pydantic import BaseModel

from ..untrusted import for_json

_real_stdout: TextIO | None = None


@contextlib.contextmanager
def stdout_reserved_for_json() -> Iterator[None]:
    """Send stdout (Python's and file descriptor 1) to stderr for the duration; :func:`emit_json` still reaches
    the real stdout."""
    global _real_stdout
    py_stdout = sys.stdout
    with contextlib.suppress(AttributeError, OSError, ValueError):
        py_stdout.flush()
    try:
        py_fd: int | None = py_stdout.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        py_fd = None  # an in-process capture (tests): it stays the JSON destination
    try:
        saved: int | None = os.dup(1)
        os.dup2(sys.stderr.fileno(), 1)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        saved = None  # no usable descriptors: Python-level only
    _real_stdout = os.fdopen(os.dup(saved), "w", encoding="utf-8") if py_fd == 1 and saved is not None else py_stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = py_stdout
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
            _real_stdout.flush()
        if _real_stdout is not py_stdout:
            _real_stdout.close()
        _real_stdout = None
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def emit_json(result: BaseModel | dict[str, Any] | list[Any]) -> None:
    """Print a result as JSON on stdout (and nothing else)."""
    text = result.model_dump_json(indent=2) if isinstance(result, BaseModel) else json.dumps(result, indent=2,
                                                                                             default=str)
    click.echo(for_json(text), file=_real_stdout)
    if _real_stdout is not None:
        _real_stdout.flush()
