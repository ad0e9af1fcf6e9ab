"""Issue 22's KV goal at Qwen2-0.5B's shapes: measured KV-cache bytes per context token vs edgeopt's prediction.

Three methods (``--method``), the models from ``llm_05b_build.py``; ``agent`` (session 9, ~1.5 min) is
``edgeopt bench``'s own KV probe (docs/llm-bench.md, "Memory in use and the measured KV slope"); the other two run
one fresh process per point:

- ``decode`` (session 8, the default): isolates the cache from everything else that grows with a long prompt.
  onnxruntime-genai allocates (and zero-fills) its cache for ``max_length`` when the generator is made: one
  process per length L (a 16-token prompt, ``max_length`` = 16 + L, 8 tokens decoded), held = RSS after - RSS
  before the generator; slope over L. OpenVINO GenAI's paged cache grows while it decodes: one process per
  setting runs ONE generation (16-token prompt, ``--gen`` new tokens, EOS ignored) and reads RSS at every token
  (a streamer); the cache is allocated in 32-token blocks, first min(2 x prompt, prompt + new tokens) tokens, then
  256 tokens at a time (reallocated and copied), so the slope is fitted through the points just after each
  growth (the same phase of every step; the positions are predicted from that rule and checked against where RSS
  jumps). Variants: ``@GB`` a preset ``cache_size`` (no reallocation), ``+trim`` glibc ``malloc_trim(0)`` before
  each reading (RSS of the live allocations: what the allocator keeps of the freed pre-growth copies is
  returned).
- ``prefill`` (session 7): depth reached by a long prompt fed in chunks of ``--chunk`` tokens, 8 tokens decoded,
  held = RSS after - before the generation, slope over the depths.

Usage: python -m benchmarks.llm_05b_kv [--method decode|prefill|agent] [--work /tmp/edgeopt-05b] [--kv-model int4]
       [--gen 2048] [--lengths 512,1024,1536,2048] [--ov-precisions default,default+trim,default@1]
       [--key kv_decode] [--out benchmarks/results/llm_05b.json]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import llm_05b_build as common

BLOCK = 32  # tokens per block of OpenVINO's CPU paged cache
GROWTH = 256  # tokens the dynamic cache grows by (openvino.genai continuous_batching/scheduler.hpp)

# One fresh process per point: the held memory of one generation whose context goes in by chunks.
KV_ORT = r"""
import json, sys
import numpy as np
import onnxruntime_genai as og
folder, depth, chunk, prompt, gen = sys.argv[1], *map(int, sys.argv[2:6])
def rss(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
config = og.Config(folder)
config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": 2,
                                                                       "inter_op_num_threads": 1}}}}))
model = og.Model(config)
vocab = json.load(open(folder + "/genai_config.json"))["model"]["vocab_size"]
ids = np.random.default_rng(depth).integers(3, vocab, size=(1, depth + prompt)).astype(np.int32)
before = rss("VmRSS")
params = og.GeneratorParams(model)
total = depth + prompt + gen
params.set_search_options(max_length=total, min_length=total, do_sample=False)
g = og.Generator(model, params)
made = rss("VmRSS")
for i in range(0, depth + prompt, chunk):
    g.append_tokens(ids[:, i:i + chunk])
for _ in range(gen):
    g.generate_next_token()
after = rss("VmRSS")
kv = g.get_output("present.0.key")
print(json.dumps({"before": before, "generator_made": made, "after": after, "hwm": rss("VmHWM"),
                  "present_dtype": str(kv.dtype), "present_shape": list(kv.shape), "tokens": total}))
