"""What a generative (LLM) runtime implements for the ``generate`` command, on top of :class:`Runtime`.

The measurement loop (``edgeopt_agent.generate``) owns the workload, the repetitions and their order; a runtime
loads a model folder once per thread count and runs one timed generation at a time, returning raw clock readings
(``time.perf_counter_ns``). Per-inference methods of :class:`Runtime` (``inputs``/``bind``) refuse with a line
that says to use ``generate``: an LLM folder has no single forward pass to time.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from ..protocol import TensorInfo
from .base import Runtime

NOT_A_GRAPH = ("%s runs generative model folders: measure it with 'edgeopt bench LLM_FOLDER' (the agent's "
               "'generate' command), not the per-inference 'run'")


class GenerativeRuntime(Runtime):
    """A runtime of LLM folders. Subclasses set ``name``/``formats``/``packages`` and implement the methods below."""

    generative = True
    #: Workload features the runtime supports; a cell asking for another is reported invalid with the reason.
    supports_context_depth = True

    def model_facts(self) -> Dict[str, Any]:
        """Decoder facts for the KV-cache formula: ``layers``, ``kv_heads``, ``head_size``, ``vocab_size``,
        ``context_length`` (max tokens), ``kv_dtype_bytes`` (None when unknown) and where they were read."""
        raise NotImplementedError

    def generate_once(self, prompt: List[List[int]], depth: List[List[int]], gen_tokens: int) -> Dict[str, Any]:
        """One timed generation of exactly ``gen_tokens`` new tokens per sequence (EOS ignored).

        ``depth`` (possibly empty rows) is put in the KV cache first, untimed; then ``prompt`` is timed. Returns
        ``ttft_ns`` (prompt in until the first new token is out, prefill included), ``prefill_ns`` (the prompt's
        forward pass alone where the runtime separates it, else None), ``token_ns`` (the gap before each later
        token, ``gen_tokens - 1`` values), ``e2e_ns``, ``tokens_out`` (new tokens produced per sequence) and
        ``kv`` (``{"dtype_bytes", "shape"}`` of one layer's cache as allocated, or ``{}``) and ``t0_ns`` (the
        ``perf_counter_ns`` reading the prompt's timing starts from: the phases' energy is split on it).
        """
        raise NotImplementedError

    def close_generation(self) -> None:
        """Drop what the last generation holds (its KV cache), so RSS reads between cells are comparable."""

    def kv_probe(self, read: Callable[[], Dict[str, Any]], context_limit: int) -> Dict[str, Any]:
        """Untimed generations that make the KV cache grow by known token counts, reading the memory in use
        (``read()``: ``{"raw_kb", "in_use_kb", "trim_s"}``) at each; the host fits bytes per token from them.

        Returns ``method`` (how the cache grows, or None), ``points`` (``[cache tokens, in_use_kb, raw_kb]``)
        and ``note``. Runs after the timed repetitions (it may replace the loaded model's state); contexts stay
        within ``context_limit`` tokens. Default: no probe, with the reason."""
        return {"method": None, "points": [], "note": "the %s runtime has no KV probe" % self.name}

    # --- scoring (the ``evaluate`` command on an LLM folder: edgeopt_agent.llm_eval) ---
    def load_scoring(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        """Load what :meth:`tokenize`, :meth:`logits` and :meth:`greedy` need (default: :meth:`load`)."""
        self.load(model_path, options, threads)

    def tokenize(self, text: str) -> List[int]:
        """``text`` as token ids by the folder's own tokenizer."""
        raise NotImplementedError

    def logits(self, ids: List[int]) -> Any:
        """Next-token logits (numpy ``[len(ids), vocab]``) of one sequence from an empty cache: teacher forcing."""
        raise NotImplementedError

    def greedy(self, ids: List[int], tokens: int) -> List[int]:
        """``tokens`` new token ids after ``ids``, argmax each step (EOS ignored)."""
        raise NotImplementedError

    # --- the per-inference interface does not apply ---
    def inputs(self) -> List[TensorInfo]:
        raise RuntimeError(NOT_A_GRAPH % self.name)

    def outputs(self) -> List[TensorInfo]:
        raise RuntimeError(NOT_A_GRAPH % self.name)

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        raise RuntimeError(NOT_A_GRAPH % self.name)
