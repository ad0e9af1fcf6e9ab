"""llama.cpp over SSH: a single ``.gguf`` file travels to the device cache (stored as ``model.gguf``, keyed by its
content) and the same agent's ``llama_cpp`` runtime generates and scores there; the results have the local shape
and the scores the local numbers. One F32 GGUF of the zoo's tiny-llama, made by llama.cpp's converter once per
checkout and edgeopt source (tests/llm_models.py's cache, shared with tests/integration/llm/test_llm_llamacpp.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.heavy  # LLM exports or a device's pip install: make test-heavy (in CI)

for _module in ("llama_cpp", "torch", "transformers", "tokenizers", "sentencepiece"):
    pytest.importorskip(_module, reason=f"the llama.cpp tests need {_module} (pip install 'edgeopt[llamacpp,llm,torch]'"
                                        "; llama-cpp-python compiles llama.cpp, ~15 min on 2 cores)")

TEXT = "import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 20


@pytest.fixture(scope="module")
def f32_gguf(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The F32 GGUF (llama_cpp's fp32 sweep level: the converter's ``F32`` type), as a folder and a lone file."""
    from tests.llm_models import tiny_llama_levels

    root = tmp_path_factory.mktemp("ssh-gguf")
    folder = tiny_llama_levels(root, ("llama_cpp", "fp32"))["levels"] / "llama_cpp" / "fp32"
    single = root / "tiny-f32.gguf"
    shutil.copyfile(folder / "model.gguf", single)
    return {"folder": folder, "file": single}


def test_a_gguf_file_benches_over_ssh_from_the_device_cache(shared_device, f32_gguf):
    from edgeopt.bench.llm import LlmWorkload, bench_llm

    work = LlmWorkload(prompt_tokens=(8,), gen_tokens=(6,), threads=(1,), repetitions=2, warmup=0)
    remote = bench_llm(f32_gguf["file"], work, runner=shared_device.runner())
    local = bench_llm(f32_gguf["file"], work)
    assert remote.runner.startswith("ssh:root@127.0.0.1:") and remote.runtime["name"] == "llama_cpp"
    (cell,) = remote.cells
    assert cell.tokens_out == 6 and cell.ttft_ms_p50 > 0 and cell.tpot_ms_p50 > 0
    assert cell.kv_cache_bytes == local.cells[0].kv_cache_bytes and remote.model == local.model
    assert set(remote.model_dump()) == set(local.model_dump())
    assert remote.runtime["model_file"].startswith(str(shared_device.workdir / "cache"))
    assert Path(remote.runtime["model_file"]).name == "model.gguf"  # a lone file is cached under a fixed name


def test_gguf_retention_over_ssh_matches_local(shared_device, f32_gguf, tmp_path):
    from edgeopt.llm.retention import RetentionSettings, llm_retention

    text = tmp_path / "heldout.txt"
    text.write_text(TEXT)
    settings = RetentionSettings(window=16, windows=2, prompts=1, prompt_tokens=4, gen_tokens=4, threads=1)
    folder = f32_gguf["folder"]
    remote = llm_retention(folder, folder, text, settings=settings, runner=shared_device.runner())
    local = llm_retention(folder, folder, text, settings=settings)
    assert remote.retention == 1.0 and remote.positions == 2 * 15
    assert remote.model_dump() == local.model_dump()
