"""Write ``tests/data/history_v1.sqlite``: a results history as edgeopt's history schema version 1 wrote it, and
``tests/data/history_v1_expected.json``: what that code printed for it (``edgeopt history --json`` and
``edgeopt compare A B --json``). The migration test (tests/unit/history/test_migration.py) opens a copy with
today's code and asserts that it reads and compares the same.

Run with the code of commit 35102fb (the last one with schema version 1), from the repository root::

    git worktree add /tmp/v1 35102fb && cd /tmp/v1
    PYTHONPATH=$PWD:$PWD/device_agent python tests/data/make_history_v1.py OUT_DIR

and copy the two files from OUT_DIR into tests/data. It benches real models on this machine's CPU: a tiny ONNX
graph built here (three one-pass runs and a baseline) and the test suite's tiny random-weight Llama as an
onnxruntime-genai folder (three LLM bench runs of two workload cells); a few seconds in all.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

import numpy as np

# (name, argv) of the commands whose output the migration test compares, run against the finished file.
EXPECTED = (
    ("history", ["history", "--json", "--limit", "100"]),
    ("compare_tensor", ["compare", "1", "2", "--json"]),
    ("compare_tensor_baseline", ["compare", "v1-base", "3", "--json"]),
    ("compare_llm", ["compare", "4", "5", "--json", "--tolerance", "1000"]),
)


def tiny_onnx(path: Path) -> Path:
    """A 64x64 MatMul + Relu graph: microseconds per inference."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 64])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def cli(argv: list[str]) -> tuple[int, str]:
    """``edgeopt ARGV``: exit code and stdout."""
    from edgeopt.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return int(code or 0), out.getvalue()


def main(out_dir: Path) -> None:
    from tests.llm_models import shared_ortgenai

    out_dir.mkdir(parents=True, exist_ok=True)
    db = out_dir / "history_v1.sqlite"
    db.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="edgeopt-history-v1-") as tmp:
        model = tiny_onnx(Path(tmp) / "tiny.onnx")
        for _ in range(3):  # runs 1-3: one model three times (a noise floor for compare)
            code, _ = cli(["bench", str(model), "--iterations", "300", "--min-duration", "0.05", "--warmup", "20",
                           "--threads", "1", "--history-db", str(db), "--json"])
            assert code == 0, code
        llm = shared_ortgenai(Path(tmp) / "llm")
        for _ in range(3):  # runs 4-6: the tiny Llama, two cells, ten repetitions each (p90 needs ten)
            code, _ = cli(["bench", str(llm), "--prompt-tokens", "8,16", "--gen-tokens", "12", "--repetitions", "10",
                           "--gen-warmup", "1", "--history-db", str(db), "--json"])
            assert code == 0, code
        code, _ = cli(["baseline", "set", "1", "--name", "v1-base", "--history-db", str(db)])
        assert code == 0, code
    expected = {}
    for name, argv in EXPECTED:
        code, text = cli([*argv, "--history-db", str(db)])
        expected[name] = {"argv": argv, "exit_code": code, "output": json.loads(text)}
    with sqlite3.connect(db) as conn:  # one self-contained file: the WAL folded in
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("VACUUM")
    (out_dir / "history_v1_expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"{db} ({db.stat().st_size} bytes), {out_dir / 'history_v1_expected.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
