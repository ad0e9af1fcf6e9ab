"""``sweep LLM_DIR --devices``: the zoo's random-weight tiny-llama swept on a lab of real loopback sshd devices.

The levels (onnxruntime-genai) are built once on the host; each device scores them against its own FP32 reference
and benches them; each gets its recommendation as a deployment naming it, re-scored on that device from its files
alone (the shipped check). A device whose Python lacks the runtime
is its own error row, and the other still gets its answer. The fp32 export is made once per session (~12 s,
``tiny_llama_fp32``) and copied into each test's output, where the host side finds it built (same stamp); the
first test adds int8.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

pytest.importorskip("onnxruntime_genai", reason="the LLM sweep tests need onnxruntime-genai (edgeopt[llm])")
pytest.importorskip("torch", reason="the zoo LLM is built with torch (pip install 'edgeopt[llm,torch]')")

from edgeopt.cli.main import main  # noqa: E402
from edgeopt.deploy import load_deployment  # noqa: E402
from edgeopt.history import HistoryStore  # noqa: E402
from edgeopt.llm.cli.fleet_sweep import render_llm_fleet_sweep  # noqa: E402
from edgeopt.llm.retention import RetentionSettings  # noqa: E402
from edgeopt.llm.sweep_fleet import fleet_llm_sweep  # noqa: E402
from edgeopt.llm.sweep_options import LlmSweepOptions  # noqa: E402

pytestmark = pytest.mark.heavy  # LLM exports or a device's pip install: make test-heavy (in CI)

TEXT = "import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 40
FAST = RetentionSettings(window=16, windows=2, prompts=1, prompt_tokens=4, gen_tokens=4)
NO_RUNTIME_PYTHON = "/usr/bin/python3"  # the system Python: no numpy, no onnxruntime-genai


@pytest.fixture(scope="module")
def zoo(tiny_llama_fp32: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tiny-llama, its fp32 onnxruntime-genai level (built once per session), and a held-out text."""
    text = tmp_path_factory.mktemp("llm-fleet") / "heldout.txt"
    text.write_text(TEXT)
    return {**tiny_llama_fp32, "text": text}


def _out(zoo: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "fleet"
    shutil.copytree(zoo["levels"], out / "host" / "levels")
    return out


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 2) as running:
        yield running


