"""llama.cpp (through llama-cpp-python): runs a GGUF file, or a folder holding ``model.gguf`` (what edgeopt's
export writes), with the ``generate`` command and scores it for retention (teacher-forced logits).

Timing: the prompt goes in as ``llama_decode`` calls of ``n_batch``-token chunks, their batches built before the
clock starts (``Llama.eval`` filled its batch token by token in Python: ~3 % of the zoo model's prefill), then the
first token is the argmax of the last position's logits. Reading logits synchronizes the context (llama.cpp's
``llama_get_logits_ith``), so the clock stops after the work is done. Time to first token = prompt eval + that
argmax. Each later token (TPOT) is one ``llama_decode`` of the previous token and the argmax of its logits, read
in place (:class:`_Argmax`: ``llama_get_logits_ith``, which synchronizes, and numpy's argmax on a view of
llama.cpp's buffer made once), as ``llama-bench``'s own token loop (decode + synchronize) plus that argmax.
``Llama.eval`` per token cost ~0.06 ms of Python (its batch filled field by field, its token history copied): 14 %
of a 0.33 ms token on the zoo model; llama.cpp's greedy sampler (``llama_sampler_sample``, session 19) 9.2 us a
token at a 2,048-token vocabulary (it copies the whole vocabulary into a candidate array each call), the view's
argmax 5.5 us.
Output length is fixed (EOS is never checked). llama.cpp's own performance counters (``llama_perf_context``,
reset before each generation) come back per repetition as ``runtime_metrics``: ``ttft_ms`` (its prompt-eval time),
``tpot_ms`` (its eval time per token); they accumulate at a synchronize, which every token's logits read is.

Memory: the weights are ``mmap``-ed from the file by default (``use_mmap``). RSS then counts the file's pages as
they are touched (file-backed, shared and reclaimable under pressure, not a private copy), so a load's RSS growth is
small and the first generations fault the weights in; ``details`` reports RssFile (file-backed resident pages: the
mapping's and the shared libraries') and RssAnon (private memory: the KV cache, compute buffers) apart. ``use_mmap:
false`` reads the whole file into private memory at load instead. The KV cache is allocated for ``n_ctx`` tokens
when the context is made (its element type: ``cache_type`` f16, the default, or q8_0, f32, bf16; q8_0 needs flash
attention, turned on for it).

Batch: llama-cpp-python's ``Llama`` runs one sequence; a cell with ``batch > 1`` is refused with the reason.
"""

from __future__ import annotations

import ctypes
import logging
import os
import time
from typing import Any, Dict, List, Optional

from .base import RuntimeMissing
from .generative import GenerativeRuntime
from .options import Option

ENTRY_FILE = "model.gguf"  # the file in a folder written by edgeopt's GGUF export
# KV cache element types: (ggml type name, whole bytes per element, extra bytes per 32 elements (block scales)).
CACHE_TYPES = {"f16": ("F16", 2, 0), "bf16": ("BF16", 2, 0), "f32": ("F32", 4, 0), "q8_0": ("Q8_0", 1, 2)}
_DEFAULT_CTX = 4096  # n_ctx when the option is not given: the model's trained context, at most this
_SCORING_CTX = 1024  # at most this for scoring (logits_all keeps n_ctx x vocab floats)


class _Argmax:
    """Greedy decoding's next token: the argmax of the last position's logits, read in place through a numpy view
    of llama.cpp's logits buffer, made again only when the buffer moves (its address is checked every call; reading
    the pointer synchronizes the context). The first of equal logits wins, as in llama.cpp's greedy sampler. At a
    2,048-token vocabulary it adds 5.5 us a token to llama-bench's bare decode + synchronize, llama.cpp's greedy
    sampler 9.2 us (it copies the whole vocabulary into a candidate array each call): 2.4 % and 4.0 % of a 0.23 ms
    token (36 paired rounds in one process, session 20)."""

    def __init__(self, lc: Any, ctx: Any, n_vocab: int) -> None:
        self._get, self._ctx, self._n = lc.llama_get_logits_ith, ctx, n_vocab
        self._address = ctypes.c_void_p.from_buffer  # the pointer's value, read in place: 0.75 us, ctypes.cast 2.1
        self._at: Optional[int] = 0  # never a buffer's address: the first call makes the view
        self._view: Any = None

    def __call__(self) -> int:
        ptr = self._get(self._ctx, -1)
        at = self._address(ptr).value
        if at != self._at:
            if not at:  # NULL: llama.cpp kept no logits for that position
                raise RuntimeError("llama.cpp returned no logits for the last position (llama_get_logits_ith)")
            import numpy as np

            self._at, self._view = at, np.ctypeslib.as_array(ptr, shape=(self._n,))
        return int(self._view.argmax())


