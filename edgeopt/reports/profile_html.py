"""HTML of a per-layer profile: a section the report can include, and a standalone page (``--html``).

Self-contained like ``report.html``: inline SVG (with its ``xmlns``, so the chart also opens on its own), no
scripts, nothing fetched; every name from a device or a model is escaped. Bars are coloured by the precision the
layer ran in, so float layers inside an INT8 model stand out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..profile.render import header, roof_text
from ..profile.schema import LayerOrigin, LayerRecord, ProfileComparison, ProfileResult
from ..untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from .charts.scale import log_range, wants_log
from .charts.text import shorten
from .html_report import CSS

SVG_NS = "http://www.w3.org/2000/svg"
WIDTH = 760
_LABEL_W, _VALUE_W, _ROW_H, _BAR_H = 270, 120, 22, 14
_FILLS = {"int": "#1a7f37", "float": "#0969da", "inserted": "#bf8700", "other": "#8c959f", "a": "#8c959f",
          "b": "#0969da"}
_LABEL_MAX = 40


def _short(text: str) -> str:
    """At most :data:`_LABEL_MAX` characters, and never wider than the label column (the bar's tooltip has it all)."""
    text = text if len(text) <= _LABEL_MAX else text[: _LABEL_MAX - 1] + "\u2026"
    return shorten(text, 11, _LABEL_W - 12)


def _kind(layer: LayerRecord) -> str:
    if layer.origin is LayerOrigin.INSERTED:
        return "inserted"
    if layer.precision.is_float:
        return "float"
    return "int" if layer.precision.value.startswith("int") else "other"


def _svg(body: list[str], title: str, height: int) -> str:
    return (f'<svg xmlns="{SVG_NS}" class="chart profile-chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
            f'height="{height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
            + "".join(body) + "</svg>")


def _floor(values: Sequence[float]) -> float | None:
    """The left end of a log axis when the bars span more than 10x (None: linear from 0)."""
    return log_range(min(values), max(values), 2.0)[0] if wants_log(values) else None


def _bar(y: float, value: float, top: float, kind: str, tip: str, floor: float | None = None) -> str:
    span = WIDTH - _LABEL_W - _VALUE_W
    if floor is not None and value > 0:
        width = max(1.0, math.log10(value / floor) / math.log10(top / floor) * span)
    else:
        width = max(1.0, value / top * span) if top > 0 else 1.0
    return (f'<rect class="pbar pbar-{kind}" x="{_LABEL_W}" y="{y:.1f}" width="{width:.1f}" height="{_BAR_H}" '
            f'fill="{_FILLS[kind]}"><title>{escape(tip)}</title></rect>'
            f'<text class="tick" x="{_LABEL_W + width + 4:.1f}" y="{y + _BAR_H - 3:.1f}" font-size="11">'
            f"{value:.4g} ms</text>")


def _label(y: float, text: str) -> str:
    return (f'<text class="tick" x="{_LABEL_W - 6}" y="{y + _BAR_H - 3:.1f}" text-anchor="end" font-size="11">'
            f"{escape(_short(text))}</text>")


def _caption(y: float, floor: float | None) -> str:
    """What the bars measure and in which unit (their axis has no ticks: each bar says its value)."""
    return (f'<text class="label" x="{_LABEL_W}" y="{y:.1f}" font-size="12">median time per inference (ms)'
            f'{", log scale" if floor is not None else ""}</text>')


def _legend(y: float, items: Sequence[tuple[str, str]]) -> list[str]:
    out, x = [], _LABEL_W
    for kind, text in items:
        out.append(f'<rect x="{x}" y="{y:.1f}" width="10" height="10" fill="{_FILLS[kind]}"/>'
                   f'<text class="tick" x="{x + 14}" y="{y + 9:.1f}" font-size="11">{escape(text)}</text>')
        x += 16 + 7 * len(text) + 14
    return out


def layer_chart(p: ProfileResult, top: int = 15) -> str:
    """Horizontal bars of the ``top`` layers by median time, coloured by precision."""
    layers = p.top(top)
    height = 52 + _ROW_H * max(len(layers), 1)
    peak = max((layer.median_ms for layer in layers), default=0.0)
    floor = _floor([layer.median_ms for layer in layers if layer.median_ms > 0])
    body = [_caption(height - 26, floor)]
    for i, layer in enumerate(layers):
        y = 8 + _ROW_H * i
        nodes = ", ".join(layer.onnx_nodes) or layer.origin.value
        tip = (f"{layer.kernel}: {layer.median_ms:.4g} ms ({layer.share:.1%}), {layer.precision.value} "
               f"{layer.impl}; ONNX: {nodes}")
        body += [_label(y, layer.kernel), _bar(y, layer.median_ms, peak, _kind(layer), tip, floor)]
    body += _legend(height - 18, [("float", "float kernel"), ("int", "integer kernel"),
                                  ("inserted", "inserted by the runtime")])
    return _svg(body, f"Top {len(layers)} layers by median time", height)


def comparison_chart(c: ProfileComparison, top: int = 15) -> str:
    """Paired bars (A grey, B blue) of the ``top`` matched layers with the largest change."""
    rows = c.layers[:top]
    height = 52 + 2 * _ROW_H * max(len(rows), 1)
    peak = max([max(r.a_ms, r.b_ms) for r in rows] or [0.0])
    floor = _floor([v for r in rows for v in (r.a_ms, r.b_ms) if v > 0])
    body = [_caption(height - 26, floor)]
    for i, r in enumerate(rows):
        y = 8 + 2 * _ROW_H * i
        name = r.onnx_nodes[0] if r.onnx_nodes else "?"
        body += [_label(y + _ROW_H / 2, f"{name} ({r.op_type})"),
                 _bar(y, r.a_ms, peak, "a", f"A {r.a_precision} {r.a_impl}: {r.a_ms:.4g} ms", floor),
                 _bar(y + _BAR_H + 1, r.b_ms, peak, "b", f"B {r.b_precision} {r.b_impl}: {r.b_ms:.4g} ms", floor)]
    body += _legend(height - 18, [("a", "A"), ("b", "B")])
    return _svg(body, f"A vs B: {len(rows)} layers with the largest change", height)


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def profile_section(p: ProfileResult, top: int = 15, title: str = "Per-layer profile") -> str:
    """A ``<section>`` with the chart, the top-layer and per-op-type tables and the notes of one profile."""
    layers = _table(["layer", "ONNX nodes", "op", "kernel", "precision", "median ms", "p90 ms", "share", "GOP/s",
                     "op/B", "roof"],
                    [[x.kernel, ", ".join(x.onnx_nodes) or f"({x.origin.value})", x.primary_op, x.impl,
                      x.precision.value, f"{x.median_ms:.4g}", f"{x.p90_ms:.4g}", f"{x.share:.1%}",
                      _opt(x.achieved_gops, ".1f"), _opt(x.arithmetic_intensity, ".1f"), roof_text(x)]
                     for x in p.top(top)])
    ops = _table(["op type", "layers", "median ms", "share", "GOP/s"],
                 [[s.op_type, str(s.layers), f"{s.median_ms:.4g}", f"{s.share:.1%}", _opt(s.achieved_gops, ".1f")]
                  for s in p.per_op_type])
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in p.notes)
    notes += "".join(f'<p class="warn">INVALID: {escape(r)}</p>' for r in p.invalid_reasons)
    return (f'<section class="profile"><h2>{escape(title)}</h2><p class="sub">{escape(header(p))}</p>'
            f'<div class="charts">{layer_chart(p, top)}</div>{layers}<h3>Per op type</h3>{ops}{notes}</section>')


