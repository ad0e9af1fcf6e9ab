"""Tiny random-weight Llama models for the LLM tests: a Hugging Face folder and its onnxruntime-genai export.

Built offline (``HF_HUB_OFFLINE=1``) with transformers and a byte-level BPE trained with ``tokenizers`` on a few KB
of text from the standard library's docstrings; 2 layers, hidden 64, 4 heads (2 KV heads), vocab 512: seconds to
build, milliseconds per token. Random weights: fine for plumbing and timing tests, meaningless for retention.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

VOCAB = 512
LAYERS = 2
HIDDEN = 64
HEADS = 4
KV_HEADS = 2
MAX_POSITIONS = 1024


def _corpus() -> list[str]:
    import collections
    import json as json_mod
    import pathlib

    text = "\n".join(filter(None, (m.__doc__ for m in (collections, json_mod, pathlib, os))))
    return [line for line in text.splitlines() if line.strip()]


def build_tokenizer(folder: Path) -> None:
    """A byte-level BPE of vocab ``VOCAB`` saved as tokenizer.json + tokenizer_config.json (Llama-style)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(str(folder))


def build_hf_llama(folder: Path, seed: int = 0) -> Path:
    """A random-weight ``LlamaForCausalLM`` with its tokenizer, saved as an HF folder."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    build_tokenizer(folder)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS,
                         num_attention_heads=HEADS, num_key_value_heads=KV_HEADS,
                         max_position_embeddings=MAX_POSITIONS, bos_token_id=0, eos_token_id=1,
                         tie_word_embeddings=False)
    LlamaForCausalLM(config).eval().save_pretrained(str(folder))
    return folder


def build_ortgenai(hf_folder: Path, out: Path, precision: str = "int4") -> Path:
    """Export ``hf_folder`` with onnxruntime-genai's model builder (CPU, ``precision``) into ``out``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import subprocess
    import sys

    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf_folder), "-o", str(out),
           "-p", precision, "-e", "cpu", "-c", str(out.parent / (out.name + ".cache"))]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if done.returncode != 0:
        raise RuntimeError(f"onnxruntime-genai builder failed: {done.stderr[-2000:]}")
    return out


def _ov_llama():  # noqa: ANN202 - a torch module class, built lazily (torch is optional)
    """A Llama-shaped decoder in plain torch with its KV cache as explicit inputs/outputs (what optimum-intel's
    export produces before it makes the cache stateful), so an OpenVINO GenAI folder can be made offline."""
    import torch
    from torch import nn

    head = HIDDEN // HEADS

    class Layer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q, self.o = nn.Linear(HIDDEN, HIDDEN, bias=False), nn.Linear(HIDDEN, HIDDEN, bias=False)
            self.k = nn.Linear(HIDDEN, KV_HEADS * head, bias=False)
            self.v = nn.Linear(HIDDEN, KV_HEADS * head, bias=False)
            self.up, self.down = nn.Linear(HIDDEN, 128), nn.Linear(128, HIDDEN)

        def forward(self, x, pk, pv, mask):  # noqa: ANN001, ANN202
            b, t, _ = x.shape
            q = self.q(x).view(b, t, HEADS, head).transpose(1, 2)
            k = torch.cat([pk, self.k(x).view(b, t, KV_HEADS, head).transpose(1, 2)], 2)
            v = torch.cat([pv, self.v(x).view(b, t, KV_HEADS, head).transpose(1, 2)], 2)
            rep = HEADS // KV_HEADS
            a = nn.functional.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1),
                                                           attn_mask=mask)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, HIDDEN))
            return x + self.down(torch.relu(self.up(x))), k, v

    class Decoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.head = nn.Embedding(VOCAB, HIDDEN), nn.Linear(HIDDEN, VOCAB, bias=False)
            self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])

        def forward(self, input_ids, attention_mask, position_ids, beam_idx, *past):  # noqa: ANN001, ANN002, ANN202
            x, t, total = self.emb(input_ids), input_ids.shape[1], attention_mask.shape[1]
            causal = torch.arange(total).unsqueeze(0) <= torch.arange(t).unsqueeze(1) + (total - t)
            keep = causal[None, None] & attention_mask.bool()[:, None, None, :]
            mask = torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
            outs = []
            for n, layer in enumerate(self.layers):
                x, k, v = layer(x, past[2 * n].index_select(0, beam_idx), past[2 * n + 1].index_select(0, beam_idx),
                                mask)
                outs += [k, v]
            return (self.head(x), *outs)

    return Decoder


