"""Terminal table of an :class:`LlmBenchResult`: one row per cell, invalid cells marked with their reasons."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ...untrusted import for_rich
from .fleet import LlmFleetResult
from .result import LlmBenchResult, LlmCell, LlmLoad


def _f(value: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if value is None else fmt.format(value)


def _row(c: LlmCell) -> list[str]:
    return [str(c.prompt_tokens), str(c.gen_tokens), str(c.context_depth), str(c.batch), str(c.threads or "auto"),
            _f(c.ttft_ms_p50), _f(c.ttft_ms_p90), _f(c.prefill_tokens_per_s, "{:,.0f}"), _f(c.tpot_ms_p50),
            _f(c.tpot_ms_p99), _f(c.decode_tokens_per_s, "{:,.1f}"), _f(c.e2e_ms_p50, "{:.1f}"),
            _f(c.peak_rss_mb, "{:.0f}"), _f(None if c.kv_cache_bytes is None else c.kv_cache_bytes / 2**20, "{:.2f}"),
            _energy(c.energy_prefill_mj_per_token, c.energy_source),
            _energy(c.energy_decode_mj_per_token, c.energy_source), "yes" if c.valid else "[red]no[/red]"]


def _energy(value: float | None, source: str | None) -> str:
    return "-" if value is None else ("ESTIMATE " if source == "estimate" else "") + f"{value:.3g}"


def _probe(out: Console, ld: LlmLoad, cells: list[LlmCell]) -> None:
    """One line: the load's measured KV bytes per token beside the formula's, or why it was not measured."""
    probe = ld.kv_probe
    if probe is None:
        return
    if probe.bytes_per_token is None:
        out.print(f"  KV measured: - ({for_rich(probe.note)})", soft_wrap=True)
        return
    cell = next((c for c in cells if c.threads == ld.threads and c.kv_bytes_per_token_predicted), None)
    pred = f", predicted {cell.kv_bytes_per_token_predicted:,.0f} ({cell.kv_measured_ratio})" if cell else ""
    out.print(f"  KV measured ({for_rich(probe.method)}, memory in use): {probe.bytes_per_token:,.0f} B/token{pred}; "
              f"raw RSS {_f(probe.raw_bytes_per_token, '{:,.0f}')} B/token", soft_wrap=True)


def render_llm_bench(r: LlmBenchResult, console: Console | None = None) -> None:
    out = console or Console()
    if not out.is_terminal:  # piped: never squeeze the numbers into 80 columns
        out = Console(width=200)
    rt = r.runtime
    t = Table(title=f"bench {for_rich(r.model_path)} ({for_rich(r.runner)}, {for_rich(rt.get('name'))} "
                    f"{for_rich(rt.get('version'))}, {r.workload.repetitions} reps)")
    for col in ("prompt", "gen", "depth", "batch", "thr", "TTFT p50 ms", "TTFT p90 ms", "prefill tok/s",
                "TPOT p50 ms", "TPOT p99 ms", "decode tok/s", "e2e ms", "peak RSS MB", "KV MiB", "prefill mJ/tok",
                "decode mJ/tok", "valid"):
        t.add_column(col, justify="right", no_wrap=True)
    for cell in r.cells:
        t.add_row(*_row(cell))
    out.print(t)
    for ld in r.loads:
        growth = "" if ld.rss_growth_mb is None else f", +{ld.rss_growth_mb:.1f} MB RSS"
        out.print(f"load (threads {ld.threads or 'auto'}): {_f(ld.load_ms, '{:.1f}')} ms{growth}")
        if ld.energy is not None:
            out.print(f"  power: {ld.energy.active_power_w:.3g} W ({for_rich(ld.energy.note)})", soft_wrap=True)
        _probe(out, ld, r.cells)
        tr = ld.trace
        if tr is not None and tr.available:
            out.print(f"  clock {_f(tr.clock_mhz_min, '{:.0f}')}..{_f(tr.clock_mhz_max, '{:.0f}')} MHz, hottest "
                      f"{_f(tr.temperature_c_max, '{:.1f}')} degC over {len(tr.points)} readings")
    if r.deployment is not None:  # a deployment ran: its files, exactly its settings
        out.print(f"deployment {for_rich(r.deployment.name)} ({for_rich(r.deployment.path)})", soft_wrap=True)
    for warning in r.warnings:
        out.print(f"[yellow]warning[/yellow]: {for_rich(warning)}", soft_wrap=True)
    if r.target_mismatch:
        out.print(f"[red]TARGET MISMATCH[/red]: not {for_rich(r.target)} hardware: "
                  f"{for_rich('; '.join(r.target_mismatch))}",
                  soft_wrap=True)
    for i, cell in enumerate(r.cells):
        for why in cell.invalid_reasons:
            out.print(f"[yellow]cell {i + 1} invalid[/yellow]: {for_rich(why)}", soft_wrap=True)


def render_llm_fleet(r: LlmFleetResult, console: Console | None = None) -> None:
    """One row per device and cell: TTFT, TPOT, decode rate, peak RSS; a failed device's row says why."""
    out = console or Console()
    if not out.is_terminal:
        out = Console(width=200)
    t = Table(title=f"fleet bench {for_rich(r.model)} on {len(r.rows)} device(s) ({for_rich(r.executor)}, "
                    f"{r.jobs} at a time)")
    for col in ("device", "cell", "TTFT p50 ms", "TPOT p50 ms", "TPOT p99 ms", "decode tok/s", "peak RSS MB",
                "decode mJ/tok", "valid"):
        t.add_column(col, justify="left" if col in ("device", "cell") else "right", no_wrap=True)
    for row in r.rows:
        if row.result is None:
            t.add_row(for_rich(row.device), "-", "-", "-", "-", "-", "-", "-",
                      f"[red]{for_rich(row.error_kind)}: {for_rich(row.error)}[/red]")
            continue
        for c in row.result.cells:
            t.add_row(for_rich(row.device), f"p{c.prompt_tokens} g{c.gen_tokens} d{c.context_depth} b{c.batch}",
                      _f(c.ttft_ms_p50), _f(c.tpot_ms_p50), _f(c.tpot_ms_p99), _f(c.decode_tokens_per_s, "{:,.1f}"),
                      _f(c.peak_rss_mb, "{:.0f}"), _energy(c.energy_decode_mj_per_token, c.energy_source),
                      "yes" if c.valid else "[red]no[/red]")
    out.print(t)
