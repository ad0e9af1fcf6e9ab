"""Progress on stderr (issue 16, item 6): rich bars with ETA on a terminal (a real pseudo-terminal here), plain
lines on a pipe, and the last line agrees with the result (the agent's final counts), finished with a newline."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from edgeopt.runners.local import LocalRunner
from edgeopt_agent.protocol import Request

ROOT = Path(__file__).resolve().parents[3]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run_in_pty(code: str, timeout: float = 120.0) -> str:
    """Run ``code`` with its stderr on a pseudo-terminal; return what the terminal received (ANSI stripped)."""
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'device_agent'}", "TERM": "xterm-256color",
           "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=slave, stdout=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=timeout)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return ANSI.sub("", b"".join(chunks).decode(errors="replace"))


def test_timed_run_on_a_terminal_shows_a_bar_with_eta_and_ends_with_the_true_counts(tiny_cnn):
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from edgeopt.cli.progress import StderrProgress
        from edgeopt.runners.local import LocalRunner
        from edgeopt_agent.protocol import Request
        with StderrProgress() as progress:
            assert progress.tty
            raw = LocalRunner().run(Request(model_path="", iterations=20, min_duration_s=1.5,
                                            progress_interval_s=0.2), Path({str(tiny_cnn)!r}), progress)
        sys.stderr.write("AFTER %d %.2f\\n" % (len(raw.samples_ns), raw.timed_wall_s))
    """)
    out = _run_in_pty(code)
    assert "━" in out and "ETA" in out, out  # rich's bar and the remaining-time column
    final = re.findall(r"timed (\d+) inferences in ([0-9.]+) s", out)
    after = re.search(r"AFTER (\d+) ([0-9.]+)", out)
    assert final and after, out
    assert final[-1] == (after.group(1), after.group(2))  # the last line is the result's numbers
    assert re.search(r"\n\s*AFTER", out), out  # the next message starts on its own line, not glued to the bar


def test_plain_lines_on_a_pipe_end_with_the_result_numbers(tiny_cnn):
    stream = io.StringIO()
    from edgeopt.cli.progress import StderrProgress

    with StderrProgress(stream) as progress:
        assert not progress.tty
        raw = LocalRunner().run(Request(model_path="", iterations=20, min_duration_s=0.5, progress_interval_s=0.1),
                                tiny_cnn, progress)
    lines = stream.getvalue().splitlines()
    assert lines[:3] == ["edgeopt: load...", "edgeopt: warmup...", lines[2]] and "\x1b" not in stream.getvalue()
    assert lines[-1] == f"edgeopt: timed {len(raw.samples_ns)} inferences in {raw.timed_wall_s:.2f} s"
    assert stream.getvalue().endswith("\n")


@pytest.mark.parametrize("terminal", [True, False])
def test_pass_progress_bars_and_plain_lines(terminal):
    from edgeopt.cli.optimize_render import StderrReporter

    stream = io.StringIO()
    reporter = StderrReporter(stream, terminal=terminal)
    reporter.info("quantize_int8")
    for i in range(1, 101):
        reporter.progress("calibration samples", i, 100)
    reporter.info("done")
    reporter.close()
    text = ANSI.sub("", stream.getvalue())
    if terminal:
        assert "━" in text and "calibration samples 100/100" in text
    else:
        lines = text.splitlines()
        assert lines[0] == "edgeopt: quantize_int8" and lines[-1] == "edgeopt: done"
        assert "edgeopt: calibration samples 100/100" in lines and len(lines) <= 8  # a few lines, not 100
