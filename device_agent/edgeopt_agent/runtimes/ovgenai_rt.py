"""OpenVINO GenAI: runs an OpenVINO GenAI folder (openvino_model.xml with a stateful KV cache, its .bin, and
openvino_tokenizer/openvino_detokenizer) with ``LLMPipeline``.

Prompts go in as token ids (an ``ov.Tensor``), so tokenization is not timed and the tokenizer models are not
needed to measure. Timing: a streamer whose ``write`` is called once per new token records the clock; time to
first token = ``generate`` called until the first ``write``; TPOT = the gaps between later writes. Output length
is fixed with ``min_new_tokens = max_new_tokens`` and ``ignore_eos``. Context depth (a KV cache filled before the
prompt): the depth tokens go in as a first chat turn (``start_chat``, one new token, untimed), so the timed prompt
is a second turn on the kept cache (it also feeds the first turn's token: prompt + 1 tokens). ``start_chat`` is
deprecated in OpenVINO GenAI 2026 (ChatHistory replaces it, for text); where it is gone, depth cells are refused.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any, Callable, Dict, List
from xml.etree import ElementTree

from .base import RuntimeMissing
from .generative import GenerativeRuntime
from .options import Option

_MODEL_XML = "openvino_model.xml"
_BLOCK = 32  # tokens per block of the CPU plugin's paged KV cache
_GROWTH = 256  # tokens the dynamic paged cache grows by (openvino.genai continuous_batching/scheduler.hpp)
_PROBE_PROMPT = 16  # the KV probe's prompt: a fresh cache starts at min(2 x 16, ...) = 32 tokens (one block)
_PROBE_GROWTHS = (2, 3, 4, 5)  # the probe reads after these growths (the k-th at context 33 + 256 k): 3 periods
_PROBE_LAG = 8  # tokens after a growth at which the probe reads (inside the new capacity, clear of the next)


def paged_capacity(prompt: int, new_tokens: int) -> int:
    """Tokens the paged KV cache holds after one generation (``cache_size`` 0, the dynamic default): sized for
    min(2 x prompt, prompt + new tokens) in whole blocks when the request arrives, then grown ``_GROWTH`` tokens
    at a time until the prompt + new tokens - 1 entries fit (the last token's key/value is never computed).
    Matches ContinuousBatchingPipeline's ``kv_cache_size_in_bytes`` (tests/integration/llm/)."""
    capacity = -(-min(2 * prompt, prompt + new_tokens) // _BLOCK) * _BLOCK
    while capacity < prompt + new_tokens - 1:
        capacity += _GROWTH
    return capacity


def _import() -> Any:
    try:
        import openvino_genai
    except ImportError as exc:
        raise RuntimeMissing("openvino-genai is not installed: pip install openvino-genai (%s)" % exc) from None
    return openvino_genai


def _streamer(genai: Any, clock: Any) -> Any:
    """A StreamerBase that stamps each ``write`` (one per new token, or per batch of tokens)."""

    class _Stamps(genai.StreamerBase):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.stamps: List[int] = []

        def write(self, token: Any) -> Any:
            self.stamps.append(clock())
            return genai.StreamingStatus.RUNNING

        def end(self) -> None:
            return None

    return _Stamps()


class OvGenaiRuntime(GenerativeRuntime):
    name = "openvino_genai"
    formats = ("openvino_genai",)
    packages = (("openvino_genai", ("openvino-genai",)), ("openvino_tokenizers", ("openvino-tokenizers",)))
    profile_unsupported = "OpenVINO GenAI has no per-layer profiler the agent drives; profile the " \
                          "openvino_model.xml with the openvino runtime instead"
    option_schema = (
        Option("device", "str", "OpenVINO device for the pipeline (CPU, GPU, NPU)", default="CPU"),
        Option("inference_precision", "str", "precision of float layers (default: the device's, bf16 on AMX CPUs)",
               choices=("f32", "bf16", "f16"), fold="lower"),
    )

    def __init__(self) -> None:
        self._genai = _import()
        self._pipe: Any = None
        self._folder = ""
        self._threads = 0
        self._device = "CPU"
        self._request: Any = None
        self._tokenizer: Any = None
        self._kv: Dict[str, Any] = {}
        self._props: Dict[str, Any] = {}

    def version(self) -> str:
        return str(getattr(self._genai, "__version__", "unknown"))

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self.check_options(options)
        folder = model_path if os.path.isdir(model_path) else os.path.dirname(model_path)
        self._device = str(options.get("device") or "CPU")
        self._props = _properties(options, threads)
        self._pipe = self._genai.LLMPipeline(folder, self._device, **self._props)
        self._folder = folder
        self._threads = int(threads)
        try:
            head = int(self.model_facts()["head_size"])
        except (OSError, ValueError, KeyError):
            head = 0
        self._kv = _kv_precision(self._device, head)

    def load_scoring(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        """The stateful IR compiled directly (LLMPipeline does not expose logits) and the folder's tokenizer."""
        import openvino as ov

        self.check_options(options)
        folder = model_path if os.path.isdir(model_path) else os.path.dirname(model_path)
        self._device = str(options.get("device") or "CPU")
        compiled = ov.Core().compile_model(os.path.join(folder, _MODEL_XML), self._device,
                                           _properties(options, threads))
        self._request = compiled.create_infer_request()
        self._tokenizer = self._genai.Tokenizer(folder)
        self._folder = folder
        self._threads = int(threads)

    def tokenize(self, text: str) -> List[int]:
        import numpy as np

        return [int(t) for t in np.asarray(self._tokenizer.encode(text).input_ids.data).reshape(-1)]

    def _forward(self, ids: List[int], start: int) -> Any:
        """Logits ``[len(ids), vocab]`` of ``ids`` at positions ``start``.. on the request's kept KV state."""
        import numpy as np

        n = len(ids)
        self._request.infer({"input_ids": np.asarray([ids], dtype=np.int64),
                             "attention_mask": np.ones((1, start + n), dtype=np.int64),
                             "position_ids": np.arange(start, start + n, dtype=np.int64)[None],
                             "beam_idx": np.zeros(1, dtype=np.int32)})
        out = np.asarray(self._request.get_tensor("logits").data, dtype=np.float32)
        return out.reshape(-1, out.shape[-1])[-n:]

    def logits(self, ids: List[int]) -> Any:
        self._request.reset_state()
        return self._forward(ids, 0)

    def greedy(self, ids: List[int], tokens: int) -> List[int]:
        self._request.reset_state()
        last = self._forward(ids, 0)[-1]
        out: List[int] = []
        while len(out) < tokens:
            out.append(int(last.argmax()))
            if len(out) < tokens:
                last = self._forward(out[-1:], len(ids) + len(out) - 1)[-1]
        return out

    def model_facts(self) -> Dict[str, Any]:
        """Read from config.json next to the IR when present (optimum writes it), else from the IR's KV inputs."""
        import json

        path = os.path.join(self._folder, "config.json")
        if os.path.isfile(path):
            with open(path) as fh:
                cfg = json.load(fh)
            heads = int(cfg["num_attention_heads"])
            return {"layers": int(cfg["num_hidden_layers"]), "kv_heads": int(cfg.get("num_key_value_heads", heads)),
                    "head_size": int(cfg.get("head_dim") or cfg["hidden_size"] // heads),
                    "vocab_size": int(cfg["vocab_size"]), "context_length": int(cfg.get("max_position_embeddings", 0)),
                    "kv_dtype_bytes": None, "source": "config.json"}
        return _facts_from_ir(os.path.join(self._folder, _MODEL_XML))

    @property
    def supports_context_depth(self) -> bool:  # type: ignore[override]
        return hasattr(self._pipe if self._pipe is not None else self._genai.LLMPipeline, "start_chat")

    def _config(self, tokens: int) -> Any:
        config = self._genai.GenerationConfig()
        config.max_new_tokens = tokens
        config.min_new_tokens = tokens
        config.ignore_eos = True
        config.do_sample = False
        return config

    def generate_once(self, prompt: List[List[int]], depth: List[List[int]], gen_tokens: int) -> Dict[str, Any]:
        import warnings

        import numpy as np
        import openvino as ov

        clock = time.perf_counter_ns
        streamer = _streamer(self._genai, clock)
        ids = ov.Tensor(np.asarray(prompt, dtype=np.int64))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # start_chat: see the module docstring
            if depth[0]:
                self._pipe.start_chat()
                self._pipe.generate(ov.Tensor(np.asarray(depth, dtype=np.int64)), self._config(1))
            try:
                t0 = clock()
                result = self._pipe.generate(ids, self._config(gen_tokens), streamer)
                t_end = clock()
            finally:
                if depth[0]:
                    self._pipe.finish_chat()
        stamps = streamer.stamps
        if not stamps:
            raise RuntimeError("the OpenVINO GenAI streamer saw no token: cannot time this generation")
        token_ns = [b - a for a, b in zip(stamps, stamps[1:])]
        tokens = getattr(result, "tokens", None) or [[]]
        perf = getattr(result, "perf_metrics", None)
        own = {}
        if perf is not None:
            own = {"ttft_ms": float(perf.get_ttft().mean), "tpot_ms": float(perf.get_tpot().mean)}
        kv = dict(self._kv)
        if kv.get("block_tokens") and not depth[0] and len(prompt) == 1:  # a chat turn's history: not modelled
            kv["allocated_tokens"] = paged_capacity(len(prompt[0]), gen_tokens)
        return {"t0_ns": t0, "ttft_ns": stamps[0] - t0, "prefill_ns": None, "token_ns": token_ns, "e2e_ns": t_end - t0,
                "tokens_out": len(tokens[0]), "kv": kv, "runtime_metrics": own}

    def kv_probe(self, read: Callable[[], Dict[str, Any]], context_limit: int) -> Dict[str, Any]:
        """A fresh pipeline (the loaded one dropped first: its kept cache has the load's history) generates after a
        16-token prompt; its dynamic cache starts at 32 tokens and grows 256 at a time at contexts 33, 289, 545,
        801, 1057, 1313; the memory in use is read ``_PROBE_LAG`` tokens after the growths at 545 ... 1313, when the
        cache holds 800, 1,056, 1,312 and 1,568 tokens. The first two periods are left out: the fresh pipeline
        settles there (at 0.5 B they held ~15 % more than the cache). The same phase of each period is read because
        pages become resident as tokens are written, not when blocks are reserved. The reallocations' freed copies
        are what glibc keeps (raw RSS); the in-use reading drops them. The fresh pipeline stays loaded."""
        import gc

        import numpy as np
        import openvino as ov

        growths = {_BLOCK + 1 + _GROWTH * k: _BLOCK + _GROWTH * (k + 1) for k in _PROBE_GROWTHS}
        marks = {c + _PROBE_LAG - _PROBE_PROMPT + 1: cap for c, cap in growths.items()
                 if c + _PROBE_LAG <= context_limit}
        if len(marks) < 2:
            return {"method": None, "points": [], "note": "the model's context (%d tokens) is too short for the KV "
                    "probe (%d tokens)" % (context_limit, _BLOCK + 1 + _GROWTH * _PROBE_GROWTHS[-1] + _PROBE_LAG)}
        self._pipe = None
        gc.collect()
        self._pipe = self._genai.LLMPipeline(self._folder, self._device, **self._props)
        points: List[List[Any]] = []
        genai = self._genai

        class _Reader(genai.StreamerBase):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.count = 0

            def write(self, token: Any) -> Any:
                self.count += 1
                if self.count in marks:
                    got = read()
                    points.append([marks[self.count], got["in_use_kb"], got["raw_kb"]])
                return genai.StreamingStatus.RUNNING

            def end(self) -> None:
                return None

        vocab = int(self.model_facts().get("vocab_size") or 1000)
        ids = np.random.default_rng(0).integers(3, max(vocab, 4), size=(1, _PROBE_PROMPT)).astype(np.int64)
        self._pipe.generate(ov.Tensor(ids), self._config(max(marks)), _Reader())
        return {"method": "decode_growth", "points": points,
                "note": "one untimed generation in a fresh pipeline after a %d-token prompt: the memory in use (glibc "
                        "malloc_trim first) %d tokens after each growth of the dynamic paged cache to %s tokens"
                        % (_PROBE_PROMPT, _PROBE_LAG, ", ".join(str(p[0]) for p in points))}

    def details(self) -> Dict[str, Any]:
        return {"folder": self._folder, "device": self._device}


def _properties(options: Dict[str, Any], threads: int) -> Dict[str, Any]:
    props: Dict[str, Any] = {}
    if threads > 0:
        props["INFERENCE_NUM_THREADS"] = int(threads)
    if options.get("inference_precision"):
        props["INFERENCE_PRECISION_HINT"] = str(options["inference_precision"]).lower()
    return props


def _kv_precision(device: str, head_size: int) -> Dict[str, Any]:
    """The element type the device plugin keeps the KV cache in (``KV_CACHE_PRECISION``: u8 by default on x86
    CPUs, not the model's f32), as the ``kv`` dict edgeopt's KV formula reads; ``{}`` where the plugin does not
    say or the type is below a byte. An integer cache also keeps an f32 scale and zero point: the value cache per
    token, head and group of ``VALUE_CACHE_GROUP_SIZE`` values (0: the head); the key cache, on x86 CPUs, per
    channel and 32-token block (the plugin's default "by channel" key quantization: 8 rows of bytes on each
    block of ``_BLOCK`` tokens), elsewhere (ARM) per token like the value. ``*_extra_bytes_per_token_head`` are
    what the layout adds per token and head: the sizes ContinuousBatchingPipeline's ``kv_cache_size_in_bytes``
    reports (checked in tests/integration/llm/test_llm_bench_openvino.py)."""
    try:
        import openvino as ov

        core = ov.Core()
        plugin = device.split(":")[0]
        kind = core.get_property(plugin, "KV_CACHE_PRECISION")
        bits = int(kind.bitwidth)
        groups = {}
        if kind.is_integral():
            for side in ("KEY", "VALUE"):
                groups[side] = int(core.get_property(plugin, side + "_CACHE_GROUP_SIZE") or 0)
    except Exception:  # a plugin without the properties (NPU, older releases): the host assumes f32
        return {}
    if bits < 8:
        return {}
    out = {"dtype": kind.get_type_name(), "dtype_bytes": bits // 8, "source": "KV_CACHE_PRECISION"}
    if kind.is_integral() and head_size:
        value = 8 * (-(-head_size // (groups["VALUE"] or head_size)))
        if plugin == "CPU" and platform.machine().lower() in ("x86_64", "amd64", "i686", "x86"):
            key = 8 * head_size / float(_BLOCK)  # by channel: 2 f32 per channel per block
            out["key_quant"] = "by_channel"
        else:
            key = 8 * (-(-head_size // (groups["KEY"] or head_size)))
            out["key_quant"] = "by_token"
        out["key_extra_bytes_per_token_head"] = key
        out["value_extra_bytes_per_token_head"] = value
        out["extra_bytes_per_token_head"] = (key + value) / 2.0  # hosts before session 8 read this one
        out["block_tokens"] = _BLOCK
    return out


def _facts_from_ir(xml_path: str) -> Dict[str, Any]:
    """Layers, KV heads and head size from the stateful IR's ReadValue shapes (``[batch, kv_heads, seq, head]``)."""
    shapes = []
    for layer in ElementTree.parse(xml_path).getroot().iter("layer"):
        if layer.get("type") == "ReadValue":
            data = layer.find("data")
            shape = (data.get("variable_shape") if data is not None else "") or ""
            shapes.append([d for d in shape.strip("[]").split(",") if d])
    if not shapes:
        raise ValueError("%s has no ReadValue (stateful KV cache): export it with a stateful cache" % xml_path)
    dims = shapes[0]
    return {"layers": len(shapes) // 2, "kv_heads": int(dims[1]), "head_size": int(dims[-1]), "vocab_size": None,
            "context_length": 0, "kv_dtype_bytes": None, "source": _MODEL_XML}