"""

KV_OV = r"""
import json, sys
import numpy as np
import openvino as ov
import openvino_genai as genai
folder, depth, chunk, prompt, gen, variant, warm = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6], sys.argv[7]
precision, _, cache_gb = variant.partition("@")
def rss(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
sc = genai.SchedulerConfig()
sc.max_num_batched_tokens = chunk
if cache_gb:
    sc.cache_size = int(cache_gb)  # a preset cache (GB) instead of the dynamic allocation
props = {"INFERENCE_NUM_THREADS": 2, "scheduler_config": sc}
if precision != "default":
    props["KV_CACHE_PRECISION"] = precision
if precision == "f32":  # the bf16 paged-attention kernel (AMX default) takes bf16 or u8 caches only
    props["INFERENCE_PRECISION_HINT"] = "f32"
pipe = genai.LLMPipeline(folder, "CPU", **props)
vocab = json.load(open(folder + "/config.json"))["vocab_size"]
ids = np.random.default_rng(depth).integers(3, vocab, size=(1, depth + prompt)).astype(np.int64)
cfg = genai.GenerationConfig()
cfg.max_new_tokens = gen; cfg.min_new_tokens = gen; cfg.ignore_eos = True; cfg.do_sample = False
if warm == "1":  # the plugin's first-inference allocations (~390 MB here) out of the window; its cache stays
    pipe.generate(ov.Tensor(ids[:, :prompt]), cfg)
before = rss("VmRSS")
res = pipe.generate(ov.Tensor(ids), cfg)
after = rss("VmRSS")
print(json.dumps({"before": before, "after": after, "hwm": rss("VmHWM"), "tokens": depth + prompt + gen,
                  "generated": len(res.tokens[0]),
                  "core_kv_precision": str(ov.Core().get_property("CPU", "KV_CACHE_PRECISION"))}))
"""


def _fit(depths: list[int], held: list[int]) -> dict[str, Any]:
    """Least-squares slope (bytes per context token) and intercept of the held memory over the depths."""
    slope, intercept = np.polyfit(np.asarray(depths, float), np.asarray(held, float), 1)
    resid = np.asarray(held, float) - (slope * np.asarray(depths, float) + intercept)
    return {"bytes_per_token": round(float(slope), 1), "intercept_mb": round(float(intercept) / 2**20, 2),
            "max_residual_mb": round(float(np.abs(resid).max()) / 2**20, 2)}


def _kv_points(script: str, folder: Path, extra: list[str], args: Any) -> list[dict[str, Any]]:
    rows = []
    for depth in args.depths:
        proc = subprocess.run([sys.executable, "-c", script, str(folder), str(depth), str(args.chunk), "16", "8",
                               *extra], capture_output=True, text=True, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["depth"] = depth
        row["held"] = row["after"] - row["before"]
        rows.append(row)
        print(f"  {folder.parent.name}/{folder.name} {extra} depth {depth}: held {row['held'] / 2**20:.1f} MB",
              file=sys.stderr)
    return rows



# decode method, onnxruntime-genai: the cache is allocated for max_length when the generator is made
KV_ORT_ALLOC = r"""
import json, sys
import numpy as np
import onnxruntime_genai as og
folder, prompt, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
config = og.Config(folder)
config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": 2,
                                                                       "inter_op_num_threads": 1}}}}))
model = og.Model(config)
vocab = json.load(open(folder + "/genai_config.json"))["model"]["vocab_size"]
ids = np.random.default_rng(length).integers(3, vocab, size=(1, prompt)).astype(np.int32)
before = rss()
params = og.GeneratorParams(model)
params.set_search_options(max_length=prompt + length, min_length=prompt + length, do_sample=False)
g = og.Generator(model, params)
made = rss()
g.append_tokens(ids)
for _ in range(8):
    g.generate_next_token()
kv = g.get_output("present.0.key")
print(json.dumps({"before": before, "made": made, "after": rss(), "present_dtype": str(kv.dtype),
                  "present_shape": list(kv.shape), "max_length": prompt + length}))
"""

# decode method, OpenVINO GenAI: RSS at every new token of one long generation
KV_OV_TRACE = r"""
import ctypes, json, sys
import numpy as np
import openvino as ov
import openvino_genai as genai
folder, prompt, gen, variant = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
variant, _, cache_gb = variant.partition("@")
precision, _, trim = variant.partition("+")
libc = ctypes.CDLL("libc.so.6")
def rss():
    if trim:
        libc.malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
props = {"INFERENCE_NUM_THREADS": 2}
if cache_gb:
    sc = genai.SchedulerConfig()
    sc.cache_size = int(cache_gb)
    props["scheduler_config"] = sc
if precision != "default":
    props["KV_CACHE_PRECISION"] = precision
if precision == "f32":  # the bf16 paged-attention kernel (AMX default) takes bf16 or u8 caches only
    props["INFERENCE_PRECISION_HINT"] = "f32"