def build_ovgenai(hf_folder: Path, out: Path, seed: int = 0) -> Path:
    """An OpenVINO GenAI folder: a stateful ``openvino_model.xml`` (random weights, the tiny shapes) plus
    ``openvino_tokenizer``/``openvino_detokenizer`` converted from ``hf_folder``'s tokenizer."""
    import openvino as ov
    import torch
    from openvino._offline_transformations import apply_make_stateful_transformation
    from openvino_tokenizers import convert_tokenizer
    from transformers import AutoTokenizer

    torch.manual_seed(seed)
    model = _ov_llama()().eval()
    head = HIDDEN // HEADS
    kv_names = [f"{n}.{kind}" for n in range(LAYERS) for kind in ("key", "value")]
    names = ["input_ids", "attention_mask", "position_ids", "beam_idx"] + [f"past_key_values.{k}" for k in kv_names]
    shapes = [[-1, -1], [-1, -1], [-1, -1], [-1]] + [[-1, KV_HEADS, -1, head]] * len(kv_names)
    example = (torch.ones(1, 3, dtype=torch.long), torch.ones(1, 5, dtype=torch.long), torch.arange(2, 5)[None],
               torch.zeros(1, dtype=torch.int32)) + tuple(torch.zeros(1, KV_HEADS, 2, head) for _ in kv_names)
    with torch.no_grad():
        ov_model = ov.convert_model(model, example_input=example, input=[ov.PartialShape(s) for s in shapes])
    for port, name in zip(ov_model.inputs, names, strict=True):
        port.get_tensor().set_names({name})
    for port, name in zip(ov_model.outputs, ["logits"] + [f"present.{k}" for k in kv_names], strict=True):
        port.get_tensor().set_names({name})
    apply_make_stateful_transformation(ov_model, {f"past_key_values.{k}": f"present.{k}" for k in kv_names})
    out.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov_model, str(out / "openvino_model.xml"))
    tok, detok = convert_tokenizer(AutoTokenizer.from_pretrained(str(hf_folder)), with_detokenizer=True)
    ov.save_model(tok, str(out / "openvino_tokenizer.xml"))
    ov.save_model(detok, str(out / "openvino_detokenizer.xml"))
    return out


def config_facts(out: Path) -> dict:
    """The genai_config.json decoder facts (layers, KV heads, head size) the KV-bytes formula uses."""
    dec = json.loads((out / "genai_config.json").read_text())["model"]["decoder"]
    return {"layers": dec["num_hidden_layers"], "kv_heads": dec["num_key_value_heads"], "head_size": dec["head_size"]}


if __name__ == "__main__":
    import sys
    import time

    root = Path(sys.argv[1])
    t = time.time()
    build_hf_llama(root / "hf")
    print("hf", time.time() - t)
    build_ortgenai(root / "hf", root / "ortgenai")
    print("ort", time.time() - t)


def cached_ovgenai(root: Path) -> Path:
    """The tiny OpenVINO GenAI folder under ``root`` (built once)."""
    out = root / "ovgenai"
    if not (out / "openvino_detokenizer.xml").is_file():
        hf = root / "hf"
        if not (hf / "tokenizer.json").is_file():
            hf.mkdir(parents=True, exist_ok=True)
            build_tokenizer(hf)
        build_ovgenai(hf, out)
    return out


def cached_ortgenai(root: Path) -> Path:
    """The tiny int4 onnxruntime-genai folder under ``root`` (built once; a finished build has genai_config.json)."""
    out = root / "ortgenai-int4"
    if not (out / "genai_config.json").is_file():
        build_ortgenai(build_hf_llama(root / "hf"), out, "int4")
    return out


def cache_root() -> Path:
    """The suite's cache: ``$EDGEOPT_TEST_CACHE``, else ``~/.cache/edgeopt-tests``."""
    return Path(os.environ.get("EDGEOPT_TEST_CACHE", Path.home() / ".cache" / "edgeopt-tests"))


def _shared(prefix: str, dists: tuple[str, ...], marker: str, build: Callable[[], Path],
            sources: tuple[Path, ...] = ()) -> Path:
    """``prefix``-KEY under the suite's cache (``$EDGEOPT_TEST_CACHE``, else ``~/.cache/edgeopt-tests``; KEY hashes
    this file, the ``sources`` that make the build and the ``dists`` versions): ``build()`` (a scratch folder) moved
    there atomically the first time, a finished one holding ``marker``; under a lock, so a parallel worker waits for
    the build instead of making its own (were two to build anyway, the first rename wins and the other uses it)."""
    import hashlib
    import shutil
    from importlib.metadata import version

    key = hashlib.sha256(Path(__file__).read_bytes())
    for source in sources:
        key.update(source.read_bytes())
    for dist in dists:
        key.update(version(dist).encode())
    final = cache_root() / f"{prefix}-{key.hexdigest()[:16]}"
    if (final / marker).is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with _locked(final.parent / f"{final.name}.lock"):
        if not (final / marker).is_file():
            built = build()
            try:
                os.replace(built, final)
            except OSError:  # another worker's build is already there
                shutil.rmtree(built, ignore_errors=True)
    return final


