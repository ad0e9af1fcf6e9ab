"""What a hostile result costs the host: peak RSS and wall time of one run per hostile class, locally and over SSH.

Issue 31's goal: host RSS under 300 MB and wall under 2x the requested duration + 20 s for every hostile result
tried, locally and over SSH. Each case runs one ``edgeopt.benchmark`` (or an LLM bench, or an eval run) in a child
process against a lying board (``tests/fake_agent.py``: the real agent runs, then the board lies in what it
returns), through the local runner and through the SSH runner on a loopback sshd (``tests/integration/ssh/sshd.py``,
needs root and openssh-server). The child's own peak RSS (``VmHWM`` of /proc/<pid>/status, polled by the parent so a
child killed at the cap still has one; the agent's processes are not counted: they are the board's) and its wall
time (Python start and imports included: an upper bound of what ``edgeopt bench`` costs) are recorded against the
goals. Each case is capped (``--cap-s``); the whole run takes ~5-8 minutes on 2 loaded cores.

Classes: an honest run (the reference), a result at the result budget of small distinct integers in
``samples_ns``, the most values a result may hold (15-digit samples up to the value ceiling, within the budget:
the largest result the host parses), a 500 MB result, JSON nested 100,000 deep, an LLM token trace at the budget,
120 MB of plausible samples, an eval output flood (1 GiB written), 200,000 progress events, a result that is a
FIFO or ``/dev/zero`` (locally: a stdout that never ends; a FIFO has no local form, the result is a pipe already).

Usage: python -m benchmarks.hostile_results [--cap-s 150] [--cases budget_ints,deep] [--runners local,ssh]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, machine_facts, print_table, write_json

DURATION_S = 0.5  # the requested --min-duration of every bench case
RSS_GOAL_MB = 300.0
WALL_GOAL_S = 2 * DURATION_S + 20.0
# (case, fake agent mode locally, over SSH (None: no such form there), what runs)
CASES: list[tuple[str, str | None, str | None, str]] = [
    ("honest", "same", "same", "bench"),
    ("budget_ints", "budget_ints", "budget_ints", "bench"),
    ("values_ceiling", "values_ceiling", "values_ceiling", "bench"),
    ("result_500mb", "result_500mb", "result_500mb", "bench"),
    ("deep", "deep", "deep", "bench"),
    ("llm_trace", "llm_trace", "llm_trace", "llm"),
    ("samples_120mb", "samples_120mb", "samples_120mb", "bench"),
    ("eval_flood", "eval_write_flood", "eval_write_flood", "eval"),
    ("event_flood", "event_flood", "event_flood", "bench"),
    ("fifo", None, "fifo", "bench"),
    ("devzero", "devzero", "devzero", "bench"),
]


def _vmhwm_mb(pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _runner(spec: dict[str, Any]) -> Any:
    from edgeopt.devices import parse_host
    from edgeopt.runners import LocalRunner
    from edgeopt.runners.ssh import SshRunner

    if spec["runner"] == "local":
        return LocalRunner(python=spec["python"])
    address = parse_host(spec["host"], key=spec["key"], python=spec["python"], workdir=spec["workdir"])
    return SshRunner(address, known_hosts=Path(spec["known_hosts"]), accept_new_host_key=True)


def _call(spec: dict[str, Any], runner: Any) -> str:
    """One run of the case's kind; what the user would see, in a few words."""
    import edgeopt
    from edgeopt.bench.llm.api import bench_llm
    from edgeopt.bench.llm.workload import LlmWorkload
    from edgeopt.evaluation.device import device_outputs
    from edgeopt.settings import EnergySettings

    tmp = Path(spec["tmp"])
    if spec["kind"] == "llm":
        workload = LlmWorkload(prompt_tokens=[8], gen_tokens=[12], repetitions=3)
        llm = bench_llm(tmp / "llm", workload, runner=runner, energy=EnergySettings(enabled=False))
        return f"exit {0 if llm.valid else 1} (valid {llm.valid})"
    if spec["kind"] == "eval":
        outputs, _, _ = device_outputs(tmp / "m.onnx", tmp / "eval.npz", runtime="onnxruntime", runner=runner,
                                       max_duration_s=10.0)
        return f"exit 0 ({len(outputs)} output(s))"
    r = edgeopt.benchmark(tmp / "m.onnx", runner=runner, use_target_fps=False, iterations=20, warmup=2,
                          min_duration_s=DURATION_S, max_duration_s=10.0, energy=False, runtime="onnxruntime")
    return f"exit {0 if r.passed else 1} (valid {r.valid})"