def _import() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise RuntimeMissing("llama-cpp-python is not installed: pip install llama-cpp-python (it builds llama.cpp "
                             "from source: a C/C++ compiler and cmake, minutes on a small board) (%s)" % exc) from None
    return llama_cpp


def gguf_path(model_path: str) -> str:
    """The GGUF file of ``model_path``: the file itself, or a folder's ``model.gguf``."""
    return os.path.join(model_path, ENTRY_FILE) if os.path.isdir(model_path) else model_path


def _status_kb(key: str) -> Optional[int]:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


class LlamaCppRuntime(GenerativeRuntime):
    name = "llama_cpp"
    formats = ("gguf",)
    packages = (("llama_cpp", ("llama-cpp-python",)),)
    profile_unsupported = "llama.cpp has no per-layer profiler the agent drives (GGML_SCHED debug logs only)"
    option_schema = (
        Option("n_ctx", "int", "context size in tokens (KV cache allocated for it at load; default: the model's "
                               "trained context, at most %d)" % _DEFAULT_CTX),
        Option("n_batch", "int", "prompt tokens per decode call (llama.cpp's -b)", default=512),
        Option("cache_type", "str", "KV cache element type (llama.cpp's -ctk/-ctv); q8_0 turns flash attention on",
               default="f16", choices=tuple(CACHE_TYPES), fold="lower"),
        Option("flash_attn", "bool", "flash attention (llama.cpp's -fa)", default=False),
        Option("use_mmap", "bool", "map the weights from the file (RSS counts touched pages) instead of reading them "
                                   "into private memory", default=True),
        Option("n_gpu_layers", "int", "layers offloaded to a GPU build's device (llama.cpp's -ngl)", default=0),
    )

    def __init__(self) -> None:
        self._lc = _import()
        # llama.cpp's log goes to stderr through this logger (llama_cpp._logger); errors only, as verbose=False does
        logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
        self._llm: Any = None
        self._path = ""
        self._settings: Dict[str, Any] = {}

    def version(self) -> str:
        return str(getattr(self._lc, "__version__", "unknown"))

    def _open(self, model_path: str, options: Dict[str, Any], threads: int, scoring: bool) -> None:
        self.check_options(options)
        path = gguf_path(model_path)
        if not os.path.isfile(path):
            raise ValueError("no GGUF file at %s: pass a .gguf file or a folder holding %s" % (path, ENTRY_FILE))
        cache = str(options.get("cache_type") or "f16").lower()
        ggml_type = getattr(self._lc, "GGML_TYPE_" + CACHE_TYPES[cache][0])
        flash = bool(options.get("flash_attn")) or cache.startswith("q")
        self._llm = None  # release the previous context before the next is made
        trained = self._trained_context(path)
        if scoring:  # logits_all keeps n_ctx x vocab floats: never more than the windows need (logits unchanged)
            n_ctx = min(int(options.get("n_ctx") or trained), _SCORING_CTX)
        else:
            n_ctx = int(options.get("n_ctx") or min(trained, _DEFAULT_CTX))
        n_batch = int(options.get("n_batch") or 512)
        kwargs = dict(model_path=path, n_ctx=n_ctx, n_batch=n_batch, n_ubatch=n_batch, type_k=ggml_type,
                      type_v=ggml_type, flash_attn=flash, use_mmap=options.get("use_mmap", True) is not False,
                      n_gpu_layers=int(options.get("n_gpu_layers") or 0), logits_all=scoring, verbose=False)
        if threads > 0:
            kwargs.update(n_threads=int(threads), n_threads_batch=int(threads))
        self._llm = self._lc.Llama(**kwargs)
        self._path = path
        self._settings = {"n_ctx": int(self._llm.n_ctx()), "n_ctx_train": trained, "n_batch": n_batch,
                          "cache_type": cache, "flash_attn": flash, "use_mmap": kwargs["use_mmap"],
                          "n_gpu_layers": kwargs["n_gpu_layers"], "threads": int(self._llm.n_threads)}

    def _trained_context(self, path: str) -> int:
        """The model's trained context (GGUF ``<arch>.context_length``), read with its vocabulary only."""
        lc = self._lc
        lc.llama_backend_init()
        params = lc.llama_model_default_params()
        params.vocab_only = True
        model = lc.llama_model_load_from_file(path.encode("utf-8"), params)
        if not model:
            raise ValueError("llama.cpp cannot read %s as a GGUF model" % path)
        try:  # a vocabulary-only model has its metadata but not its hyper-parameters (n_ctx_train reads 0)
            buf = ctypes.create_string_buffer(256)
            arch = buf.value.decode() if lc.llama_model_meta_val_str(model, b"general.architecture", buf, 256) > 0 \
                else "llama"
            found = lc.llama_model_meta_val_str(model, ("%s.context_length" % arch).encode(), buf, 256)
            return int(buf.value) if found > 0 and buf.value.isdigit() and int(buf.value) > 0 else _DEFAULT_CTX
        finally:
            lc.llama_model_free(model)

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self._open(model_path, options, threads, scoring=False)

    def load_scoring(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        """The same model with ``logits_all`` (every position's logits kept: teacher forcing)."""
        self._open(model_path, options, threads, scoring=True)

    def _meta(self, key: str) -> Optional[int]:
        meta = self._llm.metadata
        arch = meta.get("general.architecture", "llama")
        value = meta.get("%s.%s" % (arch, key))
        try:
            return int(value) if value is not None else None
        except ValueError:
            return None

    def model_facts(self) -> Dict[str, Any]:
        heads = self._meta("attention.head_count") or 1
        head = self._meta("attention.key_length") or int(self._llm.n_embd()) // heads
        cache = self._settings.get("cache_type", "f16")
        return {"layers": self._meta("block_count") or 1, "kv_heads": self._meta("attention.head_count_kv") or heads,
                "head_size": head, "vocab_size": int(self._llm.n_vocab()), "context_length": self._settings["n_ctx"],
                "kv_dtype_bytes": CACHE_TYPES[cache][1], "source": "GGUF metadata (context_length: n_ctx)"}

    def _next(self) -> int:
        """The argmax of the last evaluated position's logits (reading them synchronizes the context)."""
        return _Argmax(self._lc, self._llm.ctx, int(self._llm.n_vocab()))()

    def _decode_greedy(self, token: int, count: int, stamps: Optional[List[int]] = None,
                       argmax: Optional["_Argmax"] = None) -> List[int]:
        """``count`` more tokens after ``token`` (the last one sampled): per token one ``llama_decode`` and the argmax
        of its logits (:class:`_Argmax`, ``argmax`` when given), nothing else; ``stamps`` gets the clock after each."""
        lc, llm = self._lc, self._llm
        ctx, decode, clock = llm.ctx, lc.llama_decode, time.perf_counter_ns
        argmax = argmax or _Argmax(lc, ctx, int(llm.n_vocab()))
        one = (lc.llama_token * 1)()
        batch = lc.llama_batch_get_one(one, 1)  # points at ``one``: built once, each token written into it
        out: List[int] = []
        try:
            for _ in range(count):
                one[0] = token
                if decode(ctx, batch) != 0:
                    raise RuntimeError("llama_decode failed at generated token %d (context %d tokens): give n_ctx "
                                       "room for the prompt and the generation"
                                       % (len(out) + 1, self._settings["n_ctx"]))
                token = argmax()
                if stamps is not None:
                    stamps.append(clock())
                out.append(token)
        finally:
            llm.n_tokens += len(out)  # the binding's position count, for its next eval
        return out

    def _perf(self) -> Dict[str, float]:
        data = self._lc.llama_perf_context(self._llm.ctx)
        out = {"prefill_ms": float(data.t_p_eval_ms), "decode_ms": float(data.t_eval_ms),
               "prefill_tokens": float(data.n_p_eval), "decode_tokens": float(data.n_eval)}
        out["ttft_ms"] = out["prefill_ms"]
        if data.n_eval > 0:
            out["tpot_ms"] = out["decode_ms"] / data.n_eval
        return out

    def generate_once(self, prompt: List[List[int]], depth: List[List[int]], gen_tokens: int) -> Dict[str, Any]:
        if len(prompt) != 1:
            raise ValueError("llama_cpp runs one sequence per generation (batch 1); got batch %d" % len(prompt))
        llm = self._llm
        llm.reset()
        if depth[0]:
            llm.eval(depth[0])
            self._next()
        lc, ctx, ids = self._lc, llm.ctx, prompt[0]
        n_batch = int(lc.llama_n_batch(ctx))  # the context's: llama.cpp clamps n_batch to n_ctx (more aborts it)
        lc.llama_memory_seq_rm(lc.llama_get_memory(ctx), -1, llm.n_tokens, -1)  # what eval would drop
        chunks = [(lc.llama_token * len(part))(*part) for part in (ids[i:i + n_batch]
                                                                   for i in range(0, len(ids), n_batch))]
        batches = [lc.llama_batch_get_one(arr, len(arr)) for arr in chunks]  # built before the clock; point into chunks
        argmax = _Argmax(lc, ctx, int(llm.n_vocab()))
        lc.llama_perf_context_reset(ctx)
        clock = time.perf_counter_ns
        t0 = clock()
        for batch in batches:  # the prompt's decode, as llama-bench's pp: no Python per token (Llama.eval: ~3 %)
            if lc.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed on the %d-token prompt (context %d tokens): give n_ctx room "
                                   "for the prompt and the generation" % (len(ids), self._settings["n_ctx"]))
        token = argmax()
        t1 = clock()
        llm.n_tokens += len(ids)
        stamps = [t1]
        self._decode_greedy(token, gen_tokens - 1, stamps, argmax)
        token_ns = [b - a for a, b in zip(stamps, stamps[1:])]
        produced, last = len(stamps), stamps[-1]
        cache = CACHE_TYPES[self._settings["cache_type"]]
        facts = self.model_facts()
        kv = {"dtype": self._settings["cache_type"], "dtype_bytes": cache[1],
              "allocated_tokens": self._settings["n_ctx"],
              "extra_bytes_per_token_head": cache[2] * facts["head_size"] / 32.0}
        return {"t0_ns": t0, "ttft_ns": t1 - t0, "prefill_ns": None, "token_ns": token_ns, "e2e_ns": last - t0,
                "tokens_out": produced, "kv": kv, "runtime_metrics": self._perf()}

    def close_generation(self) -> None:
        if self._llm is not None:
            self._llm.reset()

    def kv_probe(self, read: Any, context_limit: int) -> Dict[str, Any]:
        return {"method": None, "points": [],
                "note": "llama.cpp allocates the whole n_ctx cache (%d tokens) when the context is made: no growth "
                        "to probe; kv_cache_bytes_allocated is that cache" % self._settings.get("n_ctx", 0)}

    def tokenize(self, text: str) -> List[int]:
        """The GGUF's own tokenizer (BOS only where its metadata asks for one)."""
        return [int(t) for t in self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)]

    def logits(self, ids: List[int]) -> Any:
        import numpy as np

        if len(ids) > self._settings["n_ctx"]:
            raise ValueError("a %d-token window exceeds the scoring context of %d tokens (the smallest of n_ctx, "
                             "the model's trained context and %d): score shorter windows"
                             % (len(ids), self._settings["n_ctx"], _SCORING_CTX))
        self._llm.reset()
        self._llm.eval(ids)
        return np.array(self._llm.scores[:len(ids)], dtype=np.float32)

    def greedy(self, ids: List[int], tokens: int) -> List[int]:
        self._llm.reset()
        self._llm.eval(ids)
        first = self._next()
        return [first] + self._decode_greedy(first, tokens - 1)

    def details(self) -> Dict[str, Any]:
        info: Dict[str, Any] = {"model_file": self._path, "file_bytes": os.path.getsize(self._path)
                                if self._path and os.path.isfile(self._path) else None}
        info.update(self._settings)
        info.update(rss_file_kb=_status_kb("RssFile"), rss_anon_kb=_status_kb("RssAnon"),
                    memory_note="weights mmap'd from the file: RSS counts its touched pages within RssFile (every "
                                "file-backed page: the GGUF's and the shared libraries'; shared and reclaimable), the "
                                "KV cache and compute buffers are RssAnon" if self._settings.get("use_mmap")
                                else "weights read into private memory (use_mmap false): RssAnon holds them whole")
        return info
