"""``edgeopt ARGS`` in the test's own process: the CLI's ``main`` (the process entry point's body) with its exit
code, stdout and stderr captured as a :class:`subprocess.CompletedProcess`, so a test written against a real
process reads the same. A real process costs an interpreter start and edgeopt's imports (~1 CPU-s, more under
load) and tells nothing more, except what a user's shell sees before ``main`` runs: import-time noise on stderr
(tests/integration/test_cli_bench.py keeps real processes for that)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path


@contextlib.contextmanager
def _environment(env: Mapping[str, str], unset: tuple[str, ...], cwd: Path | None) -> Iterator[None]:
    saved, was = dict(os.environ), Path.cwd()
    for name in unset:
        os.environ.pop(name, None)
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(was)
        os.environ.clear()
        os.environ.update(saved)


def edgeopt_here(*args: str, env: Mapping[str, str] | None = None, unset: tuple[str, ...] = (),
                 cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``edgeopt ARGS`` with ``env`` set and ``unset`` removed (restored afterwards), from ``cwd``."""
    from edgeopt.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with _environment(env or {}, unset, cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
