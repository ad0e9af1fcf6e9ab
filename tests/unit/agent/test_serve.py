"""``python -m edgeopt_agent serve``: one result line per request line, a bad line answered as a bad request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from edgeopt.runners.base import agent_dir


def _serve(lines: list[str]) -> tuple[list[dict], list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "edgeopt_agent", "serve"], input="".join(lines), text=True,
                          capture_output=True, timeout=120, env={"PYTHONPATH": str(agent_dir())}, check=True)
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    return results, events


def test_each_line_gets_its_answer_and_a_bad_one_does_not_end_the_agent(tiny_cnn: Path):
    good = {"model_path": str(tiny_cnn), "iterations": 5, "min_duration_s": 0.0, "warmup": 1}
    results, events = _serve(["not json\n", json.dumps({"command": "generate", "request": good}) + "\n",
                              json.dumps({"command": "run", "request": good}) + "\n"])
    assert [r["status"] for r in results] == ["error", "error", "ok"]
    assert results[0]["error_kind"] == "input" and "bad served message" in results[0]["error"]
    assert "not served" in results[1]["error"]  # an LLM cell's memory is its process's: one-shot only
    assert len(results[2]["samples_ns"]) >= 5
    served = [e for e in events if e["event"] == "served"]
    assert [e["status"] for e in served] == [2, 2, 0]
    assert len({e["pid"] for e in events if e["event"] == "start"}) == 1
