"""``report.html``: one self-contained page a person reads to decide whether a model ships.

No network, ever: inline CSS, inline SVG charts (``edgeopt.reports.svg``), no scripts, no fonts, no images
fetched from anywhere (the tests load it in headless Chromium and check that nothing is requested). Every
value from a spec or a device is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..metrics.kind_result import KindBenchResult
from ..metrics.result import BenchResult
from ..qualify.result import DeviceResult, GateResult, GateStatus, QualifyResult
from ..untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from . import svg
from .charts.pareto import pareto as pareto_plain
from .llm_html import llm_device_section

CSS = """
:root { --ok: #1a7f37; --bad: #cf222e; --err: #9a6700; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --bg: #f6f8fa; --accent: #0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
  margin: 0; background: #fff; }
main { max-width: 1120px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid
  var(--line); padding-bottom: 4px; } h3 { font-size: 16px; margin: 20px 0 6px; }
.sub { color: var(--muted); margin: 0 0 12px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; color: #fff; font-weight: 600;
  font-size: 13px; vertical-align: middle; }
.pass { background: var(--ok); } .fail { background: var(--bad); } .error { background: var(--err); }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.row-fail td { background: #ffebe9; } tr.row-error td { background: #fff8c5; }
.kv td:first-child { width: 260px; color: var(--muted); }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.note { color: var(--muted); font-size: 13px; } .warn { color: var(--err); }
.estimate { color: var(--err); font-weight: 600; }
h1, h2, h3, p, li { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; margin: 8px 0 16px; } .scroll > table { margin: 0; }
code { background: var(--bg); padding: 1px 4px; border-radius: 4px; font-size: 12px; word-break: break-all; }
footer { color: var(--muted); font-size: 12px; margin-top: 40px; }
"""


def _num(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}g}"


def _badge(status: str) -> str:
    return f'<span class="badge {escape(status)}">{escape(status.upper())}</span>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], row_classes: Sequence[str] = ()) -> str:
    """A table whose cells are already-escaped HTML."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if i < len(row_classes) and row_classes[i] else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _human(value: Any) -> str:
    """A mapping as ``key: value`` pairs (nested ones in parentheses), floats to 4 significant digits, nothing
    empty: what a person reads instead of a JSON dump."""
    if isinstance(value, dict):
        parts = [f"{k}: ({_human(v)})" if isinstance(v, dict) else f"{k}: {_human(v)}"
                 for k, v in value.items() if v not in (None, {}, [], "")]
        return ", ".join(parts) or "-"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_human(v) for v in value) + "]" if value else "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def _machine_memory(env: dict[str, Any]) -> str:
    total = env.get("memory_total_mb")
    text = f"{float(total) / 1024:.1f} GiB" if isinstance(total, (int, float)) else "unknown"
    governor = env.get("governor")
    return text + (f", CPU governor {governor}" if governor else ", CPU governor not reported")


def _kv(pairs: Iterable[tuple[str, Any]]) -> str:
    rows = []
    for k, v in pairs:
        text = v if isinstance(v, str) else _human(v)
        rows.append(f"<tr><td>{escape(k)}</td><td><code>{escape(text)}</code></td></tr>")
    return f'<div class="scroll"><table class="kv"><tbody>{"".join(rows)}</tbody></table></div>'


def _gate_rows(gates: Sequence[GateResult]) -> str:
    rows, classes = [], []
    for g in gates:
        measured = _num(g.measured) + (f" {escape(g.unit)}" if g.measured is not None and g.unit else "")
        if g.estimate:
            measured += ' <span class="estimate">ESTIMATE</span>'
        rows.append([escape(g.device), escape(g.gate), escape(g.metric), measured,
                     f"{escape(g.comparison)} {escape(svg.fmt(g.threshold))} {escape(g.unit)}",
                     _badge(g.status.value), escape(g.detail)])
        classes.append("" if g.status is GateStatus.PASS else f"row-{g.status.value}")
    return _table(["device", "gate", "metric", "measured", "limit", "verdict", "detail"], rows, classes)


def _latency_limit(result: QualifyResult) -> list[svg.Marker]:
    gates = result.spec.get("gates", {})
    out = []
    if gates.get("latency"):
        g = gates["latency"]
        out.append(svg.Marker(f"gate {g['percentile']} <= {svg.fmt(g['max_ms'])} ms", float(g["max_ms"]), True))
    if gates.get("fps"):
        g = gates["fps"]
        out.append(svg.Marker(f"{svg.fmt(g['fps'])} FPS budget", 1000.0 / float(g["fps"]), True))
    return out


def _latency_section(bench: BenchResult, limits: list[svg.Marker]) -> str:
    lat = bench.latency_ms
    stats = _table(["p50", "p90", "p95", "p99", "p99.9", "mean", "std", "min", "max", "samples", "throughput"],
                   [[*(f"{v:.4g} ms" for v in (lat.p50, lat.p90, lat.p95, lat.p99, lat.p999, lat.mean, lat.std,
                                              lat.min, lat.max)), str(bench.run.samples),
                     f"{bench.throughput_ips:.4g} ips"]])
    support = ", ".join(f"{k}: {'yes' if s.supported else f'NO (needs {s.required})'}"
                        for k, s in bench.percentiles_supported.items())
    charts = ""
    if bench.samples_ms:
        markers = [svg.Marker("p50", lat.p50), svg.Marker("p99", lat.p99), *limits]
        charts = ('<div class="charts">' + svg.histogram(bench.samples_ms, markers=markers)
                  + svg.cdf(bench.samples_ms, markers=markers) + "</div>")
    invalid = "".join(f'<p class="warn">INVALID: {escape(r)}</p>' for r in bench.invalid_reasons)
    return (f"<h3>Latency</h3>{stats}<p class=\"note\">Percentile support (samples): {escape(support)}</p>"
            f"{invalid}{charts}")


def _memory_section(d: DeviceResult, result: QualifyResult) -> str:
    assert d.bench is not None
    mem = d.bench.memory_mb
    gate = result.spec.get("gates", {}).get("memory") or {}
    limit = gate.get("max_mb")
    basis = gate.get("basis", "model")
    items = [("baseline (before load)", mem.baseline), ("peak (process)", mem.peak), ("model (peak - baseline)",
                                                                                      mem.delta)]
    chart = svg.bars(items, unit="MiB", limit=float(limit) if limit else None, judged=1 if basis == "process" else 2,
                     limit_label=f"gate ({basis})", title="Memory (VmHWM)")
    cold = d.bench.cold_start_ms
    return (f"<h3>Memory and cold start</h3>{chart}<p class=\"note\">Cold start: load {cold.load:.4g} ms + first "
            f"inference {cold.first_inference:.4g} ms = {cold.total:.4g} ms. Model size "
            f"{d.bench.model.size_bytes / (1 << 20):.4g} MiB.</p>")


def _energy_section(d: DeviceResult) -> str:
    assert d.bench is not None
    e = d.bench.energy
    if e is None:
        return "<h3>Energy</h3><p class=\"note\">Not measured (energy disabled, or no sensor and no TDP).</p>"
    note = escape(e.note)
    if e.source == "estimate":  # the note starts with the word; make it stand out
        note = '<span class="estimate">ESTIMATE</span>' + escape(e.note.removeprefix("ESTIMATE"))
    rows = [("energy per inference", f"{_num(e.energy_per_inference_mj)} mJ"),
            ("above idle", f"{_num(e.energy_per_inference_above_idle_mj)} mJ"),
            ("active power", f"{_num(e.active_power_w)} W"), ("idle power", f"{_num(e.idle_power_w)} W"),
            ("inferences per joule", _num(e.inferences_per_joule)), ("TOPS/W", _num(e.tops_per_watt))]
    est = ' <span class="estimate">ESTIMATE</span>' if e.source == "estimate" else ""  # on every derived number
    html = "<h3>Energy</h3><p>" + note + "</p>" + _table(["figure", "value"], [
        [escape(k), escape(v) + ("" if v.startswith("n/a") else est)] for k, v in rows])
    if d.costs is not None:
        c = d.costs
        est = ' <span class="estimate">ESTIMATE</span>' if c.source == "estimate" else ""
        html += _table(["per million inferences", "value"], [
            ["energy", f"{c.kwh_per_million:.4g} kWh{est}"],
            ["cost", f"{c.cost_per_million:.4g} {escape(c.currency)}{est}"],
            ["CO2", f"{c.co2_g_per_million:.4g} g{est}"],
        ]) + f'<p class="note">{escape(c.note)}</p>'
    return html


def _deadline_section(d: DeviceResult) -> str:
    if d.paced is None or d.paced.deadline is None:
        return ""
    s = d.paced.deadline
    return "<h3>Frame-paced load</h3>" + _table(
        ["fps", "frame budget", "frames", "late frames", "miss rate", "late starts", "response p50",
         "response p99", "max start lateness"],
        [[f"{s.fps:g}", f"{s.budget_ms:.4g} ms", str(s.frames), str(s.misses), f"{s.miss_pct:.3g} %",
          str(s.late_starts), f"{_num(s.response_ms_p50)} ms", f"{_num(s.response_ms_p99)} ms",
          f"{s.max_lateness_ms:.4g} ms"]])


def _regression_section(d: DeviceResult) -> str:
    r = d.regression
    if r is None:
        return ""
    if r.comparison is None:
        return (f"<h3>Regression</h3><p class=\"note\">No comparable baseline '{escape(r.baseline)}' for this "
                "device.</p>")
    c = r.comparison
    return "<h3>Regression vs baseline</h3>" + _table(
        ["baseline", "median A", "median B", "ratio (95 % CI)", "p-value", "effect size P(B>A)", "verdict"],
        [[f"{escape(r.baseline)} (run {r.baseline_run})", f"{c.median_a_ms:.4g} ms", f"{c.median_b_ms:.4g} ms",
          f"{c.median_ratio:.4f} ({c.ratio_ci_low:.4f}-{c.ratio_ci_high:.4f})", f"{c.p_value:.3g}",
          f"{c.effect_size:.3f}", escape(c.verdict.value)]]) + f'<p class="note">{escape(c.explanation)}</p>'


def _kind_section(k: KindBenchResult) -> str:
    """A plug-in kind's run: one row per cell and metric (its summary), the workload, and why a run is invalid."""
    rows = [[escape(c.key or "-"), escape(s.metric), escape(s.unit),
             *(_num(s.summary.get(x)) for x in ("p50", "p90", "p99", "mean", "value")),
             str(len(s.readings)) if s.readings else "-"] for c in k.cells for s in c.series]
    facts = [("model kind", k.model_kind), ("format", k.model_format),
             ("runtime", f"{k.runtime.name} {k.runtime.version}"), ("workload", k.workload)]
    invalid = "".join(f'<p class="warn">INVALID: {escape(r)}</p>' for r in k.invalid_reasons)
    mismatch = (f'<p class="warn"><b>TARGET MISMATCH</b>: {escape("; ".join(k.target_mismatch))}</p>'
                if k.target_mismatch else "")
    return (mismatch + invalid + "<h3>Cells</h3>" + _table(
        ("cell", "metric", "unit", "p50", "p90", "p99", "mean", "value", "readings"), rows) + _kv(facts))


def _device_section(d: DeviceResult, result: QualifyResult) -> str:
    status = "pass" if d.passed else "error" if d.status == "error" else "fail"
    head = (f'<h2 id="dev-{escape(d.label)}">Device {escape(d.label)} {_badge(status)}</h2><p class="sub">target '
            f"<code>{escape(d.target)}</code>, runner <code>{escape(d.runner or '')}</code></p>")
    if d.llm is not None:
        return head + llm_device_section(d, result)
    if d.kind_bench is not None:
        return head + _kind_section(d.kind_bench)
    if d.bench is None:
        return head + f'<p class="warn">Device error: {escape(d.error or "unknown")}</p>'
    b = d.bench
    warnings = "".join(f'<p class="note">warning: {escape(w)}</p>' for w in b.warnings
                       if not w.startswith("TARGET MISMATCH"))  # shown in red at the top instead
    mismatch = (f'<p class="warn"><b>TARGET MISMATCH</b>: measured on hardware that is not {escape(d.target)}: '
                f'{escape("; ".join(b.target_mismatch))}</p>' if b.target_mismatch else "")
    return (head + mismatch + _latency_section(b, _latency_limit(result)) + _memory_section(d, result)
            + _energy_section(d) + _deadline_section(d) + _regression_section(d) + warnings)


def _retention_section(result: QualifyResult) -> str:
    if not result.retention:
        return ""
    rows = [[escape(t), escape(r.metric), _num(r.reference_value), _num(r.candidate_value), _num(r.retention),
             str(r.samples), escape(r.data), escape(r.evaluated_on), escape("; ".join(r.notes))]
            for t, r in result.retention.items()]
    return "<h2>Retention</h2>" + _table(["target", "metric", "reference", "qualified", "retention", "samples",
                                          "data", "computed on", "notes"], rows)


def _pareto_section(result: QualifyResult) -> str:
    if not result.sweep:
        return ""
    points = [(p.label, p.latency_ms, p.retention) for p in result.sweep]
    front = set(svg.pareto_front(points))
    rows = [[escape(p.label), f"{p.latency_ms:.4g}", f"{p.retention:.4f}", "yes" if i in front else ""]
            for i, p in enumerate(result.sweep)]
    gate = result.spec.get("gates", {}).get("retention") or {}
    chart = pareto_plain(points, min_retention=gate.get("min_ratio"))
    return ("<h2>Sweep: Pareto front</h2>" + '<div class="charts">' + chart + "</div>"
            + _table(["point", "latency (ms)", "retention", "on the front"], rows))


def _repro_section(result: QualifyResult) -> str:
    fp = result.fingerprint
    pairs: list[tuple[str, Any]] = [
        ("spec", f"{result.spec_path} (sha256 {result.spec_sha256})"),
        ("profiles", ", ".join(result.profiles) or "none"),
        ("reference model", f"{result.model.reference_path} (sha256 {result.model.reference_sha256})"),
        *((f"qualified model [{t}]", f"{result.model.qualified[t]} (sha256 {sha})")
          for t, sha in result.model.qualified_sha256.items()),
        ("recipe", result.model.recipe or "none"),
        ("seed", str(fp.get("seed"))),
        ("measurement settings", fp.get("measure", {})),
        ("host", fp.get("host", {})),
        ("history", f"{result.history_db or 'not recorded'} (group {result.group_id})"),
    ]
    html = "<h2>Environment and reproducibility</h2>" + _kv(pairs)
    for d in result.devices:
        if d.bench is None:
            continue
        env = d.bench.environment
        html += f"<h3>{escape(d.label)}</h3>" + _kv([
            ("machine", f"{env.get('cpu')} x{env.get('cores')} ({env.get('machine')}), {env.get('os')}"),
            ("memory", _machine_memory(env)),
            ("python / numpy", f"{env.get('python')} / {env.get('numpy')}"),
            ("runtime", f"{d.bench.runtime.name} {d.bench.runtime.version}"),
            ("settings", d.bench.settings.model_dump(mode="json")),
            ("history run", str(d.history_run_id) if d.history_run_id is not None else "not recorded"),
        ])
    return html


def render_html(result: QualifyResult) -> str:
    """The whole report as one HTML string."""
    status = "pass" if result.exit_code == 0 else "error" if result.exit_code == 3 else "fail"
    gates = result.gate_results()
    passed = sum(g.status is GateStatus.PASS for g in gates)
    warnings = "".join(f'<p class="warn">{escape(w)}</p>' for w in result.warnings)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>edgeopt qualify {escape(result.name)}: {status.upper()}</title>",
        f"<style>{CSS}{svg.CHART_CSS}</style></head><body><main>",
        f"<h1>Qualification <code>{escape(result.name)}</code> {_badge(status)}</h1>",
        f'<p class="sub">{escape(result.description)}</p>',
        f'<p class="sub">{passed}/{len(gates)} gates passed on {len(result.devices)} device(s) &middot; started '
        f"{escape(result.started_at)} &middot; {result.seconds:.1f} s &middot; edgeopt "
        f"{escape(result.edgeopt_version)} &middot; exit code {result.exit_code}</p>",
        warnings,
        "<h2>Gates</h2>",
        _gate_rows(gates),
        _retention_section(result),
        *(_device_section(d, result) for d in result.devices),
        _pareto_section(result),
        _repro_section(result),
        f"<footer>result.json schema {escape(result.schema_version)}; this page is self-contained (no scripts, "
        "no network).</footer>",
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p)
