"""A sweep over SSH with and without the served agent (issue 21: a level's first measurement is its interleaved
rounds in one agent process, over SSH as locally).

The same sweep of a real packaged model (PP-OCRv4 rec from the rapidocr wheel, 48x320, 16 real text lines, metric
``agreement``; benchmarks/ship_goals_check.py) on a loopback SSH "device" (an OpenSSH server on 127.0.0.1 started
here, its own keys and work dir, the device cache empty at the start of each sweep): once with the served agent (one
``edgeopt_agent serve`` on one exec channel for evaluations, profiles and latency rounds) and once with
``EDGEOPT_AGENT_SERVE=0`` (every request a fresh agent process started over its own exec channel). Prints the wall
time, the recommendation and the levels' ``first_pass_agent`` of each, and writes JSON.

Needs root and openssh-server (``make sysdeps``). Run it alone (two heavy jobs on 2 cores make every latency
meaningless).

Usage: python -m benchmarks.ssh_sweep [--model ppocr-rec] [--threshold 0.99] [--order served,one-shot]
       [--no-int8-search] [--out benchmarks/results/ssh_sweep.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import RESULTS, machine_facts, real_model, write_json
from benchmarks.ship_goals_check import MODELS
from edgeopt.devices import parse_host
from edgeopt.runners.ssh import SshRunner
from edgeopt.sweep import sweep  # noqa: E402
from tests.integration.ssh.sshd import Sshd, unavailable_reason

MODES = {"served": "1", "one-shot": "0"}


def one_sweep(mode: str, model: Path, npz: Path, metric: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """One fresh sweep of ``model`` on a fresh loopback sshd, ``mode`` 'served' or 'one-shot'."""
    os.environ["EDGEOPT_AGENT_SERVE"] = MODES[mode]
    infos: list[str] = []

    def progress(event: dict[str, Any]) -> None:
        if event.get("event") == "info":
            infos.append(str(event.get("message")))

    with Sshd(tmp / f"sshd-{mode}") as sshd:
        address = parse_host(sshd.spec, key=sshd.client_key, python=sys.executable, workdir=str(tmp / f"dev-{mode}"))
        runner = SshRunner(address, known_hosts=tmp / "known_hosts", accept_new_host_key=True)
        t0 = time.perf_counter()
        res = sweep(model, eval=npz, metric=metric, min_retention=args.threshold, threads=args.threads,
                    runtimes=["onnxruntime", "openvino"], out_dir=tmp / f"out-{mode}", no_cache=True,
                    runner=runner, progress=progress, int8_search=args.int8_search)
        wall = time.perf_counter() - t0
    rec = res.recommendation
    return {"mode": mode, "wall_s": round(wall, 1), "levels": len(res.levels),
            "recommendation": rec and f"{rec.recipe}@{rec.runtime}", "retention": rec and round(rec.retention, 5),
            "latency_ms": rec and round(rec.latency_ms, 4),
            "first_pass_agent": dict(Counter(str(lv.first_pass_agent) for lv in res.levels)),
            "info": infos,
            # what the decisions read (the INT8 search's skip rule: edgeopt/sweep/int8_latency.py)
            "level_latencies": [{"level": f"{lv.recipe}@{lv.runtime}", "passed": lv.passed,
                                 "latency_ms": lv.latency_ms, "low_ms": lv.latency_ms_low,
                                 "high_ms": lv.latency_ms_high, "rounds": lv.latency_confirm_rounds}
                                for lv in res.levels]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="ppocr-rec", choices=sorted(MODELS))
    ap.add_argument("--threshold", type=float, default=0.99)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--order", default="served,one-shot", help="modes in the order run (served, one-shot)")
    ap.add_argument("--no-int8-search", dest="int8_search", action="store_false")
    ap.add_argument("--out", type=Path, default=RESULTS / "ssh_sweep.json")
    args = ap.parse_args()
    why = unavailable_reason()
    if why:
        print(f"ssh_sweep: {why}", file=sys.stderr)
        return 2
    file, make, metric, what = MODELS[args.model]
    model = real_model(file, "ssh_sweep")
    if model is None:
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-ssh-sweep-") as tmp_s:
        tmp = Path(tmp_s)
        npz = tmp / "eval.npz"
        np.savez(npz, **make())
        for mode in args.order.split(","):
            print(f"== {mode}", file=sys.stderr)
            rows.append(one_sweep(mode, model, npz, metric, args, tmp))
            r = rows[-1]
            print(f"{mode:<9} wall {r['wall_s']:>6.1f} s  {r['levels']} levels  {r['recommendation']} "
                  f"ret {r['retention']} {r['latency_ms']} ms  first_pass_agent {r['first_pass_agent']}")
    walls = {r["mode"]: r["wall_s"] for r in rows}
    doc = {"benchmark": "ssh_sweep", "model": what, "threshold": args.threshold, "threads": args.threads,
           "int8_search": args.int8_search, "machine": machine_facts("onnxruntime", "openvino", "paramiko"),
           "rows": rows,
           "one_shot_over_served": round(walls["one-shot"] / walls["served"], 3)
           if {"served", "one-shot"} <= set(walls) else None}
    write_json(args.out, doc)
    if doc["one_shot_over_served"] is not None:
        print(f"one-shot / served wall: {doc['one_shot_over_served']:.2f}x")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
