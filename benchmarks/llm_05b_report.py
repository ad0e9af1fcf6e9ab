"""The markdown rows of docs/benchmarks.md from what the llm_05b_* scripts wrote; runs nothing.

Usage: python -m benchmarks.llm_05b_report [--out benchmarks/results/llm_05b.json]
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks import llm_05b_build as common


def _timing_row(doc: dict[str, Any]) -> str:
    parts = []
    for key in ("timing_int4", "timing_fp32", "timing"):
        for recipe, t in (doc.get(key) or {}).items():
            if not isinstance(t, dict) or "tpot_mean_vs_e2e_mean" not in t:
                continue
            cells = []
            for name, label in (("ttft_p50_vs_e2e_median", "TTFT p50/median"), ("ttft_mean_vs_e2e_mean", "TTFT mean"),
                                ("tpot_mean_vs_e2e_mean", "TPOT mean"), ("tpot_p50_vs_e2e_median", "TPOT p50/median")):
                r = t[name]
                cells.append(f"{label} {r['edgeopt_ms']:.2f}/{r['benchmark_e2e_ms']:.2f} ms = **{r['ratio']:.4f}** "
                             f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]")
            parts.append(f"{recipe} ({t['reps']} reps x {t['gen']} tokens): " + "; ".join(cells))
    return "<br>".join(parts)


def _kv_rows(doc: dict[str, Any]) -> list[str]:
    rows = []
    for key in ("kv", "kv_ov_warm", "kv_ov_warm2"):
        for name, v in (doc.get(key) or {}).items():
            if isinstance(v, dict) and "fit" in v:
                pred = v.get("predicted_bytes_per_token") or v.get("edgeopt_predicted_bytes_per_token")  # old runs
                held = ", ".join(f"{p['depth']}: {p['held'] / 2**20:.1f}" for p in v["points"])
                rows.append(f"| {name} | {key} | {held} | {v['fit']['bytes_per_token']:,.0f} | "
                            f"{v['fit']['max_residual_mb']} | {pred:,} |")
    return rows


def _scaling_rows(doc: dict[str, Any]) -> list[str]:
    rows = []
    for key in ("scaling", "scaling_int8"):
        for name, c in ((doc.get(key) or {}).get("cells") or {}).items():
            if "error" in c:
                rows.append(f"| {name} | error: {c['error']} |")
                continue
            rows.append(f"| {name} | {c['size_mb']:,.0f} | {c['load_ms'] / 1e3:.1f} | {c['ttft_ms_p50']:.0f} | "
                        f"{c['prefill_tokens_per_s']:.0f} | {c['tpot_ms_p50']:.1f} | {c['decode_tokens_per_s']:.1f} | "
                        f"{c['peak_rss_mb']:,.0f} |")
    return rows


def _kv_decode_rows(doc: dict[str, Any], label: str) -> list[str]:
    """One row per runtime/setting of a ``llm_05b_kv.py --method decode`` run."""
    rows = []
    for name, v in (doc.get("kv_decode") or {}).items():
        if isinstance(v, dict) and "ratio_predicted_to_measured" in v:
            extra = v.get("largest_rss_jumps_at") or v.get("max_lengths")
            ratio = v["ratio_predicted_to_measured"]
            rows.append(f"| {label} | {name} | {v['predicted_bytes_per_token']:,.0f} | "
                        f"{v['measured_bytes_per_token']:,.0f} | **{ratio:.3f}** | {extra} |")
    return rows


def report(args: Any) -> dict[str, Any]:
    """Markdown of what the other steps wrote (docs/benchmarks.md); runs nothing."""
    doc = json.loads(args.out.read_text())
    print(_timing_row(doc))
    print("\n".join(_kv_rows(doc)))
    print("\n".join(_scaling_rows(doc)))
    print("\n".join(_kv_decode_rows(doc, "Qwen2-0.5B")))
    probe = args.out.with_name("llm_05b_kv_probe.json")
    if probe.exists():
        print("\n".join(_kv_decode_rows(json.loads(probe.read_text()), "kv-probe")))
    return {}


def main() -> int:
    args = common.parser(__doc__.splitlines()[0]).parse_args()
    report(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
