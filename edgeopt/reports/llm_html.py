"""The LLM part of ``report.html``: per device, the cells' table, TPOT over the generation and TTFT vs prompt
length (inline SVG, :mod:`.charts.series`), energy per token and the clock/temperature trace."""

from __future__ import annotations

from collections import defaultdict

from ..bench.llm.result import LlmBenchResult, LlmCell
from ..history.llm_compare import cell_key
from ..qualify.result import DeviceResult, QualifyResult
from ..untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from .charts.series import series_chart


def _n(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}g}"


def _limit(result: QualifyResult, gate: str) -> float | None:
    g = result.spec.get("gates", {}).get(gate) or {}
    return g.get("max_ms")


def _tpot_chart(b: LlmBenchResult, limit: float | None) -> str:
    series = [(cell_key(c), [(float(i + 2), v) for i, v in enumerate(c.tpot_trace_ms)]) for c in b.cells
              if c.tpot_trace_ms]
    return series_chart(series, x_label="output token", y_label="TPOT, median (ms)",
                        title="TPOT over the generation", limit=("TPOT gate", limit) if limit else None)


def _ttft_chart(b: LlmBenchResult, limit: float | None) -> str:
    lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for c in sorted(b.cells, key=lambda c: c.prompt_tokens):
        if c.ttft_ms_p50 is not None:
            lines[f"g{c.gen_tokens} d{c.context_depth} b{c.batch} t{c.threads} p50"].append(
                (float(c.prompt_tokens), c.ttft_ms_p50))
    return series_chart(list(lines.items()), x_label="prompt tokens", y_label="TTFT p50 (ms)",
                        title="TTFT vs prompt length", limit=("TTFT gate", limit) if limit else None, points=True)


def _row(c: LlmCell) -> list[str]:
    energy = "" if c.energy_decode_mj_per_token is None else \
        f"{_n(c.energy_prefill_mj_per_token)} / {_n(c.energy_decode_mj_per_token)}" + \
        (" <span class=\"estimate\">ESTIMATE</span>" if c.energy_source == "estimate" else "")
    return [escape(cell_key(c)), _n(c.ttft_ms_p50), _n(c.ttft_ms_p90), _n(c.tpot_ms_p50), _n(c.tpot_ms_p99),
            _n(c.decode_tokens_per_s), _n(c.peak_rss_mb), _n(None if c.kv_cache_bytes is None else
                                                              c.kv_cache_bytes / 2**20), energy,
            "yes" if c.valid else escape("no: " + "; ".join(c.invalid_reasons))]


def _trace(b: LlmBenchResult) -> str:
    out = []
    for ld in b.loads:
        tr = ld.trace
        if tr is None or not tr.available:
            out.append(f"threads {ld.threads or 'auto'}: no clock/temperature files on the device")
            continue
        out.append(f"threads {ld.threads or 'auto'}: highest CPU clock {_n(tr.clock_mhz_min)}..{_n(tr.clock_mhz_max)} "
                   f"MHz, hottest zone {_n(tr.temperature_c_max)} degC over {len(tr.points)} readings")
    return "".join(f'<p class="note">{escape(line)}</p>' for line in out)


def llm_device_section(d: DeviceResult, result: QualifyResult) -> str:
    """A device's LLM measurements (the device heading is the caller's)."""
    b = d.llm
    if b is None:
        return ""
    head = ["cell (prompt gen depth batch threads)", "TTFT p50 ms", "TTFT p90 ms", "TPOT p50 ms", "TPOT p99 ms",
            "decode tok/s", "peak RSS MiB", "KV MiB", "prefill / decode mJ per token", "valid"]
    table = "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>" + "".join(
        "<tr>" + "".join(f"<td>{v}</td>" for v in _row(c)) + "</tr>" for c in b.cells) + "</table>"
    runtime = f"{b.runtime.get('name')} {b.runtime.get('version')}"
    return (f"<h3>Generation ({escape(runtime)}, {b.workload.repetitions} repetitions per cell)</h3>"
            f'<div class="scroll">{table}</div>'
            f'<div class="charts">{_tpot_chart(b, _limit(result, "tpot_ms"))}'
            f'{_ttft_chart(b, _limit(result, "ttft_ms"))}</div>' + _trace(b))