def shared_ortgenai(scratch: Path) -> Path:
    """The tiny int4 folder from the suite's cache, built in ``scratch`` the first time (:func:`_shared`)."""
    return _shared("tiny-llm", ("onnxruntime-genai", "transformers", "tokenizers", "torch"), "genai_config.json",
                   lambda: cached_ortgenai(scratch))


def shared_ovgenai(scratch: Path) -> Path:
    """The tiny OpenVINO GenAI folder from the suite's cache, built in ``scratch`` the first time
    (:func:`_shared`)."""
    return _shared("tiny-ov-llm", ("openvino", "openvino-tokenizers", "transformers", "tokenizers", "torch"),
                   "openvino_detokenizer.xml", lambda: cached_ovgenai(scratch))


def build_wide_kv_ov(work: Path) -> Path:
    """A random-weight Llama whose KV cache is wide (8 layers x 4 KV heads x head 64) and the rest small, converted
    to an OpenVINO GenAI folder (fp32) by ``python -m edgeopt.llm.ov_convert``: ``work/ov``."""
    import subprocess
    import sys

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    hf = work / "hf"
    hf.mkdir(parents=True)
    build_tokenizer(hf)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=64, num_hidden_layers=8,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048, bos_token_id=0,
                         eos_token_id=1, tie_word_embeddings=False)
    LlamaForCausalLM(config).eval().save_pretrained(str(hf))
    out = work / "ov"
    subprocess.run([sys.executable, "-m", "edgeopt.llm.ov_convert", str(hf), str(out), "--weights", "fp32",
                    "--report", str(work / "report.json")], check=True, capture_output=True,
                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return out


def shared_wide_kv_ov(scratch: Path) -> Path:
    """:func:`build_wide_kv_ov`'s folder from the suite's cache (:func:`_shared`), keyed by the converter's source
    (``edgeopt/llm/ov_convert.py`` and the one edgeopt module it imports, ``calib_windows.py``; a test below fails
    when it imports another) and the libraries that trace and convert: built once per checkout instead of ~15 s of
    every run. Read only."""
    import edgeopt

    llm = Path(edgeopt.__file__).resolve().parent / "llm"
    return _shared("wide-kv-ov", ("openvino", "openvino-tokenizers", "transformers", "tokenizers", "torch"),
                   "openvino_model.xml", lambda: build_wide_kv_ov(scratch),
                   sources=tuple(llm / name for name in WIDE_KV_SOURCES))


WIDE_KV_SOURCES = ("ov_convert.py", "calib_windows.py")  # what python -m edgeopt.llm.ov_convert runs of edgeopt


def _levels_key() -> str:
    """What decides the zoo tiny-llama and its sweep levels: edgeopt's source (the zoo builder, the exporters, the
    level settings), this file, and the libraries that export."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    import edgeopt

    key = hashlib.sha256(Path(__file__).read_bytes())
    package = Path(edgeopt.__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        key.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    for dist in ("onnxruntime-genai", "transformers", "tokenizers", "torch", "llama-cpp-python", "gguf", "openvino",
                 "openvino-tokenizers", "nncf", "optimum-intel", "sentencepiece", "numpy"):
        try:
            key.update(f"{dist}={version(dist)}".encode())
        except PackageNotFoundError:
            key.update(f"{dist}=none".encode())
    return key.hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created), held for the ``with`` block."""
    import fcntl

    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


def _prune_stale(root: Path, idle_s: float = 3600.0) -> None:
    """Remove the builds of other keys beside ``root`` (older edgeopt sources: ~20 MB each) unused for ``idle_s``
    (a run of another source may still be reading a fresher one)."""
    import shutil
    import time

    for other in root.parent.glob("tiny-llama-levels-*"):
        if other.is_dir() and other != root and time.time() - other.stat().st_mtime > idle_s:
            shutil.rmtree(other, ignore_errors=True)
            other.with_name(other.name + ".lock").unlink(missing_ok=True)


def tiny_llama_levels(dest: Path, *levels: tuple[str, str]) -> dict[str, Path]:
    """The zoo's tiny-llama (``src``) and its sweep ``levels`` (``(runtime, name)`` pairs, settings from the
    registry) copied into ``dest`` (``dest/tiny-llama``, ``dest/levels/<runtime>/<name>``, as a sweep's output has
    them), from the suite's cache (``$EDGEOPT_TEST_CACHE``, keyed by :func:`_levels_key`), each built there once:
    under a lock, so the other worker waits for a build instead of making its own. Callers own their copy."""
    import shutil

    from edgeopt.llm.sweep_levels import all_levels, build_level
    from edgeopt.registry.lookup import model_digest
    from edgeopt.zoo import build

    os.environ["HF_HUB_OFFLINE"] = "1"
    root = Path(os.environ.get("EDGEOPT_TEST_CACHE", Path.home() / ".cache" / "edgeopt-tests"))
    root = root / f"tiny-llama-levels-{_levels_key()}"
    if not root.is_dir():
        _prune_stale(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    by_key = {(lv.runtime, lv.name): lv for lv in all_levels()}
    src = root / "tiny-llama"
    with _locked(root.parent / f"{root.name}.lock"):
        if not src.is_dir():  # built aside and renamed: a killed build leaves no half folder here
            shutil.rmtree(root / "tiny-llama.part", ignore_errors=True)
            os.replace(build("tiny-llama", root / "tiny-llama.part"), src)
    os.utime(root)  # its last use, for _prune_stale
    shutil.copytree(src, dest / "tiny-llama", dirs_exist_ok=True)
    digest = model_digest(src, "hf_llm")[0]
    for runtime, name in levels:  # one lock per level: the other worker builds another level meanwhile
        (root / "levels" / runtime).mkdir(parents=True, exist_ok=True)
        with _locked(root / "levels" / runtime / f"{name}.lock"):
            # complete once build_level wrote its stamp; a stamp-less (killed) build is built again
            folder, _ = build_level(by_key[(runtime, name)], src, digest, root / "levels")
            shutil.copytree(folder, dest / "levels" / runtime / name, dirs_exist_ok=True)
    return {"src": dest / "tiny-llama", "levels": dest / "levels"}


def _fixture():
    import pytest

    @pytest.fixture(scope="session")
    def tiny_ortgenai(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """A tiny random-weight Llama as an int4 onnxruntime-genai folder (~20 s once per session)."""
        pytest.importorskip("onnxruntime_genai", reason="pip install onnxruntime-genai to run the LLM bench tests")
        pytest.importorskip("transformers", reason="transformers builds the tiny Llama (pip install transformers)")
        pytest.importorskip("tokenizers", reason="tokenizers trains the tiny tokenizer (pip install tokenizers)")
        os.environ["HF_HUB_OFFLINE"] = "1"
        return shared_ortgenai(tmp_path_factory.mktemp("tiny-llm"))

    @pytest.fixture(scope="session")
    def tiny_ovgenai(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """The same tiny shapes as a stateful OpenVINO GenAI folder (~15 s once per checkout: ``shared_ovgenai``)."""
        for module in ("openvino_genai", "openvino_tokenizers", "torch", "transformers", "tokenizers"):
            pytest.importorskip(module, reason=f"{module} is needed for the OpenVINO GenAI folder "
                                               "(pip install openvino-genai openvino-tokenizers torch transformers)")
        os.environ["HF_HUB_OFFLINE"] = "1"
        return shared_ovgenai(tmp_path_factory.mktemp("tiny-ov-llm"))

    @pytest.fixture(scope="session")
    def tiny_llama_fp32(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
        """The zoo's random-weight tiny-llama (``src``, a Hugging Face folder) and its fp32 onnxruntime-genai
        sweep level under ``levels`` (~15 s once per checkout and edgeopt source: :func:`tiny_llama_levels`;
        a copy on each worker). A sweep test copies ``levels`` into its own output, where the sweep finds the
        level built (same stamp) and only measures it."""
        for module in ("onnxruntime_genai", "torch", "transformers", "tokenizers"):
            pytest.importorskip(module, reason=f"the LLM sweep tests need {module} (pip install 'edgeopt[llm,torch]')")
        return tiny_llama_levels(tmp_path_factory.mktemp("tiny-llama-fp32"), ("onnxruntime_genai", "fp32"))

    return tiny_ortgenai, tiny_ovgenai, tiny_llama_fp32


tiny_ortgenai, tiny_ovgenai, tiny_llama_fp32 = _fixture()
