"""``edgeopt bench LLM_FOLDER``: generative benchmarks (TTFT, TPOT, tokens/s, memory) of LLM runtime folders.

The agent's ``generate`` command measures (edgeopt_agent.generate); this package builds the request
(:mod:`.workload`), computes the statistics and the validity rule (:mod:`.stats`) into a typed result
(:mod:`.result`) and renders it (:mod:`.render`). Documented in docs/llm-bench.md.
"""

from __future__ import annotations

from .api import bench_llm
from .result import LlmBenchResult, LlmCell
from .workload import LlmWorkload

__all__ = ["LlmBenchResult", "LlmCell", "LlmWorkload", "bench_llm"]
