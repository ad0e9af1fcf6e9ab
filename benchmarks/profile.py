"""Profiler overhead: one profiled inference (``edgeopt profile``'s ``profiled_ms``) over the unprofiled p50 measured
in the same agent call, per runtime, on a small and a large zoo CNN.

Each round is one ``edgeopt.profile`` call (unprofiled phase, then the profiled phase, same inputs and threads); the
ratio of each round is ``profiled_ms / unprofiled_p50_ms``, and the table gives its median over the rounds, with the
share of the profiled time the layers account for (the rest is the runtime's and the profiler's own work between
layers). Prints a table and writes JSON.

Usage: python -m benchmarks.profile [--rounds 3] [--iterations 200] [--models mobilenet-small,mobilenet-large]
       [--runtimes onnxruntime,openvino] [--out benchmarks/results/profile.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.common import RESULTS, machine_facts, print_table, write_json
from edgeopt.profile import profile
from edgeopt.zoo import build


def _round(path: Path, runtime: str, args: argparse.Namespace) -> dict[str, float]:
    r = profile(path, runtime=runtime, iterations=args.iterations, warmup=args.warmup, threads=args.threads)
    return {"profiled_ms": r.profiled_ms, "unprofiled_p50_ms": r.unprofiled_p50_ms, "overhead": r.overhead,
            "layers_ms": r.layers_ms, "layers": len([x for x in r.layers if x.executed]),
            "runtime_version": str(r.runtime.get("version"))}


def _row(model: str, runtime: str, rounds: list[dict[str, float]]) -> dict[str, object]:
    med = {k: statistics.median(float(r[k]) for r in rounds)
           for k in ("profiled_ms", "unprofiled_p50_ms", "overhead", "layers_ms")}
    return {"model": model, "runtime": runtime, "runtime_version": rounds[0]["runtime_version"],
            "layers": rounds[0]["layers"], **med, "layers_share_of_profiled": med["layers_ms"] / med["profiled_ms"],
            "overhead_per_round": [r["overhead"] for r in rounds]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=200, help="inferences of each phase")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0, help="runtime intra-op threads (0: its default)")
    ap.add_argument("--models", default="mobilenet-small,mobilenet-large")
    ap.add_argument("--runtimes", default="onnxruntime,openvino")
    ap.add_argument("--out", type=Path, default=RESULTS / "profile.json")
    args = ap.parse_args()

    runtimes = [r for r in args.runtimes.split(",") if importlib.util.find_spec(r) is not None]
    rows = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-profile-bench-") as tmp:
        for name in args.models.split(","):
            path = build(name, Path(tmp) / f"{name}.onnx")
            for runtime in runtimes:
                rounds = []
                for i in range(args.rounds):
                    rounds.append(_round(path, runtime, args))
                    print(f"{name} {runtime} round {i + 1}: profiled {rounds[-1]['profiled_ms']:.4f} ms, unprofiled "
                          f"p50 {rounds[-1]['unprofiled_p50_ms']:.4f} ms", file=sys.stderr)
                rows.append(_row(name, runtime, rounds))

    env = machine_facts("onnxruntime", "openvino")
    out = {"benchmark": "profile_overhead", "settings": vars(args) | {"out": str(args.out)}, "environment": env,
           "results": rows}
    write_json(args.out, out)

    print(f"\nprofiler overhead on {env['cpu']} ({args.rounds} rounds x {args.iterations} inferences per phase)")
    print_table(["model", "runtime", "layers", "unprofiled p50", "profiled", "overhead (profiled / unprofiled)",
                 "share in layers"],
                [[r["model"], r["runtime"], r["layers"], f"{r['unprofiled_p50_ms']:.4f} ms",
                  f"{r['profiled_ms']:.4f} ms", f"{r['overhead']:.2f}x", f"{r['layers_share_of_profiled']:.0%}"]
                 for r in rows])
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
