"""The LLM sweep (edgeopt.llm.sweep) on the zoo's tiny-llama: levels scored against their runtime's FP32 export
(retention: test_llm_retention.py), ranked, the recommendation shipped as a deployment and re-checked from its files,
that deployment benched and qualified, two sweeps back to back, the public API."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime_genai", reason="the LLM sweep tests need onnxruntime-genai (edgeopt[llm])")
pytest.importorskip("torch", reason="the zoo LLM is built with torch (pip install 'edgeopt[llm,torch]')")
pytest.importorskip("transformers", reason="the zoo LLM needs transformers (pip install 'edgeopt[llm]')")

from edgeopt.deploy import load_deployment  # noqa: E402
from edgeopt.deploy.io import DeploymentError  # noqa: E402
from edgeopt.errors import InputError  # noqa: E402
from edgeopt.llm.retention import llm_retention, score_folder  # noqa: E402
from edgeopt.llm.sweep import LlmSweepOptions, run_llm_sweep  # noqa: E402
from edgeopt.llm.sweep_check import LlmShipCheck, check_llm_shipped  # noqa: E402
from edgeopt.llm.sweep_rank import recommend_llm  # noqa: E402
from edgeopt.llm.sweep_result import LlmSweepResult  # noqa: E402
from edgeopt.llm.sweep_rounds import TOKENS_PER_ROUND, generations  # noqa: E402
from edgeopt.llm.sweep_ship import ship_llm  # noqa: E402
from edgeopt.runners import LocalRunner  # noqa: E402
from edgeopt.sweep.rank.decide import MAX_EXTRA_ROUNDS  # noqa: E402
from tests.integration.llm.zoo_levels import FAST  # noqa: E402


def _ort_options(out: Path, text: Path) -> LlmSweepOptions:
    return LlmSweepOptions(eval_text=text, min_retention=0.2, levels=["int4-b32-rtn"], runtimes=["onnxruntime_genai"],
                           out_dir=out, retention=FAST)


@pytest.fixture(scope="module")
def ort_sweep(zoo, tmp_path_factory) -> tuple[LlmSweepResult, Path]:
    """The onnxruntime-genai sweep of the fixture's levels (built already: scored, benched, shipped, re-checked)
    and a copy of its recommended/ (later sweeps into the same folder replace it)."""
    result = run_llm_sweep(zoo["src"], _ort_options(zoo["sweep"], zoo["text"]))
    assert result.recommendation is not None and result.recommendation.deployment is not None, result.warnings
    copy = tmp_path_factory.mktemp("ort-shipped") / "recommended"
    shutil.copytree(result.recommendation.deployment, copy)
    return result, copy


def test_sweep_onnxruntime_genai_recommends_and_ships_a_deployment(zoo, ort_sweep, tmp_path, capsys):
    """The levels are already built (the fixture's folders, same stamps): the sweep scores, benches, ships."""
    result = ort_sweep[0]
    assert [(lv.name, lv.reused) for lv in result.levels] == [("int4-b32-rtn", True), ("fp32", True)]
    ref = next(lv for lv in result.levels if lv.reference)
    assert ref.retention.retention == 1.0 and ref.passed
    rec = result.recommendation
    assert rec is not None and all(lv.passed for lv in result.levels)  # 0.2: int4 passes too
    # the dominance rule: no passing level is both faster and at least as accurate as the recommendation
    chosen = next(lv for lv in result.levels if (lv.name, lv.runtime) == (rec.name, rec.runtime))
    def speed(lv):  # noqa: ANN001, ANN202 - tokens/s from the ranking rounds (median of round medians)
        return 1000 / float(np.median([np.median(r) for r in lv.rounds_tpot_ms]))

    assert not any(speed(lv) > speed(chosen) * 1.03 and lv.retention.retention > chosen.retention.retention
                   for lv in result.levels if lv is not chosen)
    assert f"{rec.name}@{rec.runtime}" in result.pareto
    # both levels pass: ranked in interleaved rounds with the one-pass sweep's rule (issue 30)
    # (five, and the image ranking's extra rounds while a tie-break overrules a faster-looking level: every level
    # the same number)
    assert len({len(lv.rounds_tpot_ms) for lv in result.levels}) == 1
    assert all(5 <= len(lv.rounds_tpot_ms) <= 5 + MAX_EXTRA_ROUNDS and all(lv.rounds_tpot_ms) for lv in result.levels)
    # each round: whole generations of 16 timed tokens, as many as its bench cell's speed asks for (issue 33)
    counts = [(lv.tpot_ms_p50, [len(r) for r in lv.rounds_tpot_ms]) for lv in result.levels]
    assert all(n == TOKENS_PER_ROUND * generations(tpot) for tpot, ns in counts for n in ns), counts
    assert "interleaved rounds" in rec.reason
    deployment, folder = load_deployment(Path(rec.deployment))  # hashes checked
    assert deployment.format == "onnxruntime_genai" and deployment.model == "genai_config.json"
    assert deployment.recipe == rec.name and (folder / "model.onnx.data").is_file()
    assert deployment.measured.decode_tokens_per_s == rec.decode_tokens_per_s
    assert deployment.measured.retention == rec.retention and not (folder / ".edgeopt-level.json").exists()
    again = llm_retention(folder, zoo["fp32"], zoo["text"], settings=FAST)  # the shipped folder scores the same
    assert again.retention == pytest.approx(rec.retention)
    saved = json.loads((zoo["sweep"] / "sweep.json").read_text())
    assert saved["kind"] == "llm_sweep" and saved["schema_version"] == 1
    assert set(saved) == set(result.model_dump()) and (zoo["sweep"] / "pareto.svg").is_file()
    from tests.integration.test_result_schemas import SNAPSHOT, _diff
    from tests.schema_keys import key_types

    pinned = {path: types.split("|") for path, types in json.loads(SNAPSHOT.read_text())["llm_sweep"].items()}
    assert not _diff(pinned, key_types(saved)), _diff(pinned, key_types(saved))  # docs/result-schema.md
    # issue 30: the LLM deployment records what a one-pass one does, and is re-scored from its files alone
    assert deployment.threads == 0 and deployment.cpu_flags == tuple(chosen.cpu_flags)
    assert "avx2" in chosen.cpu_flags or not os.uname().machine.startswith("x86")
    check = rec.shipped_check
    assert check is not None and check.passed is True and check.note is None and check.tolerance == 0.002
    assert check.retention_measured == rec.retention == chosen.retention.retention
    assert abs(check.retention_as_shipped - rec.retention) <= check.tolerance
    assert check.retention_with_defaults == check.retention_as_shipped and check.defaults_pass  # no runtime options
    assert [(f.path, f.sha256) for f in check.files] == [(f.path, f.sha256) for f in deployment.files]
    assert deployment.shipped_check == check and saved["recommendation"]["shipped_check"]["passed"] is True
    assert saved["recommendation"]["shipped_check"]["retention_as_shipped"] == check.retention_as_shipped
    assert not any("not re-checked" in w or "shipped check" in w for w in result.warnings), result.warnings
    _bench_the_llm_deployment(Path(rec.deployment), tmp_path, capsys)


def test_a_file_edited_after_the_sweep_fails_the_shipped_check(zoo, ort_sweep, tmp_path):
    """As the one-pass sweep's check (and bench of a deployment, exit 2): every file is hash-checked before the
    folder is re-scored, so an edited one is a DeploymentError naming it, and no retention is reported."""
    folder = tmp_path / "recommended"
    shutil.copytree(ort_sweep[1], folder)
    (folder / "genai_config.json").write_text((folder / "genai_config.json").read_text() + " ")
    check = LlmShipCheck(LocalRunner(), {}, zoo["text"].read_text(encoding="utf-8"), FAST)
    with pytest.raises(DeploymentError, match="genai_config.json"):
        check_llm_shipped(folder, "top1", check)


def test_a_shipped_retention_off_the_measured_one_fails_the_check_with_a_warning(zoo, ort_sweep, tmp_path):
    """The sweep's record says the recommended level measured 0.05 less than its files give: the re-check (real
    files, real agent) reports both numbers, passed false, and the one-pass sweep's warning; the folder ships."""
    result = ort_sweep[0]
    rec = result.recommendation
    text = zoo["text"].read_text(encoding="utf-8")
    ref = score_folder(zoo["fp32"], text, FAST, LocalRunner())
    low = rec.retention - 0.05

    def lowered(lv):  # noqa: ANN001, ANN202
        if (lv.name, lv.runtime) != (rec.name, rec.runtime):
            return lv
        return lv.model_copy(update={"retention": lv.retention.model_copy(update={"retention": low})})

    told = result.model_copy(update={"levels": [lowered(lv) for lv in result.levels], "warnings": [],
                                     "recommendation": rec.model_copy(update={"retention": low})})
    out = tmp_path / "out"
    shipped = ship_llm(told, out, check=LlmShipCheck(LocalRunner(), {rec.runtime: ref}, text, FAST))
    check = shipped.recommendation.shipped_check
    assert check is not None and check.passed is False and check.retention_measured == low
    assert check.retention_as_shipped == pytest.approx(rec.retention, abs=check.tolerance)
    assert check.note == f"as shipped {check.retention_as_shipped:.4f} != measured {low:.4f}"
    assert shipped.warnings == [f"recommended {rec.name}/{rec.runtime}: {check.note}"]
    assert load_deployment(out / "recommended")[0].shipped_check == check


def test_two_sweeps_back_to_back_decide_the_same(zoo, ort_sweep, tmp_path):
    """A second sweep, every level measured afresh (the LLM sweep caches no measurement; its levels are reused
    built): the same retention records and verdicts, a passing shipped check, and the same decision on the same
    inputs. (Which of two passing levels decodes faster is a timing fact of the moment, so the recommendation
    itself is compared on the decision's inputs: the second sweep's rows with the first's token times.)"""
    first = ort_sweep[0]
    out = tmp_path / "again"
    shutil.copytree(zoo["sweep"] / "levels", out / "levels")
    # no ranking rounds: their token times would be replaced by the first sweep's below, unread
    second = run_llm_sweep(zoo["src"], dataclasses.replace(_ort_options(out, zoo["text"]), rank_rounds=0))
    assert [(lv.name, lv.retention, lv.passed) for lv in second.levels] == \
        [(lv.name, lv.retention, lv.passed) for lv in first.levels]
    check = second.recommendation.shipped_check
    assert check is not None and check.passed and check.retention_measured == second.recommendation.retention
    timing = ("decode_tokens_per_s", "tpot_ms_p50", "rank_tokens_per_s", "ttft_ms_p50", "rounds_tpot_ms")
    with_first_times = [b.model_copy(update={k: getattr(a, k) for k in timing})
                        for a, b in zip(first.levels, second.levels, strict=True)]
    again, _, _ = recommend_llm(with_first_times, second.min_retention, second.metric)
    want = first.recommendation
    assert again is not None and (again.name, again.runtime, again.retention, again.reason) == \
        (want.name, want.runtime, want.retention, want.reason)


def _bench_the_llm_deployment(shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``bench`` treats an LLM sweep's recommended/ as a deployment (issue 30): its files checked, its settings
    applied, a contradicting flag refused, the deployment in the result."""
    from edgeopt.cli.main import main

    folder = tmp_path / "recommended"
    shutil.copytree(shipped, folder)
    small = ["--prompt-tokens", "8", "--gen-tokens", "12", "--repetitions", "10", "--gen-warmup", "0", "--no-kv-probe",
             "--no-energy", "--no-history"]
    assert main(["bench", str(folder), *small, "--threads", "2"]) == 2  # the deployment says threads 0
    assert "contradicts deployment" in capsys.readouterr().err
    code = main(["bench", str(folder / "deployment.json"), *small, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out.get("cells")
    assert out["kind"] == "llm_bench" and out["deployment"]["path"] == str(folder.resolve())
    assert out["workload"]["threads"] == [0] and out["runtime"]["name"] == "onnxruntime_genai"
    (folder / "genai_config.json").write_text((folder / "genai_config.json").read_text() + " ")
    assert main(["bench", str(folder), *small]) == 2  # a file edited after the sweep
    assert "genai_config.json" in capsys.readouterr().err


def _llm_qualify_spec(tmp_path: Path, model: Path, extra: str = "") -> Path:
    spec = tmp_path / "q.yaml"
    spec.write_text(f"name: llm-dep\nmodel: {{path: {model}}}\nmeasure: {{energy: false}}\n"
                    "llm: {prompt_tokens: [8], gen_tokens: [12], repetitions: 10, warmup: 0}\n"
                    f"gates: {{tpot_ms: {{max_ms: 100000, percentile: p50}}}}\n{extra}")
    return spec


def test_qualify_of_the_llm_deployment_keeps_every_deployment_promise(ort_sweep, tmp_path, capsys):
    """Qualify of an LLM sweep's recommended/ keeps what a one-pass deployment promises (issue 30, item 4): its
    settings applied and its deployment in each device's result, a ``deployment_match`` row per device (another
    runtime version or CPU fails it, in every report), a spec setting that contradicts it refused (exit 2, the spec
    key named), a file edited after the sweep refused with the one-pass path's one line (exit 2)."""
    import edgeopt
    from edgeopt.cli.main import main
    from tests.deployments import edit_deployment

    folder = tmp_path / "recommended"
    shutil.copytree(ort_sweep[1], folder)
    deployment, _ = load_deployment(folder)
    result = edgeopt.qualify(_llm_qualify_spec(tmp_path, folder / "deployment.json"), report_dir=tmp_path / "r",
                             record=False)
    (dev,) = result.devices
    gates = {g.gate: g for g in dev.gates}
    assert result.passed and list(gates) == ["tpot_ms", "deployment_match"], [g.detail for g in dev.gates]
    assert "runtime version and CPU flags as measured" in gates["deployment_match"].detail
    assert dev.llm is not None and dev.llm.deployment is not None and dev.llm.deployment.name == deployment.name
    assert dev.llm.workload.threads == (deployment.threads,) and dev.llm.workload.batch == (deployment.batch,)
    assert dev.llm.runtime["name"] == deployment.runtime and not dev.llm.warnings

    edit_deployment(folder, runtime_version="0.0.1", cpu_flags=("avx2", "not_a_flag_here"))
    failed = edgeopt.qualify(_llm_qualify_spec(tmp_path, folder), report_dir=tmp_path / "r", record=False)
    gate = {g.gate: g for g in failed.devices[0].gates}["deployment_match"]
    assert not failed.passed and failed.exit_code == 1 and gate.status.value == "fail"
    assert "!= 0.0.1 measured" in gate.detail and "not_a_flag_here" in gate.detail
    assert "measured elsewhere" in failed.devices[0].llm.warnings[0]
    assert "deployment_match" in (tmp_path / "r" / "junit.xml").read_text()
    assert "DEPLOYMENT MISMATCH" in (tmp_path / "r" / "summary.md").read_text()

    spec = _llm_qualify_spec(tmp_path, folder)
    spec.write_text(spec.read_text().replace("warmup: 0}", "warmup: 0, threads: [2]}"))
    assert main(["qualify", str(spec), "--report-dir", str(tmp_path / "r2"), "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "llm.threads 2 contradicts deployment" in err and "override_deployment: true" in err
    assert not (tmp_path / "r2" / "result.json").exists()

    (folder / "genai_config.json").write_text((folder / "genai_config.json").read_text() + " ")
    assert main(["qualify", str(_llm_qualify_spec(tmp_path, folder)), "--report-dir", str(tmp_path / "r3"),
                 "--no-history"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "model.path" in err and "genai_config.json" in err
    assert "changed since it was measured" in err


def test_sweep_threshold_nobody_meets_is_exit_1_without_a_deployment(zoo):
    """(Retention is at most 1 on top1: a threshold above it fails every level, the FP32 export included.)"""
    from edgeopt.cli.main import main

    code = main(["sweep", str(zoo["src"]), "--eval", str(zoo["text"]), "--levels", "int4-b32-rtn",
                 "--runtimes", "onnxruntime_genai", "--out", str(zoo["sweep"]), "--min-retention", "1.01",
                 "--eval-limit", "2", "--json"])
    assert code == 1
    saved = json.loads((zoo["sweep"] / "sweep.json").read_text())
    assert saved["recommendation"] is None and "(fp32@onnxruntime_genai) keeps 1.0000" in saved["binding_constraint"]
    assert not (zoo["sweep"] / "recommended").exists()


@pytest.mark.slow
def test_sweep_on_both_runtimes_end_to_end(zoo, tmp_path):
    """Every runtime, an int4 variant each and int8 (~2 min: six exports)."""
    pytest.importorskip("openvino_genai", reason="the OpenVINO GenAI levels need openvino-genai")
    opts = LlmSweepOptions(eval_text=zoo["text"], min_retention=0.5, levels=["int4-b128-rtn", "int4-g128", "int8"],
                           runtimes=["onnxruntime_genai", "openvino_genai"], out_dir=tmp_path / "both",
                           retention=FAST)
    result = run_llm_sweep(zoo["src"], opts)
    keys = {(lv.name, lv.runtime) for lv in result.levels}
    assert keys == {("int4-b128-rtn", "onnxruntime_genai"), ("int8", "onnxruntime_genai"),
                    ("fp32", "onnxruntime_genai"), ("int4-g128", "openvino_genai"), ("int8", "openvino_genai"),
                    ("fp32", "openvino_genai")}
    for lv in result.levels:
        assert lv.rank_tokens_per_s and lv.decode_tokens_per_s and lv.ttft_ms_p50
        assert 0 < lv.retention.retention <= 1.0 + 1e-9
    assert result.recommendation is not None and result.pareto
    load_deployment(Path(result.recommendation.deployment))


def test_sweep_with_calibration_text_adds_the_awq_level_with_its_retention(zoo, tmp_path):
    """(Two OpenVINO conversions, one of them calibrated: ~60 s.) --calib TEXT adds int4-awq on OpenVINO GenAI,
    calibrated on the corpus's training split, scored on the held-out one like every other level."""
    pytest.importorskip("openvino_genai", reason="the OpenVINO GenAI levels need openvino-genai")
    import json as json_mod

    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts

    calib = tmp_path / "calib.txt"
    calib.write_text("\n".join(split_texts(corpus_texts())[0])[:40000], encoding="utf-8")
    said: list[str] = []
    opts = LlmSweepOptions(eval_text=zoo["text"], calib_text=calib, min_retention=0.0, levels=["int4-awq"],
                           runtimes=["openvino_genai"], out_dir=zoo["sweep"], retention=FAST)
    result = run_llm_sweep(zoo["src"], opts, say=said.append)
    rows = {(lv.name, lv.runtime): lv for lv in result.levels}
    assert set(rows) == {("int4-awq", "openvino_genai"), ("fp32", "openvino_genai")}, result.warnings
    awq = rows[("int4-awq", "openvino_genai")]
    assert awq.settings["awq"] and awq.settings["scale_estimation"] and awq.settings["weights"] == "int4_asym"
    assert 0 < awq.retention.retention < 1.0 and awq.retention.kl_mean > 1e-6  # int4: it does lose something
    assert awq.rank_tokens_per_s and awq.ttft_ms_p50
    stamp = json_mod.loads((Path(awq.folder) / ".edgeopt-level.json").read_text())
    assert len(stamp["calib_sha256"]) == 64  # another calibration text rebuilds the level
    assert not any("not tried" in line for line in said)


def test_the_public_sweep_takes_an_llm_folder_through_its_kind(zoo, tmp_path):
    """``edgeopt.sweep`` on an LLM folder runs the LLM sweep (the generative kind's sweep_api entry) with the keywords
    that apply to it; the levels are the fixture's (reused), written to a sweep folder of its own."""
    import edgeopt
    from edgeopt.evaluation import MetricSpec

    out = tmp_path / "api-sweep"
    shutil.copytree(zoo["sweep"] / "levels", out / "levels")  # built already: the sweep reuses them
    events: list[dict] = []
    # 0.999: int4 of random weights misses it, so no ranking rounds (the kind's entry and its keywords are the point)
    result = edgeopt.sweep(zoo["src"], eval=zoo["text"], recipes=["int4-b32-rtn"], runtimes=["onnxruntime_genai"],
                           min_retention=0.999, eval_limit=2, out_dir=out, progress=events.append)
    assert isinstance(result, LlmSweepResult) and Path(result.out_dir) == out
    assert {(lv.name, lv.runtime) for lv in result.levels} == {("int4-b32-rtn", "onnxruntime_genai"),
                                                               ("fp32", "onnxruntime_genai")}
    assert all(lv.reused for lv in result.levels) and result.recommendation is not None
    assert result.recommendation.shipped_check is not None and result.recommendation.shipped_check.passed
    assert json.loads((out / "sweep.json").read_text())["recommendation"]["name"] == result.recommendation.name
    assert any(e.get("event") == "log" for e in events)  # the LLM sweep's lines reach the progress callback
    with pytest.raises(InputError, match="an LLM sweep's metric is a name"):
        edgeopt.sweep(zoo["src"], eval=zoo["text"], metric=MetricSpec(name="top1"), out_dir=tmp_path / "x")
    with pytest.raises(InputError, match="give eval="):
        edgeopt.sweep(zoo["src"])