pipe = genai.LLMPipeline(folder, "CPU", **props)
vocab = json.load(open(folder + "/config.json"))["vocab_size"]
ids = np.random.default_rng(gen).integers(3, vocab, size=(1, prompt)).astype(np.int64)
cfg = genai.GenerationConfig()
cfg.max_new_tokens = gen; cfg.min_new_tokens = gen; cfg.ignore_eos = True; cfg.do_sample = False
trace = []
class Stamps(genai.StreamerBase):
    def write(self, token):
        trace.append(rss())
        return genai.StreamingStatus.RUNNING
    def end(self):
        pass
before = rss()
pipe.generate(ov.Tensor(ids), cfg, Stamps())
print(json.dumps({"before": before, "trace": trace, "after": rss(),
                  "core_kv_precision": str(ov.Core().get_property("CPU", "KV_CACHE_PRECISION"))}))
"""


def _run(script: str, *argv: Any) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", script, *map(str, argv)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ov_per_token(facts: dict[str, Any], kind: str) -> float:
    """Bytes per token of the CPU plugin's cache of element ``kind``: u8 keeps the value's f32 scale and zero
    point per token and head, the key's per channel and 32-token block (x86 default); float caches nothing."""
    from edgeopt.bench.llm.stats import kv_cache_bytes

    elem = {"u8": 1, "uint8_t": 1, "bf16": 2, "f16": 2, "f32": 4, "float": 4}[kind]
    key, value = (8 * facts["head_size"] / BLOCK, 8) if elem == 1 else (0, 0)
    return kv_cache_bytes(facts, 1000, 1, elem, key, value) / 1000


def growth_points(prompt: int, gen: int) -> list[int]:
    """Context lengths (tokens with a KV entry) at which the dynamic cache reallocates: first sized for
    min(2 x prompt, prompt + gen) tokens in whole blocks, then grown by GROWTH tokens when a token does not fit."""
    capacity = -(-min(2 * prompt, prompt + gen) // BLOCK) * BLOCK
    points = []
    for context in range(prompt + 1, prompt + gen):
        if context > capacity:
            capacity += GROWTH
            points.append(context)
    return points


def _ov_decode(folder: Path, facts: dict[str, Any], variant: str, args: Any) -> dict[str, Any]:
    row = _run(KV_OV_TRACE, folder, args.prompt_len, args.gen, variant)
    trace = np.asarray(row.pop("trace"), float)
    # trace[i]: after the (i+1)-th new token was produced, when the cache holds prompt + i tokens
    context = args.prompt_len + np.arange(len(trace))
    points = [p for p in growth_points(args.prompt_len, args.gen) if p <= context[-1]]
    at = np.asarray([p - args.prompt_len for p in points])
    jumps = np.diff(trace)
    steps = [int(context[i + 1]) for i in np.argsort(jumps)[::-1][:len(points)]]
    kind = row["core_kv_precision"] if variant.partition("@")[0].partition("+")[0] == "default" \
        else variant.partition("@")[0].partition("+")[0]
    kind = kind.replace("<Type: '", "").rstrip("'>")
    pred = ov_per_token(facts, kind)
    slope = float(np.polyfit(context[at], trace[at], 1)[0]) if len(at) >= 2 else None
    every = float(np.polyfit(context[at[0]:], trace[at[0]:], 1)[0]) if len(at) else None
    print(f"  OV {variant}: {slope} B/token at the growth points, predicted {pred}", file=sys.stderr)
    return {"kv_precision": kind, "predicted_bytes_per_token": pred, "growth_points_predicted": points,
            "largest_rss_jumps_at": sorted(steps), "measured_bytes_per_token": round(slope, 1) if slope else None,
            "measured_all_points_bytes_per_token": round(every, 1) if every else None,
            "ratio_predicted_to_measured": round(pred / slope, 4) if slope else None,
            "growth_mb": round(float(trace[-1] - trace[0]) / 2**20, 2),
            "first_token_mb": round(float(trace[0] - row["before"]) / 2**20, 2),
            "rss_mb_every_64": [round(float(x) / 2**20, 2) for x in trace[::64]]}


def _ort_decode(folder: Path, facts: dict[str, Any], args: Any) -> dict[str, Any]:
    from edgeopt.bench.llm.stats import kv_cache_bytes

    rows = [_run(KV_ORT_ALLOC, folder, args.prompt_len, n) for n in args.lengths]
    lengths = [r["max_length"] for r in rows]
    made = [r["made"] - r["before"] for r in rows]
    held = [r["after"] - r["before"] for r in rows]
    pred = kv_cache_bytes(facts, 1, 1, np.dtype(rows[0]["present_dtype"]).itemsize)
    fit_made, fit_held = (float(np.polyfit(lengths, y, 1)[0]) for y in (made, held))
    print(f"  onnxruntime-genai: {fit_held:.0f} B/token of max_length held ({fit_made:.0f} when the generator is "
          f"made), predicted {pred}", file=sys.stderr)
    # the slope of the held memory (generator made, prompt in, 8 tokens out) is the measure: right after the
    # generator is made, the first (smallest) cache can land in heap memory the load freed, without new RSS
    return {"kv_dtype": rows[0]["present_dtype"], "max_lengths": lengths, "predicted_bytes_per_token": pred,
            "generator_made_mb": [round(x / 2**20, 2) for x in made], "held_mb": [round(x / 2**20, 2) for x in held],
            "measured_bytes_per_token": round(fit_held, 1), "generator_made_bytes_per_token": round(fit_made, 1),
            "ratio_predicted_to_measured": round(pred / fit_held, 4),
            "ratio_predicted_to_generator_made": round(pred / fit_made, 4)}


def kv_decode(args: Any) -> dict[str, Any]:
    """Bytes per context token measured in the decode phase (see the module docstring) vs the prediction."""
    cfg = json.loads((args.work / "hf" / "config.json").read_text())
    facts = {"layers": cfg["num_hidden_layers"], "kv_heads": cfg["num_key_value_heads"],
             "head_size": cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]}
    out: dict[str, Any] = {"method": "decode", "model": args.kv_model, "work": str(args.work), "facts": facts,
                           "prompt": args.prompt_len, "gen": args.gen}
    if not args.ov_only:
        out["onnxruntime_genai"] = _ort_decode(args.work / args.kv_model / "onnxruntime_genai", facts, args)
    for variant in args.ov_precisions.split(","):
        out[f"openvino_genai[{variant}]"] = _ov_decode(args.work / args.kv_model / "openvino_genai", facts, variant,
                                                       args)
    return out

