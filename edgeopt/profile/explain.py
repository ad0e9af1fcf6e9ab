"""The comparison in sentences: what got slower or faster, by how much, and why the layers say so."""

from __future__ import annotations

from .schema import LayerDelta, ProfileComparison, ProfileResult

_SHOWN = 3
_X86_INT8_DOT = ("avx512_vnni", "avx_vnni", "amx_int8")
_ARM_INT8_DOT = ("asimddp", "i8mm")


def _label(p: ProfileResult) -> str:
    precisions = sorted({layer.precision.value for layer in p.layers if layer.executed and layer.flops})
    return f"{p.model.path} ({'/'.join(precisions) or 'n/a'}, {p.runtime.get('name', '?')})"


def _verdict(speedup: float) -> str:
    if speedup <= 0:
        return "no p50 to compare"
    return f"B is {speedup:.2f}x faster" if speedup >= 1 else f"B is {1 / speedup:.2f}x slower"


def _totals(c: ProfileComparison) -> str:
    h = c.headline
    if h is None:
        a, b = c.a.unprofiled_p50_ms, c.b.unprofiled_p50_ms
        return (f"A = {_label(c.a)}: p50 {a:.4g} ms unprofiled; B = {_label(c.b)}: p50 {b:.4g} ms unprofiled; "
                f"{_verdict(c.speedup)} (one run each, not interleaved: no interval; layer sums under the profiler: "
                f"{c.a.layers_ms:.4g} vs {c.b.layers_ms:.4g} ms).")
    interval = (f"A/B latency {h.speedup_low:.2f}-{h.speedup_high:.2f}x, the 95 % interval over {h.rounds} "
                "interleaved rounds")
    verdict = f"within noise: neither is faster beyond it ({interval})" if h.within_noise else \
        f"{_verdict(h.speedup)} ({interval})"
    return (f"A = {_label(c.a)}: p50 {h.a_p50_ms:.4g} ms ({h.a_low_ms:.4g}-{h.a_high_ms:.4g}); B = {_label(c.b)}: "
            f"p50 {h.b_p50_ms:.4g} ms ({h.b_low_ms:.4g}-{h.b_high_ms:.4g}); {verdict}; layer sums under the "
            f"profiler: {c.a.layers_ms:.4g} vs {c.b.layers_ms:.4g} ms.")


def quantized_side(c: ProfileComparison) -> str | None:
    """``A`` or ``B``: the one side with quantized layers (QDQ in its ONNX, or int8/int4 kernels); None when both
    or neither have them (then nothing is said about which side the int8 kernels slow down)."""
    def quantized(p: ProfileResult) -> bool:
        return any(x.quantized_in_onnx or x.precision.value in ("int8", "int4") for x in p.layers if x.executed)

    qa, qb = quantized(c.a), quantized(c.b)
    return ("A" if qa else "B") if qa != qb else None


def _quantized_slower(c: ProfileComparison, side: str) -> bool | None:
    """Whether ``side`` is the slower one; None within noise (or nothing to compare)."""
    if c.speedup <= 0 or (c.headline is not None and c.headline.within_noise):
        return None
    b_slower = c.speedup < 1
    return b_slower if side == "B" else not b_slower


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
    """Whether the layers the quantized side sped up are the ones doing much work per byte (in the float side)."""
    q = quantized_side(c) or "B"
    base = c.b if q == "A" else c.a
    by_kernel = {layer.kernel: layer for layer in base.layers}

    def mean(rows: list[LayerDelta]) -> float | None:
        values = [by_kernel[k].arithmetic_intensity for r in rows for k in (r.b_kernels if q == "A" else r.a_kernels)
                  if k in by_kernel and by_kernel[k].arithmetic_intensity]
        return sum(v for v in values if v is not None) / len(values) if values else None

    matched = [r for r in c.layers if r.a_ms > 0 and r.b_ms > 0]
    sign = 1 if q == "A" else -1  # delta_ms = b - a: A gained where it is positive, B where it is negative
    faster = mean([r for r in matched if sign * r.delta_ms > 0])
    slower = mean([r for r in matched if sign * r.delta_ms < 0])
    if faster is None or slower is None or faster <= slower:
        return []
    other = "B" if q == "A" else "A"
    return [f"{q}'s gains follow work per byte: the layers that got faster in {q} average {faster:.1f} op/B in "
            f"{other}, those that got slower {slower:.1f} op/B; low-intensity layers (depthwise, few channels) have "
            "little arithmetic for a lower precision to speed up, while their conversions still cost."]


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
    for side, names in (("A", c.float_despite_qdq_a), ("B", c.float_despite_qdq)):
        if names:
            n = len(names)
            out.append(f"{n} {'layer' if n == 1 else 'layers'} quantized in {side}'s ONNX (QDQ around them) ran a "
                       f"float kernel anyway, paying the conversions and gaining nothing: {', '.join(names[:8])}.")
    return out


def _x86(cpu: str, flags: set[str], q: str | None, slower: bool | None) -> list[str]:
    have = sorted(flags & set(_X86_INT8_DOT))
    if have and q is not None and slower:
        return [f"{cpu} has int8 dot-product instructions ({', '.join(have)}), so int8 convolutions can beat fp32 "
                f"here: {q}, the quantized side, is slower because of the layers above (conversions, reorders, "
                "low-intensity layers whose int8 kernel saves less than its requantization costs)."]
    if have and q is not None and slower is None:
        return [f"{cpu} has int8 dot-product instructions ({', '.join(have)}), yet {q}, the quantized side, is not "
                "faster beyond noise: its conversions and reorders eat what its int8 kernels gain."]
    if have:
        return [f"{cpu} has int8 dot-product instructions ({', '.join(have)}): one instruction per 4 int8 "
                "multiply-adds is what lets its int8 convolutions outrun fp32."]
    return [f"{cpu} has no VNNI (no avx512_vnni/avx_vnni): an int8 dot product takes three AVX2 instructions "
            "(vpmaddubsw, vpmaddwd, vpaddd) where fp32 takes one FMA on half as many lanes, so int8 "
            "convolutions gain little over fp32 and the quantize/dequantize and reorder layers "
            + ("make the model slower overall." if slower else "eat into what they gain.")]


def _cpu(c: ProfileComparison) -> list[str]:
    """What the CPU's int8 instructions say about the result (x86 VNNI/AMX, Arm dot product), about the side that
    is quantized (A or B: ``profile int8.onnx --vs fp32.onnx`` is as common as the other way round)."""
    q = quantized_side(c)
    env = (c.a if q == "A" else c.b).environment
    flags = set(env.get("cpu_flags") or [])
    machine, cpu = str(env.get("machine", "")), env.get("cpu", "this CPU")
    slower = _quantized_slower(c, q) if q is not None else None
    if machine in ("x86_64", "AMD64"):
        return _x86(str(cpu), flags, q, slower)
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
