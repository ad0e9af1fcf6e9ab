"""Issue 30's proof for a generative runtime: a plug-in written to a temp directory (``genplug``: its descriptor
with levels as data, its exporter, its format and its agent runtime; tests/plugin_kit/) joins ``optimize``,
``bench``, the sweep (levels, retention, ranking, the shipped deployment, which ``bench`` then runs as a
deployment) and ``qualify`` with no edit to edgeopt. Real CLI calls, the real agent as the local runner's
subprocess, onnxruntime-genai under the plug-in's name."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from tests.plugin_kit import generative_plugin

pytestmark = pytest.mark.heavy  # LLM exports or a device's pip install: make test-heavy (in CI)

SMALL = ["--prompt-tokens", "8", "--gen-tokens", "12", "--repetitions", "10", "--gen-warmup", "0", "--no-kv-probe",
         "--no-energy", "--no-history"]


@pytest.fixture()
def genplug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The plug-in on the plugin path. Its exporter's shelf holds the zoo tiny-llama's onnxruntime-genai fp32 and
    int4-b32-rtn levels from the suite's cache (tests/llm_models.py, shared with the retention and LLM sweep
    tests): the very builder exports of the plug-in's two levels (same source digest, same settings), so the three
    exports the test asks for (optimize's int4, the sweep's int4 and fp32 levels) are copies. edgeopt still calls
    the plug-in's exporter for every one (plugin_kit.generative.GENERATIVE_HOST); the builder itself runs in those
    levels' builds and in test_llm_zoo_optimize.py."""
    for module in ("onnxruntime_genai", "torch", "transformers", "tokenizers"):
        pytest.importorskip(module, reason=f"the generative plug-in test needs {module} (pip install "
                                           "'edgeopt[llm,torch]')")
    from tests.llm_models import tiny_llama_levels

    root = generative_plugin(tmp_path / "plugin")
    shelf = tiny_llama_levels(tmp_path / "shelf", ("onnxruntime_genai", "fp32"),
                              ("onnxruntime_genai", "int4-b32-rtn"))["levels"]
    monkeypatch.setenv("EDGEOPT_TESTPLUG_GEN_SHELF", str(shelf))
    monkeypatch.setattr(sys, "path", list(sys.path))  # restored afterwards: later tests do not see the plug-in
    monkeypatch.setenv("EDGEOPT_PLUGIN_PATH", str(root))
    os.environ["HF_HUB_OFFLINE"] = "1"
    return root


def test_a_generative_runtime_plug_in_joins_optimize_bench_sweep_and_qualify(genplug, tiny_llama_fp32, tmp_path,
                                                                              capsys):
    src = tiny_llama_fp32["src"]
    recipe = tmp_path / "gp-int4.yaml"  # a recipe block keyed by the plug-in's name
    recipe.write_text("name: gp-int4\ndescription: int4 for the genplug runtime\n"
                      "genplug: {precision: int4, block_size: 32, algo: rtn}\n")
    assert main(["optimize", str(src), "--target", "local", "--recipe", str(recipe), "--out", str(tmp_path / "opt"),
                 "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    (art,) = manifest["artifacts"]
    folder = Path(art["path"])
    assert art["format"] == "genplug" and art["pass_name"] == "genplug_export" and (folder / "genplug.json").is_file()

    assert main(["bench", str(folder), *SMALL, "--json"]) == 0
    bench = json.loads(capsys.readouterr().out)
    assert bench["runtime"]["name"] == "genplug" and bench["model_format"] == "genplug" and bench["valid"]

    text = tmp_path / "heldout.txt"
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts

    text.write_text("\n".join(split_texts(corpus_texts())[1])[:8000], encoding="utf-8")
    code = main(["sweep", str(src), "--eval", str(text), "--runtimes", "genplug", "--min-retention", "0.1",
                 "--eval-limit", "2", "--out", str(tmp_path / "sweep"), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    sweep = json.loads(captured.out)
    assert {(lv["name"], lv["runtime"]) for lv in sweep["levels"]} == {("int4-b32-rtn", "genplug"), ("fp32", "genplug")}
    rec = sweep["recommendation"]
    assert rec["runtime"] == "genplug"
    shipped = Path(rec["deployment"])
    deployment = json.loads((shipped / "deployment.json").read_text())
    assert deployment["model"] == "genplug.json" and deployment["format"] == "genplug"
    assert rec["shipped_check"]["passed"] is True  # re-scored from its files alone (issue 30)
    assert main(["bench", str(shipped), *SMALL, "--json"]) == 0  # the deployment runs, its hashes checked
    assert json.loads(capsys.readouterr().out)["deployment"]["name"] == deployment["name"]

    spec = tmp_path / "q.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: genplug-qualify
        model: {{path: {folder}}}
        llm: {{runtime: genplug, prompt_tokens: [8], gen_tokens: [12], repetitions: 10, warmup: 0}}
        gates:
          tpot_ms: {{max_ms: 10000}}
        """))
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "q"), "--no-history", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, [g["detail"] for d in out["devices"] for g in d["gates"]]
    assert out["devices"][0]["llm"]["runtime"]["name"] == "genplug"