def kv_agent(args: Any) -> dict[str, Any]:
    """The agent's own measurement (session 9): ``bench_llm`` of one small cell per runtime through the agent
    subprocess, as users run it; its KV probe after the timed repetitions gives bytes per token from the memory
    in use (glibc ``malloc_trim(0)`` before each reading) and from raw RSS."""
    from edgeopt.bench.llm import LlmWorkload, bench_llm

    out: dict[str, Any] = {"method": "agent", "model": args.kv_model, "work": str(args.work)}
    runtimes = ["openvino_genai"] + ([] if args.ov_only else ["onnxruntime_genai"])
    for runtime in runtimes:
        result = bench_llm(args.work / args.kv_model / runtime,
                           LlmWorkload(prompt_tokens=(16,), gen_tokens=(8,), threads=(2,), repetitions=2, warmup=1),
                           energy=None)
        cell, probe = result.cells[0], result.loads[0].kv_probe
        assert probe is not None
        raw_ratio = (round(cell.kv_bytes_per_token_predicted / probe.raw_bytes_per_token, 4)
                     if cell.kv_bytes_per_token_predicted and probe.raw_bytes_per_token else None)
        out[runtime] = {"method": probe.method, "predicted_bytes_per_token": cell.kv_bytes_per_token_predicted,
                        "measured_in_use_bytes_per_token": probe.bytes_per_token,
                        "ratio_predicted_to_in_use": cell.kv_measured_ratio,
                        "measured_raw_bytes_per_token": probe.raw_bytes_per_token,
                        "ratio_predicted_to_raw": raw_ratio, "points_tokens_inuse_kb_raw_kb": probe.points,
                        "probe_s": probe.seconds, "rss_in_use_mb": cell.rss_in_use_mb,
                        "rss_in_use_growth_mb": cell.rss_in_use_growth_mb, "rss_growth_mb": cell.rss_growth_mb,
                        "peak_rss_mb": cell.peak_rss_mb, "note": probe.note,
                        "runtime_version": result.runtime.get("version")}
        print(f"  agent {runtime}: {probe.bytes_per_token} B/token in use ({probe.raw_bytes_per_token} raw), "
              f"predicted {cell.kv_bytes_per_token_predicted}: {cell.kv_measured_ratio}", file=sys.stderr)
    out["cpu"] = result.environment.get("cpu")
    return out


