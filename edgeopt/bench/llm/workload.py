"""The workload of a generative bench: llama-bench's list-valued axes and the repetition rules."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ...registry.flag_spec import Flag


class LlmWorkload(BaseModel):
    """Every combination of the list-valued axes is one cell (threads values each load the model once).

    A field with a :class:`~edgeopt.registry.flag_spec.Flag` is a flag of ``edgeopt bench`` (the generative kind's
    ``workload``; edgeopt/cli/kind_flags.py); ``batch``, ``threads``, ``seed`` and ``max_duration_s`` take bench's
    ``--batch``/``--threads`` lists, ``--seed`` and ``--max-duration``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_tokens: Annotated[tuple[int, ...], Flag(
        "--prompt-tokens", "LLM folders: prompt lengths in tokens [default: 128].", min=1)] = Field(
        default=(128,), min_length=1, description="Prompt lengths, tokens.")
    gen_tokens: Annotated[tuple[int, ...], Flag(
        "--gen-tokens", "LLM folders: new tokens per generation, EOS ignored [default: 128].", min=1)] = Field(
        default=(128,), min_length=1, description="New tokens per generation (fixed: EOS is ignored).")
    context_depth: Annotated[tuple[int, ...], Flag(
        "--context-depth", "LLM folders: tokens in the KV cache before the prompt [default: 0].", min=0)] = Field(
        default=(0,), min_length=1, description="Tokens already in the KV cache before the prompt (untimed), "
        "llama-bench's -d.")
    batch: tuple[int, ...] = Field(default=(1,), min_length=1, description="Sequences generated together.")
    threads: tuple[int, ...] = Field(default=(0,), min_length=1, description="CPU threads (0: the runtime's).")
    repetitions: Annotated[int, Flag(
        "--repetitions", "LLM folders: timed generations per cell, interleaved across cells (p90 of TTFT needs 10).")
    ] = Field(default=10, ge=1, description="Timed generations per cell, interleaved across cells.")
    warmup: Annotated[int, Flag("--gen-warmup", "LLM folders: untimed generations per cell before the timed ones.")
                      ] = Field(default=1, ge=0, description="Untimed generations per cell before the timed ones.")
    seed: int = Field(default=0, description="Seeds the prompt token ids (one prompt per cell and repetition).")
    max_duration_s: float = Field(default=600.0, gt=0, description="Watchdog: repetitions stop after this.")
    trace_hz: float = Field(default=2.0, ge=0, le=100, description="Clock/temperature readings per second during "
                            "the timed repetitions (0: at start and end only).")
    kv_probe: Annotated[bool, Flag(
        "--kv-probe/--no-kv-probe", "LLM folders: after the timed generations, read memory in use (glibc "
        "malloc_trim) and measure KV bytes per token (seconds; ~1 min per load at 0.5 B on 2 cores).")] = Field(
        default=True, description="After the timed repetitions: one untimed generation per cell read for memory in "
        "use (glibc malloc_trim first) and the runtime's KV probe per load (measured KV bytes per token; ~1 min per "
        "load at 0.5 B parameters on 2 cores).")

    def request_dict(self) -> dict[str, Any]:
        """The agent's ``Request.generate`` (edgeopt_agent.protocol.GENERATE_DEFAULTS keys)."""
        return {"prompt_tokens": list(self.prompt_tokens), "gen_tokens": list(self.gen_tokens),
                "context_depth": list(self.context_depth), "batch": list(self.batch), "threads": list(self.threads),
                "repetitions": self.repetitions, "warmup": self.warmup, "seed": self.seed,
                "trace_hz": self.trace_hz, "kv_probe": self.kv_probe}
