"""Human-readable tables (rich) for each result type; JSON output never passes through here."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from ..analysis.report import InspectResult
from ..metrics.result import BenchResult, Energy
from ..targets.schema import Sourced, Target
from ..untrusted import clean_text, for_rich
from .tables import Col, fit_table

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 120)


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def _si(value: float) -> str:
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value:.0f}"


def _shape(shape: list[Any] | None) -> str:
    if shape is None:
        return "(unknown)"
    return for_rich("[" + ", ".join(str(d) for d in shape) + "]")  # '[...]' would be read as rich markup


_TARGET_COLS = (
    Col("name", 9, numeric=False), Col("description", 8, numeric=False, flexible=True, flex_min=40),
    Col("arch", 6, numeric=False), Col("accelerator", 3, numeric=False, flexible=True, flex_min=10),
    Col("INT8 TOPS", 8), Col("FP16 TFLOPS", 5), Col("mem GB", 7), Col("BW GB/s", 2), Col("TDP W", 6),
    Col("runtimes", 5, numeric=False, flexible=True, flex_min=11), Col("FPS", 1),
)


def render_targets(targets: list[Target], console: Console | None = None) -> None:
    """One row per target, the columns chosen to fit the terminal (``edgeopt target NAME`` shows all)."""
    out = console or _out
    rows = [[t.name, t.description, t.arch.value, t.accelerator,
             *(_num(s.value, "g") if s else "-" for s in (t.peak_int8_tops, t.peak_fp16_tflops, t.memory_gb,
                                                          t.memory_bandwidth_gbps, t.tdp_w)),
             ", ".join(r.value for r in t.runtimes), _num(t.default_fps, "g")] for t in targets]
    table, left_out = fit_table("edgeopt targets", _TARGET_COLS, rows, out.width)
    out.print(table)
    if left_out:
        out.print(f"(left out at {out.width} columns: {', '.join(left_out)}; see edgeopt targets NAME or --json)",
                  soft_wrap=True)


def render_target(t: Target) -> None:
    table = Table(title=for_rich(f"target {t.name}"), show_header=True)  # a target file's text is data
    table.add_column("field")
    table.add_column("value")
    table.add_column("source")
    for name, value in t:
        if isinstance(value, Sourced):
            table.add_row(name, f"{value.value:g}", for_rich(value.source))
        elif isinstance(value, list):
            table.add_row(name, for_rich(", ".join(getattr(v, "value", str(v)) for v in value)), "")
        elif value is not None:
            table.add_row(name, for_rich(getattr(value, "value", value)), "")
    _out.print(table)


def _counts(head: Table, r: InspectResult) -> None:
    """MACs and FLOPs at the shape they are for; never a partial count as the headline."""
    if r.macs is not None and r.flops is None:  # only zero-MAC nodes unresolved: the MACs are the model's
        head.add_row("MACs", f"{r.macs:,} ({_si(r.macs)})")
        head.add_row("FLOPs", f"partial: at least {_si(r.partial_flops or 0)} ({len(r.unresolved_nodes)} zero-MAC "
                              "nodes without static shapes not counted; see the notes)")
        return
    if r.macs is None or r.flops is None:
        head.add_row("MACs", f"unknown: {for_rich(r.shape_hint and 'pass ' + r.shape_hint or 'see the notes')}")
        head.add_row("FLOPs", "unknown")
        if r.partial_macs is not None:
            head.add_row("counted so far", f"{_si(r.partial_macs)} MACs in the nodes with static shapes "
                                           f"(a lower bound, not the model's count)")
        return
    at = for_rich(", ".join(f"{name}={'x'.join(str(d) for d in dims or [])}" for name, dims in r.input_shapes.items()))
    head.add_row("MACs", f"{r.macs:,} ({_si(r.macs)}) at {at}" if at else f"{r.macs:,} ({_si(r.macs)})")
    head.add_row("FLOPs", f"{r.flops:,} ({_si(r.flops)})")
    head.add_row("arithmetic intensity", f"{r.arithmetic_intensity or 0:.2f} FLOP/byte")


def render_inspect(r: InspectResult) -> None:
    # Names in a model file (inputs, outputs, ops, symbols) are data: never markup (edgeopt.untrusted).
    head = Table(title=for_rich(f"inspect {r.path}"), show_header=False)
    head.add_column("k")
    head.add_column("v")
    head.add_row("opset / IR", f"{r.opset} / {r.ir_version}")
    head.add_row("size", f"{r.size_bytes:,} bytes")
    head.add_row("params", f"{r.params:,}")
    _counts(head, r)
    for t in r.inputs:
        head.add_row(f"input {for_rich(t.name)}", f"{for_rich(t.dtype)} {_shape(t.shape)}")
    for d in r.symbolic_dims:
        used = f"= {d.value} ({d.source})" if d.value is not None else "open: give it with --shape"
        name = repr(clean_text(d.symbol)) if d.symbol is not None else "(unnamed)"
        head.add_row(for_rich(f"symbolic dim {d.input}[{d.axis}]"), for_rich(f"{name} {used}"))
    for t in r.outputs:
        head.add_row(f"output {for_rich(t.name)}", f"{for_rich(t.dtype)} {_shape(t.shape)}")
    if r.uncounted_ops:
        head.add_row("uncounted ops", for_rich(", ".join(r.uncounted_ops)))
    if r.unresolved_nodes:
        head.add_row("unresolved nodes", f"{len(r.unresolved_nodes)} (not counted; see the notes)")
    for note in r.notes:
        head.add_row("note", for_rich(note))
    _out.print(head)
    ops = Table(title="per op type")
    for col in ("op", "count", "MACs", "FLOPs"):
        ops.add_column(col, justify="right" if col != "op" else "left")
    for op, stat in r.per_op.items():
        ops.add_row(for_rich(op), str(stat.count), f"{stat.macs:,}", f"{stat.flops:,}")
    _out.print(ops)
    if r.roofline is not None:
        rf = r.roofline
        roof = Table(title=for_rich(f"roofline on {rf.target} ({rf.precision.value})"), show_header=False)
        roof.add_column("k")
        roof.add_column("v")
        roof.add_row("peak", f"{_si(rf.peak_ops_per_s)}OP/s  ({for_rich(rf.peak_source)})")
        roof.add_row("bandwidth", f"{rf.bandwidth_bytes_per_s / 1e9:.1f} GB/s  ({for_rich(rf.bandwidth_source)})")
        roof.add_row("ridge point", f"{rf.ridge_point:.1f} FLOP/byte")
        roof.add_row("bound", for_rich(rf.bound.value))
        roof.add_row("lower-bound latency", f"{rf.lower_bound_latency_ms:.4f} ms")
        _out.print(roof)


def _energy(e: Energy) -> str:
    """One line of energy figures; an estimate starts with ESTIMATE and says what it assumed."""
    rest = f"{_num(e.inferences_per_joule, ',.1f')} inferences/J, {_num(e.tops_per_watt, '.4g')} TOPS/W"
    if e.source == "estimate":
        return (f"[bold yellow]ESTIMATE[/bold yellow], not measured (no power sensor read; assumes TDP "
                f"{_num(e.active_power_w, 'g')} W): ~{_num(e.energy_per_inference_mj, '.4g')} mJ/inference, {rest}")
    above = e.energy_per_inference_above_idle_mj
    return (f"measured: {_num(e.energy_per_inference_mj, '.4g')} mJ/inference"
            f"{f' ({above:.4g} above idle)' if above is not None else ''}, {rest}; "
            f"{_num(e.active_power_w, '.3f')} W active, {_num(e.idle_power_w, '.3f')} W idle "
            f"({for_rich(f'{e.sensor}: ' + ', '.join(e.rails))})")


def render_bench(r: BenchResult) -> None:
    if r.target_mismatch:
        _out.print(f"[bold red]TARGET MISMATCH[/bold red]: not {for_rich(r.target)} hardware: "
                   f"{for_rich('; '.join(r.target_mismatch))}",
                   soft_wrap=True)
    # The runtime's name and version come from the device: data, never markup (edgeopt.untrusted).
    t = Table(title=for_rich(f"bench {r.model.path} on {r.target} ({r.runner}, ") + for_rich(r.runtime.name) + " "
              + for_rich(r.runtime.version) + ")",
              show_header=False)
    t.add_column("metric")
    t.add_column("value")
    if r.deployment is not None:
        t.add_row("deployment", for_rich(f"{r.deployment.name} ({r.deployment.path}, deployment.json "
                                         f"{r.deployment.sha256[:12]})"))
    lat = r.latency_ms
    for key in ("p50", "p90", "p95", "p99", "p999"):
        mark = "" if r.percentiles_supported[key].supported else "  (too few samples: indicative)"
        t.add_row(f"latency {key}", f"{getattr(lat, key):.4f} ms{mark}")
    t.add_row("latency mean ± std", f"{lat.mean:.4f} ± {lat.std:.4f} ms (min {lat.min:.4f}, max {lat.max:.4f})")
    t.add_row("throughput", f"{r.throughput_ips:,.1f} inferences/s (batch {r.settings.batch}, "
                            f"{r.settings.streams} stream(s))")
    t.add_row("cold start", f"load {r.cold_start_ms.load:.2f} ms + first inference "
                            f"{r.cold_start_ms.first_inference:.2f} ms")
    mem = r.memory_mb
    t.add_row("memory (VmHWM)", f"peak {_num(mem.peak, '.1f')} MiB, baseline {_num(mem.baseline, '.1f')} MiB, "
                                f"model {_num(mem.delta, '.1f')} MiB")
    t.add_row("model", f"{r.model.size_bytes:,} bytes, {r.model.params:,} params")
    if r.compute is not None:
        c = r.compute
        pct = f", {c.pct_of_peak:.1f}% of peak {c.peak_gflops:.1f} GFLOP/s" if c.pct_of_peak is not None else ""
        t.add_row("compute", f"{c.achieved_gflops:.2f} GFLOP/s{pct}")
    if r.energy is not None:
        t.add_row("energy", _energy(r.energy))
    t.add_row("run", f"{r.run.samples} samples in {r.run.timed_s:.2f} s after {r.run.warmup_iterations} warm-up; "
                     f"seed {r.settings.seed}, threads {r.settings.threads or 'default'}")
    if r.fps_budget is not None:
        b = r.fps_budget
        numbers = f"{for_rich(b.percentile)} {b.latency_ms:.3f} ms vs {b.budget_ms:.3f} ms at {b.fps:g} FPS"
        if not r.valid:  # the reason on the same line: a FAIL next to a large headroom reads like a bug otherwise
            t.add_row("FPS budget", f"FAIL: the run is invalid ({for_rich('; '.join(r.invalid_reasons))}); {numbers}")
        else:
            t.add_row("FPS budget", f"{'PASS' if b.passed else 'FAIL'}: {numbers} (headroom {b.headroom_pct:.1f}%)")
    t.add_row("valid", "yes" if r.valid else "NO: " + for_rich("; ".join(r.invalid_reasons)))
    if r.target_mismatch:
        t.add_row("[bold red]target[/bold red]",
                  "[bold red]MISMATCH[/bold red]: " + for_rich("; ".join(r.target_mismatch)))
    _out.print(t)
    for w in r.warnings:
        _out.print(f"[yellow]warning:[/yellow] {for_rich(w)}", soft_wrap=True)