def child(spec: dict[str, Any]) -> None:
    """Run one case here and print one JSON line: the outcome and this process's peak RSS."""
    from edgeopt.errors import EdgeoptError

    runner = _runner(spec)
    try:
        outcome = _call(spec, runner)
    except EdgeoptError as exc:
        outcome = f"exit {int(exc.exit_code)}: {str(exc)[:150]}"
    finally:
        runner.close()
    print(json.dumps({"outcome": outcome, "vmhwm_mb": _vmhwm_mb()}))


def _run_child(spec: dict[str, Any], cap_s: float) -> dict[str, Any]:
    """The case in a child process: its peak RSS (polled: kept if it is killed at ``cap_s``) and wall time."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.hostile_results", "--child", json.dumps(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while proc.poll() is None and time.perf_counter() - started < cap_s:
        peak = max(peak, _vmhwm_mb(proc.pid) or 0.0)
        time.sleep(0.05)
    killed = proc.poll() is None
    if killed:
        proc.kill()
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    try:
        reported = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        reported = {"outcome": f"killed at the {cap_s:.0f} s cap" if killed else
                    f"crashed (rc {proc.returncode}): {err.strip()[-200:]}", "vmhwm_mb": None}
    rss = max(peak, reported.get("vmhwm_mb") or 0.0)
    return {"case": spec["case"], "runner": spec["runner"], "mode": spec["mode"], "outcome": reported["outcome"],
            "rss_mb": round(rss, 1), "wall_s": round(wall, 2), "killed": killed,
            "rss_ok": rss < RSS_GOAL_MB, "wall_ok": wall < WALL_GOAL_S and not killed}


def _prepare(tmp: Path) -> None:
    """The bench model, an eval set for it and an LLM folder (the fake agent never loads it)."""
    import numpy as np

    from tests.conftest import make_matmul_model

    make_matmul_model(tmp / "m.onnx")
    np.savez(tmp / "eval.npz", x=np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32))
    (tmp / "llm").mkdir()
    (tmp / "llm" / "genai_config.json").write_text(json.dumps({"model": {"decoder": {}}}))
    (tmp / "llm" / "model.onnx").write_bytes(b"weights")


def _specs(args: argparse.Namespace, tmp: Path, sshd: Any) -> list[dict[str, Any]]:
    from tests.fake_agent import fake_python

    specs = []
    wanted = set(args.cases.split(",")) if args.cases else None
    for case, local_mode, ssh_mode, kind in CASES:
        if wanted and case not in wanted:
            continue
        for runner, mode in (("local", local_mode), ("ssh", ssh_mode)):
            if mode is None or runner not in args.runners.split(",") or (runner == "ssh" and sshd is None):
                continue
            spec = {"case": case, "runner": runner, "mode": mode, "kind": kind, "tmp": str(tmp),
                    "python": str(fake_python(tmp / "py", mode))}
            if sshd is not None:
                spec.update(host=sshd.spec, key=str(sshd.client_key), workdir=str(tmp / "device"),
                            known_hosts=str(tmp / "known_hosts"))
            specs.append(spec)
    return specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cap-s", type=float, default=150.0, help="kill a case's child after this many seconds")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--runners", default="local,ssh")
    parser.add_argument("--out", type=Path, default=RESULTS / "hostile_results.json")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    from tests.integration.ssh.sshd import Sshd, unavailable_reason

    reason = unavailable_reason() if "ssh" in args.runners else "not asked for"
    if reason:
        print(f"hostile_results: no SSH rows: {reason}", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-hostile-") as name:
        tmp = Path(name)
        _prepare(tmp)
        sshd = None if reason else Sshd(tmp / "sshd").start()
        try:
            for spec in _specs(args, tmp, sshd):
                rows.append(_run_child(spec, args.cap_s))
                r = rows[-1]
                print(f"{r['case']:>14} {r['runner']:>5}: {r['rss_mb']:7.1f} MB {r['wall_s']:7.2f} s  {r['outcome']}",
                      flush=True)
        finally:
            if sshd is not None:
                sshd.stop()
    print_table(["case", "runner", "peak RSS MB", "wall s", "RSS < 300 MB", f"wall < {WALL_GOAL_S:.0f} s", "outcome"],
                [[r["case"], r["runner"], f"{r['rss_mb']:.0f}", f"{r['wall_s']:.1f}", "yes" if r["rss_ok"] else "NO",
                  "yes" if r["wall_ok"] else "NO", r["outcome"][:90]] for r in rows])
    write_json(args.out, {"machine": machine_facts("onnxruntime", "paramiko"), "duration_s": DURATION_S,
                          "goals": {"rss_mb": RSS_GOAL_MB, "wall_s": WALL_GOAL_S}, "cap_s": args.cap_s, "rows": rows})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
