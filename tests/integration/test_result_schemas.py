"""The JSON shape of a bench, a sweep (with its INT8 search) and a qualify result is pinned.

``tests/data/result_schemas.json`` holds the recursive key paths (and JSON types) of each result. It was made from
the code before the runner/settings redesign (issue 11), which had to produce the same paths, and regenerated for the
intended additions since (issue 14: ``runtime.static_shapes``, ``metric_params``, the qualify spec's metric
parameters). Regenerate (only for an intended schema change): ``python -m tests.integration.test_result_schemas``.
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.integration.shared_runs import Int8Search, digits_int8_search
from tests.schema_keys import key_types

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "result_schemas.json"


def bench_docs(work: Path) -> dict[str, Any]:
    """A budgeted bench with samples, and a frame-paced one, of the zoo's mobilenet-tiny."""
    import edgeopt
    from edgeopt.zoo.registry import build

    model = build("mobilenet-tiny", work / "mobilenet-tiny.onnx")
    kw: dict[str, Any] = {"iterations": 20, "min_duration_s": 0.05, "warmup": 1}
    timed = edgeopt.benchmark(model, fps=30, keep_samples=True, **kw)
    paced = edgeopt.benchmark(model, pacing_fps=400, use_target_fps=False, energy=False, **kw)
    return {"bench": timed.model_dump(mode="json"), "bench_paced": paced.model_dump(mode="json")}


def sweep_doc(work: Path, search: Int8Search | None = None) -> dict[str, Any]:
    """A sweep whose INT8 misses the threshold, so the accuracy-aware search runs; read back from sweep.json.

    The test passes the session's run (``digits_int8_search``, shared with ``test_sweep.py``); the snapshot
    regeneration below runs it here."""
    if search is None:
        from tests.digits_model import build_digits

        search = digits_int8_search(*build_digits(work), work / "sweep")
    return {"sweep": json.loads((search.out_dir / "sweep.json").read_text())}


def qualify_doc(work: Path) -> dict[str, Any]:
    """A qualify run with every gate kind on the local target; read back from result.json."""
    import edgeopt

    spec = work / "schema.yaml"
    spec.write_text(textwrap.dedent("""
        name: schema
        model: {zoo: mobilenet-tiny}
        recipe: fp16
        targets:
          - target: local
        measure: {iterations: 50, min_duration_s: 0, warmup: 2}
        gates:
          latency: {percentile: p90, max_ms: 10000}
          fps: {fps: 1, percentile: p50}
          deadline_miss: {fps: 400, max_pct: 100, frames: 20}
          memory: {max_mb: 4096}
          model_size: {max_mb: 50}
          retention: {min_ratio: 0.5}
          energy: {max_mj: 100000}
          cold_start: {max_ms: 100000}
          throughput: {min_ips: 0.001}
          regression: {baseline: schema-base, if_missing: pass}
    """).lstrip())
    edgeopt.qualify(spec, report_dir=work / "report", history_db=work / "h.sqlite3")
    return {"qualify": json.loads((work / "report" / "result.json").read_text())}


def llm_bench_doc(work: Path) -> dict[str, Any]:
    """``bench LLM_FOLDER`` of the tiny int4 onnxruntime-genai Llama (tests/llm_models.py), two cells."""
    from edgeopt.bench.llm import LlmWorkload, bench_llm
    from tests.llm_models import shared_ortgenai

    folder = shared_ortgenai(work / "llm")
    result = bench_llm(folder, LlmWorkload(prompt_tokens=(8, 16), gen_tokens=(4,), repetitions=2, warmup=0))
    return {"llm_bench": result.model_dump(mode="json")}


def llm_sweep_doc(work: Path) -> dict[str, Any]:
    """``sweep LLM_DIR`` of the zoo's tiny-llama, one int4 level on onnxruntime-genai (checked in
    tests/integration/llm/test_llm_sweep.py, which runs the same sweep)."""
    from edgeopt.llm.retention import RetentionSettings
    from edgeopt.llm.sweep import LlmSweepOptions, run_llm_sweep
    from edgeopt.zoo import build

    src = build("tiny-llama", work / "tiny-llama")
    text = work / "heldout.txt"
    text.write_text("def f(x):\n    return x + 1\n" * 200, encoding="utf-8")
    opts = LlmSweepOptions(eval_text=text, min_retention=0.2, levels=["int4-b32-rtn"], runtimes=["onnxruntime_genai"],
                           out_dir=work / "llm-sweep", retention=RetentionSettings(window=32, windows=2))
    return {"llm_sweep": run_llm_sweep(src, opts).model_dump(mode="json")}


# Pinned here, checked by their own tests (they need onnxruntime-genai): llm_bench below, llm_sweep in
# tests/integration/llm/test_llm_sweep.py.
LLM_DOCS = ("llm_bench", "llm_sweep")


def shapes(work: Path, search: Int8Search | None = None) -> dict[str, dict[str, list[str]]]:
    docs = {**bench_docs(work), **sweep_doc(work, search), **qualify_doc(work)}
    return {name: key_types(doc) for name, doc in docs.items()}


def _under_null(path: str, now: dict[str, list[str]]) -> bool:
    """Whether an ancestor of ``path`` is an optional object that is null in this run (e.g. the sweep's
    ``ranking`` when no ranking rounds were needed, which depends on how close the levels measured)."""
    parts = path.replace("[]", "").split(".")
    return any(now.get(".".join(parts[:i])) == ["null"] for i in range(1, len(parts)))


def _diff(before: dict[str, list[str]], now: dict[str, list[str]]) -> list[str]:
    problems = [f"missing {p}" for p in sorted(set(before) - set(now)) if not _under_null(p, now)]
    problems += [f"new {p}" for p in sorted(set(now) - set(before))]
    for path in sorted(set(before) & set(now)):
        was, got = set(before[path]) - {"null"}, set(now[path]) - {"null"}
        if was and got and not got <= was:
            problems.append(f"{path}: JSON type {sorted(got)}, was {sorted(was)}")
    return problems


def test_bench_sweep_and_qualify_results_keep_their_keys(tmp_path: Path, digits_int8_search: Int8Search) -> None:
    pytest.importorskip("sklearn", reason="the sweep's digits model needs scikit-learn")
    pinned = {name: {path: types.split("|") for path, types in paths.items()}
              for name, paths in json.loads(SNAPSHOT.read_text()).items()}
    now = shapes(tmp_path, digits_int8_search)
    assert set(now) == set(pinned) - set(LLM_DOCS)
    problems = {name: _diff(pinned[name], now[name]) for name in now}
    assert not any(problems.values()), problems


def test_llm_bench_result_keeps_its_keys(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime_genai", reason="pip install onnxruntime-genai to check the LLM bench result")
    pytest.importorskip("transformers", reason="transformers builds the tiny Llama")
    pinned = {path: types.split("|") for path, types in json.loads(SNAPSHOT.read_text())["llm_bench"].items()}
    now = key_types(llm_bench_doc(tmp_path)["llm_bench"])
    assert not _diff(pinned, now), _diff(pinned, now)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="edgeopt-schema-") as tmp:
        llm = {**llm_bench_doc(Path(tmp)), **llm_sweep_doc(Path(tmp))}
        docs = {**shapes(Path(tmp)), **{k: key_types(v) for k, v in llm.items()}}
    lines = [f"  {json.dumps(name)}: {{\n" + ",\n".join(f"    {json.dumps(p)}: {json.dumps('|'.join(t))}"
                                                      for p, t in paths.items()) + "\n  }"
             for name, paths in sorted(docs.items())]
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {SNAPSHOT}")
