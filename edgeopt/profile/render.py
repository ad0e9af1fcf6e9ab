"""Terminal tables of a profile and of a comparison (rich); JSON output never passes through here."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from ..untrusted import for_rich
from .schema import LayerRecord, ProfileComparison, ProfileResult

_NODES_SHOWN = 2


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)


def _ms(value: float) -> str:
    return f"{value:.4f}" if value < 10 else f"{value:.2f}"


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _nodes(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NODES_SHOWN])
    shown = for_rich(shown)
    return shown + (f" +{len(names) - _NODES_SHOWN}" if len(names) > _NODES_SHOWN else "") if names else "-"


def roof_text(layer: LayerRecord) -> str:
    """``compute 45%``: the roof a layer sits under and the share of it reached (``-`` without one)."""
    if layer.bound is None:
        return "-"
    return f"{layer.bound.value}" + (f" {layer.roof_fraction:.0%}" if layer.roof_fraction is not None else "")


def header(p: ProfileResult) -> str:
    rt = p.runtime
    return (f"{for_rich(p.model.path)} on {for_rich(rt.get('name'))} {for_rich(rt.get('version'))} "
            f"({for_rich(p.target)}, {for_rich(p.runner)}): "
            f"{p.settings.profiled_iterations} profiled inferences after {p.settings.warmup} warm-up; profiled "
            f"{_ms(p.profiled_ms)} ms/inference (layers {_ms(p.layers_ms)} ms), unprofiled p50 "
            f"{_ms(p.unprofiled_p50_ms)} ms, overhead {p.overhead:.2f}x")


def layer_table(p: ProfileResult, top: int) -> Table:
    table = Table(title=f"top {top} layers by time")
    for col in ("#", "layer", "ONNX nodes", "op", "kernel", "prec", "median ms", "p90 ms", "share", "GOP/s",
                "op/B", "roof"):
        table.add_column(col, justify="right" if col in ("#", "median ms", "p90 ms", "share", "GOP/s", "op/B")
                         else "left")
    for i, layer in enumerate(p.top(top), 1):
        table.add_row(str(i), for_rich(layer.kernel),
                      _nodes(layer.onnx_nodes) if layer.onnx_nodes else f"({layer.origin.value})",
                      for_rich(layer.primary_op), for_rich(layer.impl), layer.precision.value, _ms(layer.median_ms),
                      _ms(layer.p90_ms),
                      f"{layer.share:.1%}", _opt(layer.achieved_gops, ".1f"), _opt(layer.arithmetic_intensity, ".1f"),
                      roof_text(layer))
    return table


def op_table(p: ProfileResult) -> Table:
    table = Table(title="per op type")
    for col in ("op type", "layers", "median ms", "share", "GOP/s"):
        table.add_column(col, justify="left" if col == "op type" else "right")
    for s in p.per_op_type:
        table.add_row(for_rich(s.op_type), str(s.layers), _ms(s.median_ms), f"{s.share:.1%}",
                      _opt(s.achieved_gops, ".1f"))
    return table


def _invalid(out: Console, p: ProfileResult, side: str = "") -> None:
    for why in p.invalid_reasons:
        out.print(f"[bold red]{side}INVALID[/bold red]: {for_rich(why)}", soft_wrap=True)


def render_profile(p: ProfileResult, top: int = 15) -> None:
    out = _console()
    out.print(header(p))
    out.print(layer_table(p, top))
    out.print(op_table(p))
    for note in p.notes:
        out.print(f"note: {for_rich(note)}")
    _invalid(out, p)


def compare_table(c: ProfileComparison, top: int) -> Table:
    table = Table(title=f"A vs B: top {top} layers by |change|")
    for col in ("ONNX nodes", "op", "A ms", "B ms", "delta ms", "B/A", "A kernel", "B kernel", "flags"):
        table.add_column(col, justify="right" if col in ("A ms", "B ms", "delta ms", "B/A") else "left")
    for r in c.layers[:top]:
        flags = ", ".join(f for f, on in (("precision", r.precision_changed),
                                          ("float despite QDQ in A", r.a_float_kernel),
                                          ("float despite QDQ", r.b_float_kernel)) if on)
        table.add_row(_nodes(r.onnx_nodes), for_rich(r.op_type), _ms(r.a_ms), _ms(r.b_ms), f"{r.delta_ms:+.4f}",
                      _opt(r.ratio, ".2f"), for_rich(f"{r.a_precision} {r.a_impl}"),
                      for_rich(f"{r.b_precision} {r.b_impl}"), flags or "-")
    return table


def extra_table(c: ProfileComparison) -> Table:
    table = Table(title="layers only one side has (runtime-inserted reorders/converts, Q/DQ kernels)")
    for col in ("side", "layer", "type", "kind", "median ms"):
        table.add_column(col, justify="right" if col == "median ms" else "left")
    for e in c.extra:
        table.add_row(for_rich(e.side.upper()), for_rich(e.kernel), for_rich(e.op_type), for_rich(e.kind),
                      _ms(e.median_ms))
    return table


def render_comparison(c: ProfileComparison, top: int = 15) -> None:
    out = _console()
    out.print("A: " + header(c.a))
    out.print("B: " + header(c.b))
    out.print(compare_table(c, top))
    if c.extra:
        out.print(extra_table(c))
    for line in c.explanation:
        out.print(f"- {for_rich(line)}")
    _invalid(out, c.a, "A ")
    _invalid(out, c.b, "B ")
