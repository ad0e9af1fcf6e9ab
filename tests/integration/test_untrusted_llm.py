"""An LLM board is untrusted input too: a lying agent (tests/fake_agent.py ``llm_*`` modes) behind the real local
runner and CLI returns a ``generate`` result whose readings cannot be true or are of the wrong type.

Impossible numbers make the cell invalid with the field named (exit 1; the history keeps the run as invalid and
``compare`` does not judge it); wrong types are a malformed result (exit 3, one line, no traceback).
docs/reliability.md, "Untrusted device: new surfaces".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from tests.fake_agent import fake_python

WORKLOAD = ["--prompt-tokens", "8", "--gen-tokens", "12", "--repetitions", "10", "--no-energy"]


@pytest.fixture()
def llm_folder(tmp_path: Path) -> Path:
    """A folder the format registry takes for an onnxruntime-genai model (the fake agent never loads it)."""
    folder = tmp_path / "llm"
    folder.mkdir()
    (folder / "genai_config.json").write_text(json.dumps({"model": {"decoder": {}}}))
    (folder / "model.onnx").write_bytes(b"weights")
    return folder


def _bench(folder: Path, tmp_path: Path, mode: str, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["bench", str(folder), "--python", str(fake_python(tmp_path, mode)), *WORKLOAD,
                 "--history-db", str(tmp_path / "history.db"), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(("mode", "field"), [
    ("llm_nan", "reps[0].ttft_ns = nan"), ("llm_negative", "reps[0].token_ns holds 11 value(s)"),
    ("llm_zero", "reps[0].token_ns holds 11 value(s)"), ("llm_after_last", "e2e_ns is 0.001 ms"),
    ("llm_extra_tokens", "holds 10000 token latencies for 12 tokens"), ("llm_nan_load", "load_ms = nan")])
def test_impossible_llm_readings_make_an_invalid_cell(llm_folder: Path, tmp_path: Path, capsys, mode: str,
                                                      field: str):
    code, out, err = _bench(llm_folder, tmp_path, mode, capsys, "--json")
    result = json.loads(out)
    (cell,) = result["cells"]
    assert code == 1 and result["valid"] is False and cell["valid"] is False, err
    assert any(r.startswith("the device reported") and field in r for r in cell["invalid_reasons"]), cell
    numbers = [v for k, v in cell.items() if k.endswith(("_ms_p50", "_ms_p90", "_per_s")) and v is not None]
    assert all(v > 0 for v in numbers), "no NaN, zero or negative figure is shown"
    assert main(["history", "--json", "--limit", "1", "--history-db", str(tmp_path / "history.db")]) == 0
    (latest,) = json.loads(capsys.readouterr().out)
    assert latest["valid"] is False


@pytest.mark.parametrize(("mode", "field"), [
    ("llm_type_tokens", "generate.cells.0.reps.0.token_ns"), ("llm_type_rep", "generate.cells.0.reps.0"),
    ("llm_missing", "generate.cells.0.reps.0.e2e_ns: Field required"), ("llm_no_load", "7 has no load"),
    ("llm_facts", "generate.model.layers"), ("llm_zero_batch", "generate.cells.0.batch"),
    ("llm_no_cells", "0 cells for a workload of 1")])
def test_malformed_llm_results_are_device_errors(llm_folder: Path, tmp_path: Path, capsys, mode: str, field: str):
    code, out, err = _bench(llm_folder, tmp_path, mode, capsys)
    lines = err.strip().splitlines()
    assert code == 3 and "Traceback" not in err, err
    assert lines[-1].startswith("edgeopt: error:") and "malformed result" in lines[-1] and field in lines[-1], lines


def test_compare_does_not_call_an_impossible_run_an_improvement(llm_folder: Path, tmp_path: Path, capsys):
    db = str(tmp_path / "history.db")
    assert _bench(llm_folder, tmp_path, "llm_same", capsys)[0] == 0
    assert _bench(llm_folder, tmp_path, "llm_negative", capsys)[0] == 1
    assert main(["compare", "1", "2", "--json", "--history-db", db]) == 0
    metrics = json.loads(capsys.readouterr().out)["cells"][0]["metrics"]
    assert all(m["verdict"] is None and m["change_pct"] == 0.0 and "impossible readings" in m["explanation"]
               for m in metrics), metrics


def test_an_injected_unsupported_reason_is_text(llm_folder: Path, tmp_path: Path, capsys):
    code, out, err = _bench(llm_folder, tmp_path, "llm_inject", capsys)
    assert code == 1 and "\x1b" not in out + err and "\x9b" not in out + err, (out, err)
    (line,) = [line for line in out.splitlines() if line.startswith("cell 1 invalid")]
    assert "[link=https://evil.example]click[/link]<script>" in line and "PWNED-title" not in out, out