def kv_prefill(args: Any) -> dict[str, Any]:
    """Measured bytes per context token (fresh processes, chunked prefill) vs edgeopt's prediction."""
    from edgeopt.bench.llm.stats import kv_cache_bytes

    cfg = json.loads((args.work / "hf" / "config.json").read_text())
    facts = {"layers": cfg["num_hidden_layers"], "kv_heads": cfg["num_key_value_heads"],
             "head_size": cfg["hidden_size"] // cfg["num_attention_heads"]}
    out: dict[str, Any] = {"method": "prefill", "model": args.kv_model, "chunk": args.chunk, "depths": args.depths,
                           "prompt": 16, "gen": 8, "facts": facts}
    out["ov_warm_up"] = args.ov_warm
    if not args.ov_only:
        ort = _kv_points(KV_ORT, args.work / args.kv_model / "onnxruntime_genai", [], args)
        dtype_bytes = np.dtype(ort[0]["present_dtype"]).itemsize
        predicted = kv_cache_bytes(facts, 1, 1, dtype_bytes)
        fit = _fit([r["depth"] for r in ort], [r["held"] for r in ort])
        out["onnxruntime_genai"] = {"points": ort, "fit": fit, "kv_dtype": ort[0]["present_dtype"],
                                    "predicted_bytes_per_token": predicted,
                                    "ratio_predicted_to_measured": round(predicted / fit["bytes_per_token"], 4)}
    for precision in args.ov_precisions.split(","):
        rows = _kv_points(KV_OV, args.work / args.kv_model / "openvino_genai", [precision, str(int(args.ov_warm))],
                          args)
        fit = _fit([r["depth"] for r in rows], [r["held"] for r in rows])
        # edgeopt's formula with the cache's element type (the CPU plugin's default is u8 + an f32 scale and zero
        # point per token and head), and the fp32 it assumed before session 7
        kind = rows[0]["core_kv_precision"] if precision.partition("@")[0] == "default" else precision.partition("@")[0]
        pred = ov_per_token(facts, kind.replace("<Type: '", "").rstrip("'>"))
        out[f"openvino_genai[{precision}]"] = {
            "points": rows, "fit": fit, "predicted_bytes_per_token": pred,
            "ratio_predicted_to_measured": round(pred / fit["bytes_per_token"], 4),
            "fp32_assumption_bytes_per_token": kv_cache_bytes(facts, 1, 1, 4)}
    return out


def main() -> int:
    ap = common.parser(__doc__.splitlines()[0])
    ap.add_argument("--method", choices=("decode", "prefill", "agent"), default="decode")
    ap.add_argument("--kv-model", default="int4", help="recipe folder (the cache's dtype does not depend on it)")
    ap.add_argument("--gen", type=int, default=2048, help="decode: OpenVINO GenAI's new tokens")
    ap.add_argument("--prompt-len", type=int, default=16, help="decode: prompt tokens")
    ap.add_argument("--lengths", type=lambda v: [int(x) for x in v.split(",")], default=[512, 1024, 1536, 2048],
                    help="decode: onnxruntime-genai max_length - prompt, one process each")
    ap.add_argument("--depths", type=lambda v: [int(x) for x in v.split(",")], default=[0, 512, 1024, 1536, 2048])
    ap.add_argument("--chunk", type=int, default=16, help="prefill: tokens per prefill step")
    ap.add_argument("--ov-precisions", default=None,
                    help="KV_CACHE_PRECISION values, each optionally +trim (decode) and @GB: a preset cache_size "
                         "(default: decode default,default+trim,default@1; prefill default,bf16,f32)")
    ap.add_argument("--ov-only", action="store_true", help="OpenVINO GenAI only")
    ap.add_argument("--ov-warm", action="store_true", help="prefill: one short generation before the window")
    args = ap.parse_args()
    if args.ov_precisions is None:
        args.ov_precisions = "default,default+trim,default@1" if args.method == "decode" else "default,bf16,f32"
    step = {"decode": kv_decode, "prefill": kv_prefill, "agent": kv_agent}[args.method]
    return common.run_step({"prefill": "kv", "decode": "kv_decode", "agent": "kv_agent"}[args.method], step, args)


if __name__ == "__main__":
    raise SystemExit(main())
