"""``summary.md``: a short Markdown summary to post as a pull-request comment."""

from __future__ import annotations

from ..bench.llm.result import LlmBenchResult
from ..metrics.cells import MetricSeries
from ..metrics.kind_result import KindBenchResult
from ..qualify.result import GateStatus, QualifyResult
from ..untrusted import for_markdown, for_markdown_code

_ICON = {GateStatus.PASS: "✅ pass", GateStatus.FAIL: "❌ fail", GateStatus.ERROR: "⚠️ error"}


def _cell(text: object) -> str:
    """Text for a table cell or a list item: device text is data, so HTML, pipes and brackets are escaped
    (a ``<script>`` or ``<img onerror>`` in a device's error shows as text where the summary is rendered)."""
    return for_markdown(text)


def _code(text: object) -> str:
    """A name in a code span, or escaped text where it could break out of one (edgeopt.untrusted)."""
    return for_markdown_code(text)


def _value(value: float | None, unit: str) -> str:
    return "n/a" if value is None else f"{value:.4g} {unit}".strip()


def render_markdown(result: QualifyResult) -> str:
    """The summary as Markdown text."""
    verdict = {0: "✅ PASS", 1: "❌ FAIL", 3: "⚠️ DEVICE ERROR"}.get(result.exit_code, "❌ FAIL")
    gates = result.gate_results()
    passed = sum(g.status is GateStatus.PASS for g in gates)
    source = {"recipe": f"optimized with recipe {_code(result.model.recipe)}", "optimized": "an optimized file",
              "model": "as given (not optimized)"}[result.model.source]
    lines = [
        f"## {verdict}: edgeopt qualify {_code(result.name)}",
        "",
        f"{passed}/{len(gates)} gates passed on {len(result.devices)} device(s) · model "
        f"{_code(result.model.reference_path.rsplit('/', 1)[-1])} "
        f"(sha256 {_code(result.model.reference_sha256[:12])}) · "
        f"{source} · {result.seconds:.0f} s",
        "",
        "| device | gate | measured | limit | verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    for g in gates:
        measured = _value(g.measured, g.unit) + (" (ESTIMATE)" if g.estimate else "")
        limit = f"{g.comparison} {g.threshold:.4g} {g.unit}".strip()
        lines.append(f"| {_cell(g.device)} | {_cell(g.metric)} | {_cell(measured)} | {_cell(limit)} | "
                     f"{_ICON[g.status]} |")
    failing = [g for g in gates if g.status is not GateStatus.PASS]
    if failing:
        lines += ["", "**Why it failed**", ""]
        lines += [f"- {_code(g.device)} {_cell(g.gate)}: {_cell(g.detail)}" for g in failing]
    lines += ["", "<details><summary>Measurements</summary>", ""]
    for d in result.devices:
        if d.llm is not None:
            lines += _llm_lines(d.label, d.target, d.llm)
            continue
        if d.kind_bench is not None:
            lines += _kind_lines(d.label, d.target, d.kind_bench)
            continue
        if d.bench is None:
            lines.append(f"- {_code(d.label)}: device error: {_cell(d.error or '')}")
            continue
        b = d.bench
        energy = "n/a"
        if b.energy is not None and b.energy.energy_per_inference_mj is not None:
            energy = f"{b.energy.energy_per_inference_mj:.4g} mJ" + (" (ESTIMATE)" if b.energy.source == "estimate"
                                                                     else " (measured)")
        cost = ""
        if d.costs is not None:
            cost = (f", {d.costs.cost_per_million:.3g} {_cell(d.costs.currency)} and "
                    f"{d.costs.co2_g_per_million:.3g} g CO2 per million inferences"
                    + (" (ESTIMATE)" if d.costs.source == "estimate" else ""))
        runtime = f"{_cell(b.runtime.name)} {_cell(b.runtime.version)}"
        lines.append(f"- {_code(d.label)} ({_cell(d.target)}, {runtime}): p50 "
                     f"{b.latency_ms.p50:.4g} ms, p99 {b.latency_ms.p99:.4g} ms, {b.throughput_ips:.4g} ips, memory "
                     f"+{_value(b.memory_mb.delta, 'MiB')}, cold start {b.cold_start_ms.total:.4g} ms, energy "
                     f"{energy}{cost}; {b.run.samples} samples" + ("" if b.valid else " — **run INVALID**"))
    lines += ["", "</details>", "", f"Full report: {_code(result.reports.get('html', 'report.html'))} · "
              f"spec sha256 {_code(result.spec_sha256[:12])} · edgeopt {_cell(result.edgeopt_version)}", ""]
    return "\n".join(lines)


def _llm_lines(label: str, target: str, b: LlmBenchResult) -> list[str]:
    """One line per LLM cell: TTFT, TPOT, decode rate, memory, KV cache, energy per decode token."""
    lines = [f"- {_code(label)} ({_cell(target)}, {_cell(b.runtime.get('name'))} {_cell(b.runtime.get('version'))}), "
             f"{b.workload.repetitions} repetitions per cell:"]
    for c in b.cells:
        energy = "n/a" if c.energy_decode_mj_per_token is None else \
            f"{c.energy_decode_mj_per_token:.4g} mJ/token" + (" (ESTIMATE)" if c.energy_source == "estimate" else "")
        lines.append(f"  - prompt {c.prompt_tokens}, gen {c.gen_tokens}, depth {c.context_depth}, batch {c.batch}: "
                     f"TTFT p50 {_value(c.ttft_ms_p50, 'ms')}, TPOT p50 {_value(c.tpot_ms_p50, 'ms')} / p99 "
                     f"{_value(c.tpot_ms_p99, 'ms')}, {_value(c.decode_tokens_per_s, 'tokens/s')}, peak RSS "
                     f"{_value(c.peak_rss_mb, 'MiB')}, decode energy {energy}"
                     + ("" if c.valid else " — **cell INVALID**"))
    return lines


def _kind_lines(label: str, target: str, k: KindBenchResult) -> list[str]:
    """One line per cell of a plug-in kind's run: each metric's summary."""
    def summary(s: MetricSeries) -> str:
        return f"{_cell(s.metric)} " + " / ".join(f"{_cell(n)} {v:.4g}" for n, v in s.summary.items())

    return [f"- {_code(label)} ({_cell(target)}), {_cell(k.model_kind)} cell {_cell(c.key or '-')}: "
            + ", ".join(summary(s) for s in c.series) for c in k.cells]
