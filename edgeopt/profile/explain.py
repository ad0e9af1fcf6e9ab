"""The comparison in sentences: what got slower or faster, by how much, and why the layers say so."""

from __future__ import annotations

from .schema import LayerDelta, ProfileComparison, ProfileResult

_SHOWN = 3
_X86_INT8_DOT = ("avx512_vnni", "avx_vnni", "amx_int8")
_ARM_INT8_DOT = ("asimddp", "i8mm")


def _label(p: ProfileResult) -> str:
    precisions = sorted({layer.precision.value for layer in p.layers if layer.executed and layer.flops})
    return f"{p.model.path} ({'/'.join(precisions) or 'n/a'}, {p.runtime.get('name', '?')})"


def _totals(c: ProfileComparison) -> str:
    a, b = c.a.unprofiled_p50_ms, c.b.unprofiled_p50_ms
    if c.speedup <= 0:
        verdict = "no p50 to compare"
    elif c.speedup >= 1:
        verdict = f"B is {c.speedup:.2f}x faster"
    else:
        verdict = f"B is {1 / c.speedup:.2f}x slower"
    return (f"A = {_label(c.a)}: p50 {a:.4g} ms unprofiled; B = {_label(c.b)}: p50 {b:.4g} ms unprofiled; "
            f"{verdict} (layer sums under the profiler: {c.a.layers_ms:.4g} vs {c.b.layers_ms:.4g} ms).")


def _matched(c: ProfileComparison) -> list[str]:
    slower = [r for r in c.layers if r.delta_ms > 0 and r.a_ms > 0 and r.b_ms > 0]
    faster = [r for r in c.layers if r.delta_ms < 0 and r.a_ms > 0 and r.b_ms > 0]
    out = [f"Of {len(c.layers)} matched layers, {len(slower)} got slower in B (+{sum(r.delta_ms for r in slower):.4g} "
           f"ms) and {len(faster)} faster ({sum(r.delta_ms for r in faster):.4g} ms)."]
    worst = sorted(slower, key=lambda r: -r.delta_ms)[:_SHOWN]
    if worst:
        out.append("Slower the most: " + "; ".join(
            f"{r.onnx_nodes[0]} ({r.op_type}) {r.a_ms:.4g} -> {r.b_ms:.4g} ms, {r.a_precision} {r.a_impl} -> "
            f"{r.b_precision} {r.b_impl}" for r in worst) + ".")
    best = sorted(faster, key=lambda r: r.delta_ms)[:_SHOWN]
    if best:
        out.append("Faster the most: " + "; ".join(
            f"{r.onnx_nodes[0]} ({r.op_type}) {r.a_ms:.4g} -> {r.b_ms:.4g} ms, {r.b_precision} {r.b_impl}"
            for r in best) + ".")
    return out


def _intensity(c: ProfileComparison) -> list[str]:
    """Whether the layers B sped up are the ones doing much work per byte (in A)."""
    by_kernel = {layer.kernel: layer for layer in c.a.layers}

    def mean(rows: list[LayerDelta]) -> float | None:
        values = [by_kernel[k].arithmetic_intensity for r in rows for k in r.a_kernels
                  if k in by_kernel and by_kernel[k].arithmetic_intensity]
        return sum(v for v in values if v is not None) / len(values) if values else None

    matched = [r for r in c.layers if r.a_ms > 0 and r.b_ms > 0]
    faster = mean([r for r in matched if r.delta_ms < 0])
    slower = mean([r for r in matched if r.delta_ms > 0])
    if faster is None or slower is None or faster <= slower:
        return []
    return [f"B's gains follow work per byte: the layers that got faster average {faster:.1f} op/B in A, those "
            f"that got slower {slower:.1f} op/B; low-intensity layers (depthwise, few channels) have little "
            "arithmetic for a lower precision to speed up, while their conversions still cost."]


