"""``bench LLM_FOLDER`` over SSH: the model folder (several files) travels to the device cache and the same
agent's ``generate`` command runs there; the result has the local shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.bench.llm import LlmWorkload, bench_llm
from tests.llm_models import tiny_ortgenai  # noqa: F401


def test_llm_folder_bench_over_ssh_matches_local_shape(shared_device, tiny_ortgenai):  # noqa: F811
    work = LlmWorkload(prompt_tokens=(8,), gen_tokens=(6,), repetitions=2, warmup=0)
    remote = bench_llm(tiny_ortgenai, work, runner=shared_device.runner())
    local = bench_llm(tiny_ortgenai, work)
    assert remote.runner.startswith("ssh:root@127.0.0.1:") and local.runner == "local"
    (cell,) = remote.cells
    assert cell.tokens_out == 6 and cell.ttft_ms_p50 > 0 and cell.tpot_ms_p50 > 0
    assert cell.kv_cache_bytes == local.cells[0].kv_cache_bytes
    assert set(remote.model_dump()) == set(local.model_dump())
    # the folder was uploaded whole into the device cache: the agent loaded it from there
    assert remote.runtime["folder"].startswith(str(shared_device.workdir / "cache"))
    cached = list((shared_device.workdir / "cache").rglob("genai_config.json"))
    assert cached and (cached[0].parent / "model.onnx.data").is_file()


def test_llm_retention_over_ssh_matches_local(shared_device, tiny_ortgenai, tmp_path):  # noqa: F811
    """The eval text travels in the request's eval_npz, the scores come back in eval_output: same numbers."""
    from edgeopt.llm.retention import RetentionSettings, llm_retention

    text = tmp_path / "heldout.txt"
    text.write_text("import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 20)
    settings = RetentionSettings(window=16, windows=2, prompts=1, prompt_tokens=4, gen_tokens=4)
    remote = llm_retention(tiny_ortgenai, tiny_ortgenai, text, settings=settings, runner=shared_device.runner())
    local = llm_retention(tiny_ortgenai, tiny_ortgenai, text, settings=settings)
    assert remote.retention == 1.0 and remote.positions == 2 * 15
    assert remote.model_dump() == local.model_dump()


@pytest.mark.slow
def test_llm_sweep_over_ssh_scores_benches_and_ships(shared_device, tmp_path):
    """The levels are built here, scored and benched on the device (~40 s: two exports)."""
    from edgeopt.deploy import load_deployment
    from edgeopt.llm.retention import RetentionSettings
    from edgeopt.llm.sweep import LlmSweepOptions, run_llm_sweep
    from edgeopt.zoo import build

    pytest.importorskip("torch", reason="the zoo LLM is built with torch")
    src = build("tiny-llama", tmp_path / "tiny-llama")
    text = tmp_path / "heldout.txt"
    text.write_text("import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 40)
    opts = LlmSweepOptions(eval_text=text, min_retention=0.5, levels=["int8"], runtimes=["onnxruntime_genai"],
                           out_dir=tmp_path / "sweep", retention=RetentionSettings(window=16, windows=2))
    result = run_llm_sweep(src, opts, runner=shared_device.runner())
    assert result.runner.startswith("ssh:") and len(result.levels) == 2
    assert result.recommendation is not None
    load_deployment(Path(result.recommendation.deployment))
