"""``edgeopt qualify`` of LLM specs on real onnxruntime-genai sessions: an exported folder against the
llm-interactive profile, a Hugging Face zoo folder exported by an LLM recipe, the reports (TPOT over the
generation, TTFT vs prompt length), the history record, exit codes, and retention against the FP32 export."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from edgeopt import qualify
from edgeopt.cli.main import main
from edgeopt.history import HistoryStore


def _renders_offline(report: Path, tmp_path: Path) -> None:
    """In headless Chromium (where installed): both charts laid out, no request leaves the page."""
    from tests.integration import chromium

    if chromium.unavailable_reason() is not None:
        return
    with chromium.DevTools(tmp_path / "profile") as browser:
        session, requested = browser.load(report.as_uri())
        assert requested == [report.as_uri()]
        assert browser.evaluate("document.querySelectorAll('svg polyline').length", session) == 3  # 2 TPOT, 1 TTFT
        assert browser.evaluate("document.querySelector('svg').getBoundingClientRect().width", session) > 100


def _spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(body))
    return path


def test_exported_folder_passes_the_interactive_profile_with_reports_and_history(tiny_ortgenai, tmp_path, capsys):
    spec = _spec(tmp_path, f"""
        name: tiny-llm
        extends: llm-interactive
        model: {{path: {tiny_ortgenai}}}
        llm: {{prompt_tokens: [8, 32], gen_tokens: [12], warmup: 1}}
        gates:
          decode_tokens_per_s: {{min_tokens_per_s: 50}}
          kv_cache_mb: {{max_mb: 1}}
          energy_per_token: {{max_mj: 100000}}
          memory: {{max_mb: 100000, basis: process}}
        """)
    db = tmp_path / "h.sqlite3"
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "out"), "--history-db", str(db), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, [g["detail"] for d in out["devices"] for g in d["gates"]]
    (dev,) = out["devices"]
    assert dev["bench"] is None and dev["llm"]["kind"] == "llm_bench" and out["model"]["kind"] == "llm"
    assert [g["gate"] for g in dev["gates"]] == ["memory", "ttft_ms", "tpot_ms", "decode_tokens_per_s", "kv_cache_mb",
                                                 "energy_per_token"]
    assert dev["llm"]["workload"]["repetitions"] == 100  # TTFT p99 from the profile needs 100 repetitions
    assert dev["llm"]["cells"][0]["samples"] is None  # raw readings stay in result.json and the history
    saved = json.loads((tmp_path / "out" / "result.json").read_text())
    assert len(saved["devices"][0]["llm"]["cells"][0]["samples"]["ttft_ms"]) == 100
    energy = next(g for g in dev["gates"] if g["gate"] == "energy_per_token")
    assert energy["estimate"] and energy["detail"].startswith("ESTIMATE")  # no power sensor on this host
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'aria-label="TPOT over the generation"' in html and 'aria-label="TTFT vs prompt length"' in html
    _renders_offline(tmp_path / "out" / "report.html", tmp_path)
    suite = ET.parse(tmp_path / "out" / "junit.xml").getroot().find("testsuite")
    assert suite.get("tests") == "6" and suite.get("failures") == "0"
    assert "TTFT p50" in (tmp_path / "out" / "summary.md").read_text()
    (run,) = HistoryStore(db).runs()
    assert run.kind == "qualify" and run.verdict == "pass" and run.id == dev["history_run_id"]
    assert HistoryStore(db).llm_result(run.id).cells[0].samples is not None


@pytest.mark.slow  # the LLM recipe export: ~30 s on 2 cores
def test_recipe_export_then_gates_that_fail_and_retention_against_the_fp32_export(tiny_ortgenai, tmp_path):
    """The int4 export fails an impossible TPOT gate; its retention is measured on held-out text against the FP32
    export of the same runtime (built once): a 0.9 floor passes or fails on that number, 1.01 always fails."""
    pytest.importorskip("torch", reason="the zoo LLM is built with torch")
    from edgeopt.llm.recipe import load_llm_recipe

    shipped = load_llm_recipe("int4")[0]
    recipe = tmp_path / "int4-ort.yaml"
    recipe.write_text(json.dumps({"name": "int4-ort", "description": "int4, onnxruntime-genai only",
                                  "onnxruntime_genai": shipped.block("onnxruntime_genai").model_dump()}))
    spec = _spec(tmp_path, """
        name: tiny-llm-recipe
        model: {zoo: tiny-llama}
        recipe: int4-ort.yaml
        llm: {prompt_tokens: [8], gen_tokens: [6], repetitions: 3, warmup: 0, eval: held-out.txt}
        measure: {energy: false}
        gates:
          tpot_ms: {percentile: p50, max_ms: 0.000001}
          retention: {min_ratio: 1.01}
        """)
    import json as json_pkg

    (tmp_path / "held-out.txt").write_text(Path(json_pkg.__file__).read_text(encoding="utf-8"), encoding="utf-8")
    result = qualify(spec, report_dir=tmp_path / "out", record=False)
    assert result.exit_code == 1 and not result.passed
    rows = {g.gate: g for g in result.devices[0].gates}
    assert rows["tpot_ms"].status.value == "fail" and rows["tpot_ms"].measured > 0.000001
    ret = result.retention["local"]
    assert ret.retention is not None and 0 < ret.retention < 1 and ret.samples > 0  # int4 of random weights
    assert "onnxruntime_genai" in ret.evaluated_on and "fp32-onnxruntime_genai" in ret.reference_path
    assert "perplexity" in ret.notes[0] and "mean KL" in ret.notes[0]
    assert rows["retention"].status.value == "fail" and rows["retention"].measured == pytest.approx(ret.retention)
    assert result.model.source == "recipe" and "onnxruntime_genai" in result.model.qualified["local"]
    assert result.devices[0].llm.model_format == "onnxruntime_genai"


def test_an_openvino_genai_folder_is_qualified_by_its_runtime(tiny_ovgenai, tmp_path):
    spec = _spec(tmp_path, f"""
        name: tiny-ov
        model: {{path: {tiny_ovgenai}}}
        llm: {{runtime: openvino_genai, prompt_tokens: [8], gen_tokens: [12], repetitions: 10, warmup: 1}}
        measure: {{energy: false}}
        gates:
          tpot_ms: {{percentile: p90, max_ms: 1000}}
          decode_tokens_per_s: {{min_tokens_per_s: 1}}
        """)
    result = qualify(spec, report_dir=tmp_path / "out", record=False)
    (dev,) = result.devices
    assert result.exit_code == 0, [g.detail for g in dev.gates]
    assert dev.llm.runtime["name"] == "openvino_genai" and dev.llm.cells[0].tokens_out == 12
    wrong = _spec(tmp_path, f"""
        name: tiny-ov
        model: {{path: {tiny_ovgenai}}}
        llm: {{runtime: onnxruntime_genai}}
        gates: {{tpot_ms: {{max_ms: 1000}}}}
        """)
    with pytest.raises(Exception, match="is an openvino_genai folder, not onnxruntime_genai"):
        qualify(wrong, report_dir=tmp_path / "out2", record=False)
