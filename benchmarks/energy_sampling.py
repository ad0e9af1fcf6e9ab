"""Energy sampling perturbation: p50 latency with the power sampler running vs energy off, same model.

Two interleaved A/B designs (A = energy on: the sampler thread reads the sensor during the timed phase;
B = energy off: no sampler):

- ``process``: ``edgeopt.benchmark`` runs (the agent in a subprocess, exactly as the CLI runs it), alternating
  A and B, a few rounds per config. Real path, but each run is a new process, so run-to-run drift is large.
- ``paired``: the agent's harness (``edgeopt_agent.harness.run``) in this process, many short A/B pairs
  back to back, so slow drift (other processes, thermal) cancels in each pair's ratio.

And the sampler's own cost, which does not depend on how busy the machine is: CPU time of this process (and of
the commands it spawns) while the sampler runs for a few seconds and the main thread sleeps, per reader/rate.

This machine has no power sensor, so the sampler reads an emulated Jetson JetPack 5 INA3221 hwmon tree
(3 rails, 6 files per reading): page-cache reads of the files a Jetson has, without the I2C transfer a real
sysfs read waits on (the agent releases the GIL during that wait). Goal: p50 ratio <= 1.01.

Usage: python -m benchmarks.energy_sampling [--rounds 5] [--pairs 25] [--out benchmarks/results/...]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import edgeopt
from benchmarks.common import RESULTS, machine_facts, print_table, write_json
from edgeopt.zoo import build
from edgeopt_agent.harness import run as agent_run
from edgeopt_agent.power import Sampler, open_reader, parse_settings
from edgeopt_agent.protocol import Request

# (design, zoo model or "null", sampling rate Hz, intra-op threads, minimum iterations). 2 threads keep both
# cores of this machine busy, so the sampler has to take CPU time from inference; 100 Hz is 5x the default.
# The null runtime (an inference that returns at once) is the worst case: the timed loop never leaves Python,
# so the sampler must take the GIL from it.
CONFIGS = (
    ("process", "mobilenet-small", 20.0, 2, 200),
    ("process", "mobilenet-large", 20.0, 2, 20),
    ("paired", "mobilenet-small", 20.0, 1, 200),
    ("paired", "mobilenet-small", 20.0, 2, 200),
    ("paired", "mobilenet-small", 100.0, 2, 200),
    ("paired", "null", 100.0, 1, 200),
)
RAILS = {"VDD_IN": (5000, 2000), "VDD_CPU_GPU_CV": (5000, 600), "VDD_SOC": (5000, 400)}


def emulated_jetson(root: Path) -> Path:
    """The JetPack 5/6 ina3221 hwmon layout (labels, mV, mA) under ``root``."""
    d = root / "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"
    d.mkdir(parents=True)
    (d / "name").write_text("ina3221\n")
    for c, (label, (mv, ma)) in enumerate(RAILS.items(), start=1):
        (d / f"in{c}_label").write_text(label + "\n")
        (d / f"in{c}_input").write_text(f"{mv}\n")
        (d / f"curr{c}_input").write_text(f"{ma}\n")
    return root


RPI5_OUTPUT = "   VDD_CORE_A current(7)=2.50000000A\n   VDD_CORE_V volt(15)=0.80000000V\n"


def fake_vcgencmd(dir_: Path) -> Path:
    """A stand-in for the Pi 5's vcgencmd: a shell script printing two PMIC lines (a process per reading)."""
    path = dir_ / "vcgencmd"
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{RPI5_OUTPUT}EOF\n")
    path.chmod(0o755)
    return path


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sampler_cpu(sensor: str, settings: dict[str, str], rate_hz: float, seconds: float) -> dict[str, float]:
    """CPU used by the sampler thread (and the commands it runs) per second of sampling, main thread asleep."""
    reader = open_reader(sensor, parse_settings(settings))
    sampler = Sampler(reader, rate_hz)
    try:
        t0, p0, k0 = time.perf_counter(), time.process_time(), _children_cpu_s()
        sampler.start()
        time.sleep(seconds)
        samples = sampler.stop()
        t1, p1, k1 = time.perf_counter(), time.process_time(), _children_cpu_s()
    finally:
        reader.close()
    wall = t1 - t0
    cpu = (p1 - p0) + (k1 - k0)
    reads = sorted(sampler.read_ns)
    return {"rate_hz_used": sampler.rate_hz, "readings_per_s": len(samples) / wall,
            "cpu_ms_per_s": cpu / wall * 1e3, "cpu_pct_of_one_core": cpu / wall * 100,
            "median_read_us": reads[len(reads) // 2] / 1e3}


def measure_process(path: Path, *, energy: bool, root: Path, rate_hz: float, threads: int, iterations: int,
                    duration_s: float, warmup: int) -> dict[str, float]:
    r = edgeopt.benchmark(path, target="local", use_target_fps=False, percentile="p50", threads=threads,
                          warmup=warmup, min_duration_s=duration_s, iterations=iterations, energy=energy,
                          power_sensor="ina3221" if energy else "auto", sysfs_root=root, power_rate_hz=rate_hz)
    if energy and (r.energy is None or r.energy.source != "measured"):
        raise SystemExit("the emulated sensor was not measured: " + (r.energy.note if r.energy else "no energy"))
    return {"p50_ms": r.latency_ms.p50, "mean_ms": r.latency_ms.mean,
            "rate_hz": (r.energy.samples or 0) / r.run.timed_s if energy and r.energy else 0.0}


def measure_paired(path: Path, runtime: str, *, energy: bool, root: Path, rate_hz: float, threads: int,
                   iterations: int, duration_s: float, warmup: int) -> dict[str, float]:
    req = Request(model_path=str(path), runtime=runtime, threads=threads, warmup=warmup, iterations=iterations,
                  min_duration_s=duration_s, progress_interval_s=0,
                  energy={"enabled": energy, "sensor": "ina3221", "sysfs_root": str(root), "rate_hz": rate_hz,
                          "idle_s": 0.0})
    raw = agent_run(req, lambda e: None)
    if not raw.ok or (energy and not (raw.power.get("active") or {}).get("avg_w")):
        raise SystemExit(f"paired run failed: {raw.error or raw.power}")
    ns = sorted(raw.samples_ns)
    return {"p50_ms": ns[(len(ns) - 1) // 2] / 1e6, "mean_ms": sum(ns) / len(ns) / 1e6,
            "rate_hz": float(raw.power["achieved_rate_hz"]) if energy else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="A/B rounds per process config")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds of timed inferences per process run")
    ap.add_argument("--pairs", type=int, default=25, help="A/B pairs per paired config")
    ap.add_argument("--pair-duration", type=float, default=0.5, help="seconds of timed inferences per paired run")
    ap.add_argument("--cpu-seconds", type=float, default=5.0, help="seconds of sampling per CPU-cost measurement")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--out", type=Path, default=RESULTS / "energy_sampling.json")
    args = ap.parse_args()

    rows = []
    cpu_rows = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-energy-") as tmp:
        root = emulated_jetson(Path(tmp) / "root")
        vcgencmd = str(fake_vcgencmd(Path(tmp)))
        for sensor, settings, rate_hz in (("ina3221", {"sysfs_root": str(root)}, 20.0),
                                          ("ina3221", {"sysfs_root": str(root)}, 100.0),
                                          ("rpi5_pmic", {"vcgencmd": vcgencmd}, 20.0)):
            c = sampler_cpu(sensor, settings, rate_hz, args.cpu_seconds)
            cpu_rows.append({"sensor": sensor, "rate_hz": rate_hz, **c})
            print(f"sampler cpu {sensor} {rate_hz:g} Hz: {c['cpu_pct_of_one_core']:.3f}% of one core", file=sys.stderr)
        models = {name: build(name, Path(tmp) / f"{name}.onnx") for name in {c[1] for c in CONFIGS} - {"null"}}
        models["null"] = models["mobilenet-small"]
        for design, name, rate_hz, threads, iterations in CONFIGS:
            n, duration = (args.rounds, args.duration) if design == "process" else (args.pairs, args.pair_duration)
            on: list[dict[str, float]] = []
            off: list[dict[str, float]] = []
            for i in range(n):
                for energy in ([True, False] if i % 2 == 0 else [False, True]):  # alternate the order
                    if design == "process":
                        m = measure_process(models[name], energy=energy, root=root, rate_hz=rate_hz,
                                            threads=threads, iterations=iterations, duration_s=duration,
                                            warmup=args.warmup)
                    else:
                        m = measure_paired(models[name], "null" if name == "null" else "onnxruntime",
                                           energy=energy, root=root, rate_hz=rate_hz, threads=threads,
                                           iterations=iterations, duration_s=duration, warmup=args.warmup)
                    (on if energy else off).append(m)
                    print(f"{design} {name} {rate_hz:g} Hz {threads}t #{i + 1} energy={'on ' if energy else 'off'}: "
                          f"p50 {m['p50_ms']:.5f} ms", file=sys.stderr)
            p50_on = [m["p50_ms"] for m in on]
            p50_off = [m["p50_ms"] for m in off]
            mean_on = [m["mean_ms"] for m in on]
            mean_off = [m["mean_ms"] for m in off]
            pair_ratios = [a / b for a, b in zip(p50_on, p50_off, strict=True)]
            rows.append({
                "design": design,
                "model": name,
                "rate_hz": rate_hz,
                "threads": threads,
                "runs_per_side": n,
                "with_sampling_p50_ms": statistics.median(p50_on),
                "without_sampling_p50_ms": statistics.median(p50_off),
                "p50_ratio_of_medians": statistics.median(p50_on) / statistics.median(p50_off),
                "p50_median_pair_ratio": statistics.median(pair_ratios),
                "mean_ratio_of_medians": statistics.median(mean_on) / statistics.median(mean_off),
                "p50_ratio_per_round": pair_ratios,
                "with_sampling_p50_rounds_ms": p50_on,
                "without_sampling_p50_rounds_ms": p50_off,
                "achieved_rate_hz": statistics.median(m["rate_hz"] for m in on),
            })

    env = {
        **machine_facts("onnxruntime", "numpy"),
        "sensor": "emulated Jetson ina3221 hwmon tree (page-cache files, no I2C)",
    }
    out = {"benchmark": "energy_sampling", "settings": vars(args) | {"out": str(args.out)}, "environment": env,
           "results": rows, "sampler_cpu": cpu_rows, "goal": "p50 ratio <= 1.01"}
    write_json(args.out, out)

    print(f"\nenergy sampling perturbation on {env['cpu']} (sampler reading an emulated Jetson INA3221 tree; "
          f"load average at the end {env['load_average'][0]:.2f})")
    print_table(["design", "model", "Hz", "threads", "runs", "p50 on ms", "p50 off ms", "p50 ratio", "pair ratio",
                 "mean ratio", "readings/s"],
                [[r["design"], r["model"], f"{r['rate_hz']:g}", r["threads"], r["runs_per_side"],
                  f"{r['with_sampling_p50_ms']:.5f}", f"{r['without_sampling_p50_ms']:.5f}", r["p50_ratio_of_medians"],
                  r["p50_median_pair_ratio"], r["mean_ratio_of_medians"], f"{r['achieved_rate_hz']:.1f}"]
                 for r in rows])
    print()
    print_table(["sampler cost", "Hz", "readings/s", "CPU ms/s", "% of a core", "read us"],
                [[row["sensor"], f"{row['rate_hz_used']:g}", f"{row['readings_per_s']:.1f}", row["cpu_ms_per_s"],
                  row["cpu_pct_of_one_core"], f"{row['median_read_us']:.1f}"] for row in cpu_rows])
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
