"""``qualify`` SIGKILLed at 20 seeded random points (building the zoo model, optimizing with a recipe, measuring,
writing the reports and the history): the history passes ``PRAGMA integrity_check``, no report or artifact is
ever half-written under its final name, and the next ``qualify`` passes without any cleanup."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import onnx

from tests.faults.helpers import record

SEED = 15
KILLS = 20
SPEC = """\
version: 1
name: kill-qualify
model:
  zoo: mobilenet-tiny
recipe: fp16
targets:
  - target: local
measure:
  min_duration_s: 0.2
  seed: 0
gates:
  latency: {percentile: p50, max_ms: 10000}
  model_size: {max_mb: 100}
"""


def _qualify(spec: Path, out: Path, db: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "edgeopt", "qualify", str(spec), "--report-dir", str(out),
                             "--history-db", str(db), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ), cwd=spec.parent)


def _integrity(db: Path) -> str:
    if not db.exists():
        return "ok"
    with sqlite3.connect(db) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def _visible(out: Path, pattern: str) -> list[Path]:
    """Files under their final names (temp files and temp directories start with a dot)."""
    return [p for p in out.rglob(pattern) if not any(part.startswith(".") for part in p.relative_to(out).parts)]


def _complete(out: Path) -> int:
    """Every report and artifact under its final name is whole; how many there were."""
    seen = 0
    for path in _visible(out, "*.json"):
        json.loads(path.read_text())
        seen += 1
    for path in _visible(out, "*.xml"):
        ET.parse(path)
        seen += 1
    for path in _visible(out, "*.html"):
        assert path.read_text().rstrip().endswith("</html>"), path
        seen += 1
    for path in _visible(out, "*.onnx"):
        onnx.checker.check_model(onnx.load(str(path)))
        seen += 1
    return seen


def test_qualify_killed_at_random_points_then_passes(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(SPEC))
    out, db = tmp_path / "report", tmp_path / "history.sqlite3"
    started = time.monotonic()
    first = _qualify(spec, out, db)
    stdout, stderr = first.communicate(timeout=300)
    span = time.monotonic() - started
    assert first.returncode == 0, stderr
    recorded = 1
    rng = random.Random(SEED)
    survived, finished = 0, 0
    for _ in range(KILLS):
        if rng.random() < 0.5:  # half of the kills on a qualify that has to rebuild and rewrite everything
            for p in out.rglob("*"):
                if p.is_file():
                    p.unlink()
        proc = _qualify(spec, out, db)
        time.sleep(rng.uniform(0.5, span))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        if proc.returncode == 0:  # it finished before the kill landed
            finished += 1
            recorded += 1
        assert _integrity(db) == "ok"
        _complete(out)
        survived += 1
    final = _qualify(spec, out, db)
    stdout, stderr = final.communicate(timeout=300)
    assert final.returncode == 0, stderr
    assert "Traceback" not in stderr
    result = json.loads(stdout)
    assert result["passed"] is True
    assert _complete(out) >= 4  # result.json, junit.xml, report.html, the zoo model and the optimized model
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT COUNT(*) FROM runs WHERE kind = 'qualify'").fetchone()[0]
    assert runs >= recorded + 1  # every qualify that finished is in the history, nothing measured lost
    record("qualify SIGKILLed at a random point (seeded)", KILLS, survived)
