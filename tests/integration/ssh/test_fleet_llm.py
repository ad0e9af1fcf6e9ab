"""``bench LLM_FOLDER --devices``: a tiny int4 onnxruntime-genai Llama on a fleet of loopback sshd devices, one
switched off; each device's row, the unreachable one's error, the history record per device, exit codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from edgeopt.history import HistoryStore
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason
from tests.llm_models import tiny_ortgenai  # noqa: F401


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 2, unreachable=["lab-off"]) as running:
        yield running


def test_llm_folder_on_a_fleet_one_row_per_device(lab: Lab, tiny_ortgenai: Path, tmp_path: Path, capsys):  # noqa: F811
    db = tmp_path / "h.sqlite3"
    base = ["bench", str(tiny_ortgenai), "--prompt-tokens", "8", "--gen-tokens", "12", "--repetitions", "10",
            "--gen-warmup", "0", "--inventory", str(lab.inventory), "--known-hosts", str(lab.known_hosts),
            "--history-db", str(db), "--json"]
    code = main([*base, "--devices", "tag:lab,lab-off", "--jobs", "2"])
    out = json.loads(capsys.readouterr().out)
    rows = {r["device"]: r for r in out["rows"]}
    assert out["kind"] == "llm_fleet_bench" and list(rows) == ["lab-00", "lab-01", "lab-off"]
    for name in ("lab-00", "lab-01"):
        r = rows[name]
        assert r["status"] == "ok" and r["result"]["runner"] == f"ssh:root@127.0.0.1:{lab[name].port}", r
        (cell,) = r["result"]["cells"]
        assert cell["tokens_out"] == 12 and cell["ttft_ms_p50"] > 0 and cell["samples"] is None
    assert rows["lab-off"]["error_kind"] == "unreachable"
    assert code == 1 and out["exit_code"] == 1  # one device could not run: the others' rows stand
    runs = HistoryStore(db).runs()
    assert sorted(r.device for r in runs) == ["lab-00", "lab-01"] and len({r.group_id for r in runs}) == 1
    code = main([*base, "--devices", "lab-00"])
    assert code == 0 and json.loads(capsys.readouterr().out)["rows"][0]["result"]["valid"]


def test_llm_spec_qualified_on_fleet_devices_each_judged(lab: Lab, tiny_ortgenai: Path, tmp_path: Path,  # noqa: F811
                                                         capsys):
    spec = tmp_path / "q.yaml"
    spec.write_text(f"""
name: llm-fleet
model: {{path: {tiny_ortgenai}}}
inventory: {lab.inventory}
targets:
  - {{devices: "tag:lab,lab-off", known_hosts: {lab.known_hosts}}}
llm: {{prompt_tokens: [8], gen_tokens: [12], warmup: 0}}
measure: {{energy: false}}
gates:
  tpot_ms: {{percentile: p90, max_ms: 1000}}
  kv_cache_mb: {{max_mb: 1}}
""")
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history", "--json"])
    out = json.loads(capsys.readouterr().out)
    devices = {d["label"]: d for d in out["devices"]}
    assert list(devices) == ["lab-00", "lab-01", "lab-off"]
    for name in ("lab-00", "lab-01"):
        d = devices[name]
        assert d["passed"] and d["llm"]["runner"] == f"ssh:root@127.0.0.1:{lab[name].port}", d["error"]
        assert [g["status"] for g in d["gates"]] == ["pass", "pass"]
    off = devices["lab-off"]
    assert off["status"] == "error" and {g["status"] for g in off["gates"]} == {"error"}
    assert code == 1 and "lab-off" in " ".join(out["warnings"])  # one dead board: its gates are errors