def comparison_section(c: ProfileComparison, top: int = 15) -> str:
    """A ``<section>`` comparing two profiles: explanation, paired bars, the change table, the extra layers."""
    expl = "".join(f"<li>{escape(line)}</li>" for line in c.explanation)
    rows = _table(["ONNX nodes", "op", "A ms", "B ms", "delta ms", "A kernel", "B kernel", "flags"],
                  [[", ".join(r.onnx_nodes), r.op_type, f"{r.a_ms:.4g}", f"{r.b_ms:.4g}", f"{r.delta_ms:+.4g}",
                    f"{r.a_precision} {r.a_impl}", f"{r.b_precision} {r.b_impl}",
                    ", ".join(f for f, on in (("precision changed", r.precision_changed),
                                              ("float despite QDQ in A", r.a_float_kernel),
                                              ("float despite QDQ", r.b_float_kernel)) if on) or "-"]
                   for r in c.layers[:top]])
    extra = _table(["side", "layer", "type", "kind", "median ms"],
                   [[e.side.upper(), e.kernel, e.op_type, e.kind, f"{e.median_ms:.4g}"] for e in c.extra])
    return (f'<section class="profile-compare"><h2>Layer by layer: A vs B</h2><p class="sub">A: {escape(header(c.a))}'
            f'<br>B: {escape(header(c.b))}</p><ul>{expl}</ul><div class="charts">{comparison_chart(c, top)}</div>'
            f"{rows}<h3>Layers only one side has</h3>{extra}</section>")


def render_profile_html(result: ProfileResult | ProfileComparison, top: int = 15) -> str:
    """A standalone page of a profile, or of a comparison and both its profiles."""
    if isinstance(result, ProfileComparison):
        title = f"edgeopt profile {result.a.model.path} vs {result.b.model.path}"
        body = (comparison_section(result, top) + profile_section(result.a, top, "Per-layer profile: A")
                + profile_section(result.b, top, "Per-layer profile: B"))
    else:
        title = f"edgeopt profile {result.model.path}"
        body = profile_section(result, top)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main><h1>{escape(title)}</h1>"
            f"{body}<footer>self-contained page (no scripts, no network); edgeopt profile schema "
            f"{escape(result.schema_version)}</footer></main></body></html>")