def test_llm_fleet_sweep_one_recommendation_per_device(lab: Lab, zoo, tmp_path, capsys):
    out, db = _out(zoo, tmp_path), tmp_path / "h.sqlite3"
    code = main(["sweep", str(zoo["src"]), "--eval", str(zoo["text"]), "--levels", "int8", "--runtimes",
                 "onnxruntime_genai", "--min-retention", "0.5", "--eval-limit", "2", "--devices", "tag:lab",
                 "--inventory", str(lab.inventory), "--known-hosts", str(lab.known_hosts), "--out", str(out),
                 "--history-db", str(db), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "llm_fleet_sweep" and doc["exit_code"] == code == 0, [r["error"] for r in doc["rows"]]
    rows = {r["device"]: r for r in doc["rows"]}
    assert list(rows) == ["lab-00", "lab-01"]
    for name, row in rows.items():
        assert row["status"] == "ok" and row["result"]["runner"] == f"ssh:root@127.0.0.1:{lab[name].port}"
        levels = {(lv["name"], lv["runtime"]) for lv in row["result"]["levels"]}
        assert levels == {("fp32", "onnxruntime_genai"), ("int8", "onnxruntime_genai")}
        # fp32 found built, int8 exported once here for both devices (then uploaded to each device's cache)
        assert {lv["name"]: lv["reused"] for lv in row["result"]["levels"]} == {"fp32": True, "int8": False}
        assert {lv["folder"] for lv in row["result"]["levels"]} == {
            str(out / "host" / "levels" / "onnxruntime_genai" / lv) for lv in ("fp32", "int8")}
        assert row["recommendation"] is not None and row["result"]["recommendation"]["deployment"] == str(
            out / "devices" / name / "recommended")
        dep, _ = load_deployment(out / "devices" / name / "recommended")
        assert dep.measured.device == name and dep.runtime == "onnxruntime_genai"
        # the shipped folder re-scored from its files alone on that device, against its own FP32 reference
        check = row["result"]["recommendation"]["shipped_check"]
        assert dep.shipped_check is not None and dep.shipped_check.passed and check["passed"] is True, check
        assert check == dep.shipped_check.model_dump(mode="json") and dep.shipped_check.files == dep.files
        assert not any("shipped check" in w for w in row["result"]["warnings"]), row["result"]["warnings"]
        # ... there: the staged folder, deployment.json and all, went into that device's own cache to be scored
        cached = [json.loads(p.read_text()) for p in (lab[name].workdir / "cache").rglob("deployment.json")]
        assert [(d["name"], d["measured"]["device"]) for d in cached] == [(dep.name, name)]
        assert json.loads((out / "devices" / name / "sweep.json").read_text())["kind"] == "llm_sweep"
        # the agent loaded the levels from that device's own cache
        assert list((lab[name].workdir / "cache").rglob("genai_config.json"))
    summary = doc["summary"]
    assert summary["ok"] == 2 and summary["failed"] == [] and len(summary["levels"]) == 2
    assert {s["devices"] for s in summary["levels"]} == {2}
    assert json.loads((out / "fleet-sweep.json").read_text())["rows"][0]["device"] == "lab-00"
    # every device's levels in the history, grouped by the fleet run, named by the device
    runs = HistoryStore(db).runs(kind="sweep")
    assert {r.group_id for r in runs} == {doc["fleet_id"]} and len(runs) == 4
    for name, row in rows.items():
        mine = sorted(r.id for r in runs if r.device == name)
        assert mine == sorted(row["history_run_ids"]) == sorted(row["result"]["history_run_ids"])
        assert {r.label.split(" ")[0] for r in runs if r.device == name} == {
            "fp32@onnxruntime_genai", "int8@onnxruntime_genai"}
        assert {r.model_path for r in runs if r.device == name} == {lv["folder"] for lv in row["result"]["levels"]}


def test_a_device_without_the_runtime_is_its_row_and_the_other_still_ships(lab: Lab, zoo, tmp_path, capsys):
    lab["lab-01"].python = NO_RUNTIME_PYTHON
    lab.write_inventory()
    out = _out(zoo, tmp_path)
    stale = out / "devices" / "lab-01" / "recommended"
    stale.mkdir(parents=True)  # an earlier run's answer must not outlive this run's error
    not_a_db = tmp_path / "h.sqlite3"
    not_a_db.write_text("no SQLite file\n" * 100)  # a history that cannot be written: a warning, not an error
    opts = LlmSweepOptions(eval_text=zoo["text"], min_retention=0.5, levels=["fp32"],
                           runtimes=["onnxruntime_genai"], out_dir=out, retention=FAST, history_db=not_a_db)
    result = fleet_llm_sweep(zoo["src"], opts, devices="tag:lab", inventory=lab.inventory,
                             known_hosts=lab.known_hosts)
    ok, broken = result.rows
    assert broken.device == "lab-01" and broken.status == "error" and broken.result is None
    assert broken.error_kind == "dependency" and broken.recommendation is None, broken.error
    assert not stale.exists() and not (out / "devices" / "lab-01" / "sweep.json").exists()
    assert ok.status == "ok" and ok.result is not None and ok.recommendation is not None
    shipped = load_deployment(out / "devices" / "lab-00" / "recommended")[0]
    assert shipped.measured.device == "lab-00" and shipped.shipped_check is not None and shipped.shipped_check.passed
    assert result.summary.failed == ["lab-01"] and result.exit_code == 1  # one device could not run
    (warning,) = [w for w in result.warnings if "history" in w]
    assert warning.startswith("lab-00: levels not recorded in the history: ") and str(not_a_db) in warning
    assert ok.history_run_ids == [] and any(w.startswith("levels not recorded") for w in ok.result.warnings)
    render_llm_fleet_sweep(result)
    shown = capsys.readouterr().out
    assert "fp32@onnxruntime_genai" in shown and "dependency" in shown and "could not run: lab-01" in shown
