"""Terminal table of an :class:`LlmBenchResult`: one row per cell, invalid cells marked with their reasons."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ...untrusted import for_rich
from .result import LlmBenchResult, LlmCell


def _f(value: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if value is None else fmt.format(value)


def _row(c: LlmCell) -> list[str]:
    return [str(c.prompt_tokens), str(c.gen_tokens), str(c.context_depth), str(c.batch), str(c.threads or "auto"),
            _f(c.ttft_ms_p50), _f(c.ttft_ms_p90), _f(c.prefill_tokens_per_s, "{:,.0f}"), _f(c.tpot_ms_p50),
            _f(c.tpot_ms_p99), _f(c.decode_tokens_per_s, "{:,.1f}"), _f(c.e2e_ms_p50, "{:.1f}"),
            _f(c.peak_rss_mb, "{:.0f}"), _f(None if c.kv_cache_bytes is None else c.kv_cache_bytes / 2**20, "{:.2f}"),
            "yes" if c.valid else "[red]no[/red]"]


def render_llm_bench(r: LlmBenchResult, console: Console | None = None) -> None:
    out = console or Console()
    if not out.is_terminal:  # piped: never squeeze the numbers into 80 columns
        out = Console(width=200)
    rt = r.runtime
    t = Table(title=f"bench {escape(r.model_path)} ({r.runner}, {for_rich(rt.get('name'))} "
                    f"{for_rich(rt.get('version'))}, {r.workload.repetitions} reps)")
    for col in ("prompt", "gen", "depth", "batch", "thr", "TTFT p50 ms", "TTFT p90 ms", "prefill tok/s",
                "TPOT p50 ms", "TPOT p99 ms", "decode tok/s", "e2e ms", "peak RSS MB", "KV MiB", "valid"):
        t.add_column(col, justify="right", no_wrap=True)
    for cell in r.cells:
        t.add_row(*_row(cell))
    out.print(t)
    for ld in r.loads:
        growth = "" if ld.rss_growth_mb is None else f", +{ld.rss_growth_mb:.1f} MB RSS"
        out.print(f"load (threads {ld.threads or 'auto'}): {ld.load_ms:.1f} ms{growth}")
    for i, cell in enumerate(r.cells):
        for why in cell.invalid_reasons:
            out.print(f"[yellow]cell {i + 1} invalid[/yellow]: {why}", soft_wrap=True)