def _extra(c: ProfileComparison) -> list[str]:
    out = []
    for side, total in (("B", c.extra_b_ms), ("A", c.extra_a_ms)):
        items = [e for e in c.extra if e.side == side.lower()]
        if not items:
            continue
        kinds: dict[str, tuple[int, float]] = {}
        for e in items:
            n, ms = kinds.get(e.kind, (0, 0.0))
            kinds[e.kind] = (n + 1, ms + e.median_ms)
        parts = ", ".join(f"{n} {kind} ({ms:.4g} ms)" for kind, (n, ms) in sorted(kinds.items()))
        layers_ms = c.b.layers_ms if side == "B" else c.a.layers_ms
        share = f", {total / layers_ms:.0%} of its layer time" if layers_ms > 0 else ""
        out.append(f"{side} spends {total:.4g} ms per inference{share} in layers the other side does not have: "
                   f"{parts}; largest: {', '.join(f'{e.kernel} ({e.op_type})' for e in items[:_SHOWN])}.")
    return out


def _precision(c: ProfileComparison) -> list[str]:
    out = []
    changed = [r for r in c.layers if r.precision_changed]
    if changed:
        moves: dict[str, int] = {}
        for r in changed:
            moves[f"{r.a_precision} -> {r.b_precision}"] = moves.get(f"{r.a_precision} -> {r.b_precision}", 0) + 1
        word = "layer" if len(changed) == 1 else "layers"
        out.append(f"{len(changed)} {word} changed precision ({', '.join(f'{k}: {v}' for k, v in moves.items())}).")
    if c.float_despite_qdq:
        n = len(c.float_despite_qdq)
        out.append(f"{n} {'layer' if n == 1 else 'layers'} quantized in B's ONNX (QDQ around them) ran a float kernel "
                   f"anyway, paying the conversions and gaining nothing: {', '.join(c.float_despite_qdq[:8])}.")
    return out


def _cpu(c: ProfileComparison) -> list[str]:
    """What the CPU's int8 instructions say about the result (x86 VNNI/AMX, Arm dot product)."""
    env = c.b.environment
    flags = set(env.get("cpu_flags") or [])
    machine, cpu = str(env.get("machine", "")), env.get("cpu", "this CPU")
    slower = 0 < c.speedup < 1
    if machine in ("x86_64", "AMD64"):
        have = sorted(flags & set(_X86_INT8_DOT))
        if have and slower:
            return [f"{cpu} has int8 dot-product instructions ({', '.join(have)}), so int8 convolutions can beat "
                    "fp32 here: the slowdown comes from the layers above (conversions, reorders, low-intensity "
                    "layers whose int8 kernel saves less than its requantization costs)."]
        if have:
            return [f"{cpu} has int8 dot-product instructions ({', '.join(have)}): one instruction per 4 int8 "
                    "multiply-adds is what lets its int8 convolutions outrun fp32."]
        return [f"{cpu} has no VNNI (no avx512_vnni/avx_vnni): an int8 dot product takes three AVX2 instructions "
                "(vpmaddubsw, vpmaddwd, vpaddd) where fp32 takes one FMA on half as many lanes, so int8 "
                "convolutions gain little over fp32 and the quantize/dequantize and reorder layers "
                + ("make the model slower overall." if slower else "eat into what they gain.")]
    if machine in ("aarch64", "arm64"):
        have = sorted(flags & set(_ARM_INT8_DOT))
        return [f"{cpu} {'has' if have else 'lacks'} Arm int8 dot-product instructions"
                f"{' (' + ', '.join(have) + ')' if have else ' (asimddp/i8mm)'}."]
    return []


def explain(c: ProfileComparison) -> list[str]:
    """Sentences for ``c.explanation`` (everything they say comes from ``c``'s numbers)."""
    lines = [_totals(c), *_matched(c), *_intensity(c), *_extra(c), *_precision(c)]
    quantized = any(layer.quantized_in_onnx for layer in c.b.layers) or any(
        layer.quantized_in_onnx for layer in c.a.layers)
    if quantized:
        lines.extend(_cpu(c))
    return lines
