"""onnxruntime-genai: runs a model folder written by its model builder (genai_config.json, model.onnx, tokenizer).

Timing follows onnxruntime-genai's own loop: ``append_tokens`` runs the prompt's forward pass (prefill) and
leaves its logits; each ``generate_next_token`` samples one token and, from the second on, first runs the
forward pass of the previous token. So time to first token = ``append_tokens`` + the first
``generate_next_token``, and each later ``generate_next_token`` is one output token's latency (TPOT).
Output length is fixed with ``min_length = max_length`` (EOS cannot end it early). With the builder's default
``past_present_share_buffer`` the KV cache is allocated for ``max_length`` tokens when the generator is made.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Dict, List

from .base import RuntimeMissing
from .generative import GenerativeRuntime
from .options import Option

_PROBE_PROMPT = 16  # the KV probe's prompt tokens
_PROBE_LENGTHS = (128, 256, 384, 512)  # the probe's max_length - prompt, one generator each
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1}


def _import() -> Any:
    try:
        import onnxruntime_genai
    except ImportError as exc:
        raise RuntimeMissing("onnxruntime-genai is not installed: pip install onnxruntime-genai (%s)" % exc) from None
    return onnxruntime_genai


class OrtGenaiRuntime(GenerativeRuntime):
    name = "onnxruntime_genai"
    formats = ("onnxruntime_genai",)
    packages = (("onnxruntime_genai", ("onnxruntime-genai", "onnxruntime-genai-cuda", "onnxruntime-genai-directml")),)
    profile_unsupported = "onnxruntime-genai has no per-layer profiler the agent drives; profile the model.onnx " \
                          "with the onnxruntime runtime instead"
    option_schema = (
        Option("provider", "str", "execution provider to append (e.g. cuda); default: the folder's genai_config"),
    )

    def __init__(self) -> None:
        self._og = _import()
        self._model: Any = None
        self._folder = ""
        self._generator: Any = None
        self._threads = 0

    def version(self) -> str:
        return str(getattr(self._og, "__version__", "unknown"))

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self.check_options(options)
        folder = model_path if os.path.isdir(model_path) else os.path.dirname(model_path)
        config = self._og.Config(folder)
        if threads > 0:
            config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": int(threads),
                                                                                   "inter_op_num_threads": 1}}}}))
        if options.get("provider"):
            config.clear_providers()
            config.append_provider(str(options["provider"]))
        self._model = self._og.Model(config)
        self._folder = folder
        self._threads = int(threads)

    def model_facts(self) -> Dict[str, Any]:
        with open(os.path.join(self._folder, "genai_config.json")) as fh:
            model = json.load(fh)["model"]
        dec = model["decoder"]
        return {"layers": int(dec["num_hidden_layers"]), "kv_heads": int(dec["num_key_value_heads"]),
                "head_size": int(dec["head_size"]), "vocab_size": int(model["vocab_size"]),
                "context_length": int(model.get("context_length", 0)), "kv_dtype_bytes": None,
                "source": "genai_config.json"}

    def generate_once(self, prompt: List[List[int]], depth: List[List[int]], gen_tokens: int) -> Dict[str, Any]:
        import numpy as np

        og = self._og
        batch = len(prompt)
        total = len(depth[0]) + len(prompt[0]) + gen_tokens
        params = og.GeneratorParams(self._model)
        params.set_search_options(max_length=total, min_length=total, do_sample=False, batch_size=batch)
        gen = og.Generator(self._model, params)
        self._generator = gen
        if depth[0]:
            gen.append_tokens(np.asarray(depth, dtype=np.int32))
        ids = np.asarray(prompt, dtype=np.int32)
        clock = time.perf_counter_ns
        t0 = clock()
        gen.append_tokens(ids)
        t1 = clock()
        gen.generate_next_token()
        t2 = clock()
        token_ns = []
        produced = 1
        last = t2
        while produced < gen_tokens and not gen.is_done():
            gen.generate_next_token()
            now = clock()
            token_ns.append(now - last)
            last = now
            produced += 1
        return {"t0_ns": t0, "ttft_ns": t2 - t0, "prefill_ns": t1 - t0, "token_ns": token_ns, "e2e_ns": last - t0,
                "tokens_out": len(gen.get_sequence(0)) - len(depth[0]) - len(prompt[0]), "kv": self._kv(gen)}

    @staticmethod
    def _kv(gen: Any) -> Dict[str, Any]:
        """dtype and shape of layer 0's key cache as allocated (read after timing); ``{}`` if not readable."""
        try:
            arr = gen.get_output("present.0.key")
        except Exception:  # older onnxruntime-genai, other output names: the formula then assumes the model dtype
            return {}
        return {"dtype": str(arr.dtype), "dtype_bytes": _DTYPE_BYTES.get(str(arr.dtype), int(arr.dtype.itemsize)),
                "shape": [int(d) for d in arr.shape]}

    def close_generation(self) -> None:
        self._generator = None

    def kv_probe(self, read: Callable[[], Dict[str, Any]], context_limit: int) -> Dict[str, Any]:
        """The cache is allocated (and zero-filled) for ``max_length`` when a generator is made, so RSS does not
        grow while it decodes: no decode slope. What is measured instead is that up-front allocation: one
        generator per max_length (16-token prompt in, one token out), the memory in use read while it lives."""
        import gc

        import numpy as np

        lengths = [_PROBE_PROMPT + n for n in _PROBE_LENGTHS if _PROBE_PROMPT + n <= context_limit]
        if len(lengths) < 2:
            return {"method": None, "points": [], "note": "the model's context (%d tokens) is too short for two "
                    "probe lengths" % context_limit}
        vocab = int(self.model_facts().get("vocab_size") or 1000)
        ids = np.random.default_rng(0).integers(3, max(vocab, 4), size=(1, _PROBE_PROMPT)).astype(np.int32)
        points: List[List[Any]] = []
        for length in lengths:
            gen = self._generator_for(length)
            gen.append_tokens(ids)
            gen.generate_next_token()
            got = read()
            points.append([length, got["in_use_kb"], got["raw_kb"]])
            del gen
            gc.collect()
        return {"method": "upfront_allocation", "points": points,
                "note": "onnxruntime-genai allocates the whole max_length cache when the generator is made (no "
                        "decode-phase growth to measure): the memory in use held by generators of max_length %s"
                        % ", ".join(str(n) for n in lengths)}

    def tokenize(self, text: str) -> List[int]:
        return [int(t) for t in self._og.Tokenizer(self._model).encode(text)]

    def _generator_for(self, length: int) -> Any:
        params = self._og.GeneratorParams(self._model)
        params.set_search_options(max_length=length, min_length=length, do_sample=False, batch_size=1)
        return self._og.Generator(self._model, params)

    def logits(self, ids: List[int]) -> Any:
        """The prompt pass's ``logits`` output holds every position (``get_logits`` keeps only the last)."""
        import numpy as np

        gen = self._generator_for(len(ids) + 1)
        gen.append_tokens(np.asarray([ids], dtype=np.int32))
        out = np.asarray(gen.get_output("logits"), dtype=np.float32)
        return out.reshape(-1, out.shape[-1])[-len(ids):]

    def greedy(self, ids: List[int], tokens: int) -> List[int]:
        import numpy as np

        gen = self._generator_for(len(ids) + tokens)
        gen.append_tokens(np.asarray([ids], dtype=np.int32))
        while not gen.is_done():
            gen.generate_next_token()
        return [int(t) for t in gen.get_sequence(0)[len(ids):len(ids) + tokens]]

    def details(self) -> Dict[str, Any]:
        return {"folder": self._folder}
