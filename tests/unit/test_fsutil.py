"""Atomic writes give outputs the mode a plain write would (0666 less the umask), not the temp file's 0600."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = "import sys; from pathlib import Path; from edgeopt.fsutil import atomic_write_text; " \
         "atomic_write_text(Path(sys.argv[1]), 'report')"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_outputs_respect_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    out = tmp_path / f"report-{umask:o}.html"
    subprocess.run([sys.executable, "-c", SCRIPT, str(out)], check=True,
                   preexec_fn=lambda: os.umask(umask))  # noqa: PLW1509 - a fresh child with its own umask
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert out.read_text() == "report"
