"""Where the OpenVINO GenAI KV gap goes (session 9): memory in use every 32 tokens of one long generation.

One process per setting (``dynamic``: the default cache, grown 256 tokens at a time; ``preset``: ``cache_size`` =
1 GB, no reallocation; ``@N``: N threads, default 2), the 0.5 B int4 folder from ``llm_05b_build.py``, a 16-token
prompt and 1,580 new tokens; glibc ``malloc_trim(0)`` before each reading, taken when the context is 297 + 32 j
tokens (the same phase, 8 tokens after each dynamic growth, every 8th reading). Prints per-period growth (KB per
256 tokens) and the bytes-per-token slope over periods 2..5 and 1..5, against the formula's 7,296 B/token.

Usage: python -m benchmarks.research.llm_05b_kv_trim_trace [--settings dynamic,preset,preset@1] [--key kv_trim_trace]
       [--work /tmp/edgeopt-05b] [--out benchmarks/results/llm_05b.json]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks import llm_05b_build as common

TRACE = r"""
import ctypes, json, sys
import numpy as np, openvino as ov, openvino_genai as genai
folder, preset, threads = sys.argv[1], sys.argv[2] == "preset", int(sys.argv[3])
libc = ctypes.CDLL("libc.so.6")
def in_use():
    libc.malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4
props = {"INFERENCE_NUM_THREADS": threads}
if preset:
    sc = genai.SchedulerConfig(); sc.cache_size = 1; props["scheduler_config"] = sc
pipe = genai.LLMPipeline(folder, "CPU", **props)
ids = np.random.default_rng(0).integers(3, 8000, size=(1, 16)).astype(np.int64)
c = genai.GenerationConfig(); c.max_new_tokens = c.min_new_tokens = 1580; c.ignore_eos = True; c.do_sample = False
trace = []
class S(genai.StreamerBase):
    def __init__(s): super().__init__(); s.n = 0
    def write(s, t):
        s.n += 1
        if (16 + s.n - 1 - 297) % 32 == 0: trace.append((16 + s.n - 1, in_use()))
        return genai.StreamingStatus.RUNNING
    def end(s): pass
pipe.generate(ov.Tensor(ids), c, S())
print(json.dumps(trace))
"""
PREDICTED = 7296.0


def _setting(folder: Path, setting: str) -> dict[str, Any]:
    cache, _, threads = setting.partition("@")
    proc = subprocess.run([sys.executable, "-c", TRACE, str(folder), cache, threads or "2"], capture_output=True,
                          text=True, check=True)
    trace = json.loads(proc.stdout.strip().splitlines()[-1])
    phase = {c: kb for c, kb in trace if (c - 297) % 256 == 0}  # contexts 297, 553, ..., 1577
    ctx = sorted(phase)
    periods = [phase[b] - phase[a] for a, b in zip(ctx, ctx[1:], strict=False)]

    def slope(a: int, b: int) -> float:
        return round((phase[b] - phase[a]) * 1024 / (b - a), 1)

    return {"trace_context_kb": trace, "period_growth_kb": periods, "cache_period_kb": PREDICTED * 256 / 1024,
            "slope_periods_1_5": slope(297, 1577), "slope_periods_2_5": slope(553, 1577),
            "ratio_periods_1_5": round(PREDICTED / slope(297, 1577), 4),
            "ratio_periods_2_5": round(PREDICTED / slope(553, 1577), 4)}


def trim_trace(args: Any) -> dict[str, Any]:
    folder = args.work / "int4" / "openvino_genai"
    out: dict[str, Any] = {"predicted_bytes_per_token": PREDICTED}
    for setting in args.settings.split(","):
        out[setting] = _setting(folder, setting)
        print(f"  {setting}: periods {out[setting]['period_growth_kb']} KB, ratio 2..5 "
              f"{out[setting]['ratio_periods_2_5']}", file=sys.stderr)
    return out


def main() -> int:
    ap = common.parser(__doc__.splitlines()[0])
    ap.add_argument("--settings", default="dynamic,preset",
                    help="cache setting (dynamic|preset), each optionally @THREADS (default 2)")
    args = ap.parse_args()
    return common.run_step("kv_trim_trace", trim_trace, args)


if __name__ == "__main__":
    raise SystemExit(main())
