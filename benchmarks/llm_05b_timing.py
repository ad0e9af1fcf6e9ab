"""Issue 22's timing goal at Qwen2-0.5B's shapes: edgeopt's TTFT/TPOT vs onnxruntime-genai's ``benchmark_e2e.py``.

onnxruntime-genai's ``benchmark_e2e.py`` timing and edgeopt's on the SAME generations: the agent's ``generate``
command runs in this process with the runtime's ``og.Generator`` wrapped so that each call is also timed the way
benchmark_e2e.py times it (see :class:`_E2eGenerator`); edgeopt's numbers come from the host's own statistics
(``edgeopt.bench.llm.stats.cell_from_raw``) of that run. A bootstrap over repetitions gives the interval of each
ratio. Models from ``llm_05b_build.py``.

Usage: python -m benchmarks.llm_05b_timing [--work /tmp/edgeopt-05b] [--timing-models fp32,int4] [--prompt 128]
       [--gen 64] [--reps 12] [--out benchmarks/results/llm_05b.json]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import llm_05b_build as common


class _E2eGenerator:
    """``og.Generator`` with every call also timed the way benchmark_e2e.py times it (``time.perf_counter``
    around the call): prompt = ``append_tokens``; sampling = the first ``generate_next_token`` and the
    ``is_done`` after it; token generation = each later ``generate_next_token`` and the ``is_done`` after it."""

    def __init__(self, real: Any, log: list[dict[str, Any]]) -> None:
        self._g = real
        self._rec: dict[str, Any] = {"append": [], "next": [], "done": []}
        log.append(self._rec)

    def append_tokens(self, ids: Any) -> None:
        a = time.perf_counter()
        self._g.append_tokens(ids)
        self._rec["append"].append(time.perf_counter() - a)

    def generate_next_token(self) -> None:
        a = time.perf_counter()
        self._g.generate_next_token()
        self._rec["next"].append([len(self._rec["done"]), time.perf_counter() - a])

    def is_done(self) -> bool:
        a = time.perf_counter()
        done = self._g.is_done()
        self._rec["done"].append(time.perf_counter() - a)
        return done

    def __getattr__(self, name: str) -> Any:
        return getattr(self._g, name)


def _e2e_times(rec: dict[str, Any]) -> tuple[float, list[float]]:
    """(TTFT, token generation times) of one generation in benchmark_e2e.py's terms, seconds. The agent calls
    ``is_done`` before each later ``generate_next_token``, so call k's ``is_done`` is the next one recorded; the
    last token has none (the loop ends on the count): the median ``is_done`` stands in (microseconds)."""
    done = rec["done"]
    fill = float(np.median(done)) if done else 0.0
    per = [t + (done[i] if i < len(done) else fill) for i, t in rec["next"]]
    return rec["append"][-1] + per[0], per[1:]


def _boot(pairs: list[tuple[float, float]], stat: Any, n: int = 4000) -> list[float]:
    """95 % bootstrap interval of stat(edgeopt) / stat(e2e) over repetitions resampled in pairs."""
    rng = np.random.default_rng(0)
    idx = np.arange(len(pairs))
    ratios = []
    for _ in range(n):
        pick = rng.choice(idx, size=len(idx))
        a = [x for i in pick for x in np.atleast_1d(pairs[i][0])]
        b = [x for i in pick for x in np.atleast_1d(pairs[i][1])]
        ratios.append(stat(a) / stat(b))
    return [round(float(np.percentile(ratios, 2.5)), 4), round(float(np.percentile(ratios, 97.5)), 4)]


def _same_generations(folder: Path, args: Any) -> dict[str, Any]:
    """The agent's generate command in this process, its og.Generator wrapped; edgeopt's cell vs e2e."""
    from edgeopt.bench.llm.api import _energy_request, _result
    from edgeopt.bench.llm.workload import LlmWorkload
    from edgeopt.settings import EnergySettings
    from edgeopt.targets import load_registry
    from edgeopt_agent import generate as agent_generate
    from edgeopt_agent import runtimes
    from edgeopt_agent.protocol import Request
    from edgeopt_agent.runtimes.ortgenai_rt import OrtGenaiRuntime

    log: list[dict[str, Any]] = []
    rt = OrtGenaiRuntime()
    real = rt._og
    rt._og = type("og", (), {"__getattr__": lambda self, n: getattr(real, n),
                             "Generator": staticmethod(lambda m, p: _E2eGenerator(real.Generator(m, p), log))})()
    wl = LlmWorkload(prompt_tokens=(args.prompt,), gen_tokens=(args.gen,), repetitions=args.reps, warmup=1,
                     max_duration_s=1800)
    tgt = load_registry().get("local")
    request = Request(model_path=str(folder), runtime="onnxruntime_genai", generate=wl.request_dict(),
                      max_duration_s=wl.max_duration_s, energy=_energy_request(tgt, EnergySettings()))
    create = runtimes.create
    runtimes.create = lambda name: rt
    try:
        raw = agent_generate.generate(request, lambda event: None)
    finally:
        runtimes.create = create
    if raw.status != "ok":
        raise RuntimeError(raw.error)
    cell = _result(raw, folder, "onnxruntime_genai", wl, "in-process", tgt).cells[0]
    timed = log[-args.reps:]  # the warm-up generation comes first
    e2e = [_e2e_times(r) for r in timed]
    ours = [(t, s) for t, s in zip(cell.samples.ttft_ms, _split(cell.samples.tpot_ms, args.reps), strict=True)]
    ttft_pairs = [(o[0], e[0] * 1e3) for o, e in zip(ours, e2e, strict=True)]
    tok_pairs = [(o[1], [x * 1e3 for x in e[1]]) for o, e in zip(ours, e2e, strict=True)]
    e2e_ttft = [p[1] for p in ttft_pairs]
    e2e_tok = [x for p in tok_pairs for x in p[1]]
    rows = {
        "ttft_p50_vs_e2e_median": (cell.ttft_ms_p50, float(np.median(e2e_ttft)), np.median, ttft_pairs),
        "ttft_mean_vs_e2e_mean": (float(np.mean(cell.samples.ttft_ms)), float(np.mean(e2e_ttft)), np.mean,
                                  ttft_pairs),
        "tpot_mean_vs_e2e_mean": (cell.tpot_ms_mean, float(np.mean(e2e_tok)), np.mean, tok_pairs),
        "tpot_p50_vs_e2e_median": (cell.tpot_ms_p50, float(np.median(e2e_tok)), np.median, tok_pairs),
    }
    out: dict[str, Any] = {"reps": args.reps, "prompt": args.prompt, "gen": args.gen,
                           "decode_tokens_per_s": cell.decode_tokens_per_s, "valid": cell.valid}
    for name, (ours_v, theirs, stat, pairs) in rows.items():
        out[name] = {"edgeopt_ms": round(ours_v, 4), "benchmark_e2e_ms": round(theirs, 4),
                     "ratio": round(ours_v / theirs, 5), "ci95": _boot(pairs, stat)}
    out["per_rep"] = {"edgeopt_ttft_ms": cell.samples.ttft_ms, "e2e_ttft_ms": e2e_ttft,
                      "edgeopt_tpot_mean_ms": [float(np.mean(p[0])) for p in tok_pairs],
                      "e2e_tpot_mean_ms": [float(np.mean(p[1])) for p in tok_pairs]}
    return out


def _split(values: list[float], parts: int) -> list[list[float]]:
    n = len(values) // parts
    return [values[i * n:(i + 1) * n] for i in range(parts)]


def timing(args: Any) -> dict[str, Any]:
    """Goal: edgeopt's TTFT/TPOT within 3 % of benchmark_e2e.py's timing, same generations, per model."""
    out = {}
    for recipe in args.timing_models.split(","):
        print(f"  timing {recipe}", file=sys.stderr)
        out[recipe] = _same_generations(args.work / recipe / "onnxruntime_genai", args)
    return out


def main() -> int:
    ap = common.parser(__doc__.splitlines()[0])
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--reps", type=int, default=12, help="repetitions")
    ap.add_argument("--timing-models", default="fp32,int4")
    return common.run_step("timing", timing, ap.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
