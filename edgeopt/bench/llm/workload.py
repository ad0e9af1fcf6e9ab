"""The workload of a generative bench: llama-bench's list-valued axes and the repetition rules."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class LlmWorkload(BaseModel):
    """Every combination of the list-valued axes is one cell (threads values each load the model once)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_tokens: tuple[int, ...] = Field(default=(128,), min_length=1, description="Prompt lengths, tokens.")
    gen_tokens: tuple[int, ...] = Field(default=(128,), min_length=1, description="New tokens per generation "
                                        "(fixed: EOS is ignored).")
    context_depth: tuple[int, ...] = Field(default=(0,), min_length=1, description="Tokens already in the KV "
                                           "cache before the prompt (untimed), llama-bench's -d.")
    batch: tuple[int, ...] = Field(default=(1,), min_length=1, description="Sequences generated together.")
    threads: tuple[int, ...] = Field(default=(0,), min_length=1, description="CPU threads (0: the runtime's).")
    repetitions: int = Field(default=10, ge=1, description="Timed generations per cell, interleaved across cells.")
    warmup: int = Field(default=1, ge=0, description="Untimed generations per cell before the timed ones.")
    seed: int = Field(default=0, description="Seeds the prompt token ids (one prompt per cell and repetition).")
    max_duration_s: float = Field(default=600.0, gt=0, description="Watchdog: repetitions stop after this.")
    trace_hz: float = Field(default=2.0, ge=0, le=100, description="Clock/temperature readings per second during "
                            "the timed repetitions (0: at start and end only).")
    kv_probe: bool = Field(default=True, description="After the timed repetitions: one untimed generation per cell "
                           "read for memory in use (glibc malloc_trim first) and the runtime's KV probe per load "
                           "(measured KV bytes per token; ~1 min per load at 0.5 B parameters on 2 cores).")

    def request_dict(self) -> dict[str, Any]:
        """The agent's ``Request.generate`` (edgeopt_agent.protocol.GENERATE_DEFAULTS keys)."""
        return {"prompt_tokens": list(self.prompt_tokens), "gen_tokens": list(self.gen_tokens),
                "context_depth": list(self.context_depth), "batch": list(self.batch), "threads": list(self.threads),
                "repetitions": self.repetitions, "warmup": self.warmup, "seed": self.seed,
                "trace_hz": self.trace_hz, "kv_probe": self.kv_probe}
