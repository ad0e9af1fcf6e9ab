"""A lying device agent of the tests' own: an untrusted board (docs/reliability.md, "Untrusted device").

The seam is the device's interpreter (``--python``, ``SshAddress.python``, ``LocalRunner(python=...)``): a board
runs whatever ``python -m edgeopt_agent ...`` is there, so :func:`fake_python` writes an executable that stands in
for that interpreter. It runs the real agent (beside it, same arguments) and then lies in what it returns, as a
broken or compromised board could: escapes and markup in its strings, floods, impossible numbers, wrong types,
deep nesting, hostile eval outputs. No edgeopt code is replaced or mocked: the runners, the SSH transport and
the CLI are the real ones.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# Every string a device reports, poisoned: a window-title OSC, clear-screen and colour CSIs, a lone C1 CSI, a
# clickable rich link to an outside site, HTML that runs script where Markdown is rendered, a bidi override.
INJECT = ("v9\x1b]0;PWNED-title\x07\x1b[2J\x1b[31m[link=https://evil.example]click[/link]"
          "<script>alert(1)</script><img src=x onerror=alert(2)>\x9b2J\u202e")
FLOOD_BYTES = 24 << 20  # over the smallest stderr / stdout budget (16 MiB + 64 KiB per second of max_duration_s)
RESULT_FLOOD_BYTES = 136 << 20  # over the result budget (a fixed 128 MiB, edgeopt.runners.limits)
EVENT_FLOOD = 200_000  # progress events in one run ("event_flood")
PAD_ITEMS = 40_000  # 1,000-character strings padding an honest result to ~40 MB ("padded")
BIG_RESULT_BYTES = 500_000_000  # "result_500mb": far over the result budget
SAMPLES_BYTES = 120_000_000  # "samples_120mb": realistic latencies (7 digits, as json.dumps writes them)
SPLICE = "@@splice@@"  # where a big body of numbers goes in a result's JSON text


def fake_python(where: Path, mode: str) -> Path:
    """An executable at ``where/<mode>/python`` that behaves as the interpreter of a board lying in ``mode``."""
    path = where / mode / "python"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO)!r})\n"
                    f"from tests.fake_agent import main\nsys.exit(main({mode!r}, sys.argv[1:]))\n")
    path.chmod(0o755)
    return path


def python_without_serve(path: Path, python: str = sys.executable) -> Path:
    """An executable at ``path`` that stands in for ``python`` on a board whose agent predates ``serve``: argparse
    refuses that command (exit 2, "invalid choice: 'serve'" on stderr); every other command runs the real agent."""
    path.write_text("#!/bin/sh\ncase \"$*\" in *' serve '*) echo \"edgeopt_agent: error: invalid choice: 'serve'\" >&2;"
                    f" exit 2;; esac\nexec {python} \"$@\"\n")
    path.chmod(0o755)
    return path


def _args(argv: list[str]) -> tuple[str, dict[str, str], list[str]]:
    """``-m edgeopt_agent CMD --k v ...`` -> the command, its options, and the argv for the real agent."""
    rest = argv[2:]
    command, opts, passed, i = rest[0], {}, [rest[0]], 1
    while i < len(rest):
        key = rest[i]
        if key == "--exit-on-stdin-eof":  # the real agent must not watch our stdin (we read it, or it is idle)
            i += 1
            continue
        value = rest[i + 1] if i + 1 < len(rest) else ""
        opts[key] = value
        if key not in ("--host-silence-s", "--request", "--result"):
            passed += [key, value]
        i += 2
    return command, opts, passed


def _real(command: str, opts: dict[str, str], passed: list[str], tmp: Path) -> dict[str, Any]:
    """Run the real agent with the same request; its result as a dict."""
    request = opts.get("--request", "-")
    if request == "-" and command != "probe":
        (tmp / "request.json").write_text(sys.stdin.read())
        request = str(tmp / "request.json")
    out = tmp / "result.json"
    argv = [sys.executable, "-m", "edgeopt_agent", *passed]
    if command != "probe":
        argv += ["--request", request, "--result", str(out)]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, check=False)
    text = out.read_text() if command != "probe" else proc.stdout.decode()
    return json.loads(text.strip().splitlines()[-1])


def _write(opts: dict[str, str], text: str) -> None:
    target = opts.get("--result", "-")
    if target in ("-", ""):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    else:
        Path(target).write_text(text)


def _flood(stream: Any, size: int, chunk: bytes = b"A" * (1 << 16)) -> None:
    for _ in range(size // len(chunk)):
        stream.write(chunk)
    stream.flush()


def main(mode: str, argv: list[str]) -> int:
    """Behave as ``python -m edgeopt_agent ...`` on a board lying in ``mode``; anything else the host runs with
    the board's interpreter (``python -c`` unpacking the uploaded agent, ``python -V``) is the real interpreter."""
    if argv[:2] != ["-m", "edgeopt_agent"]:
        os.execv(sys.executable, [sys.executable, *argv])
    command, opts, passed = _args(argv)
    if mode == "stderr_flood":  # one endless line, then a real result
        _flood(sys.stderr.buffer, FLOOD_BYTES)
    if mode == "stdout_flood":
        _flood(sys.stdout.buffer, FLOOD_BYTES if opts.get("--result", "-") != "-" else RESULT_FLOOD_BYTES)
        return 0
    if mode == "result_flood" and command != "probe" and opts.get("--result", "-") not in ("-", ""):
        with open(opts["--result"], "wb") as fh:  # sparse: costs the device nothing, reads as 72 MB
            fh.truncate(RESULT_FLOOD_BYTES)
        return 0
    if command == "generate" and mode == "llm_trace":
        _llm_trace(opts, llm_result(_request(opts)))
        return 0
    if command == "generate" and mode.startswith("llm_"):  # no real LLM: an honest board's readings, then the lie
        _write(opts, LLM_LIES[mode](llm_result(_request(opts))))
        return 0
    if mode in ("fifo", "devzero") and command != "probe" and opts.get("--result", "-") not in ("-", ""):
        _never_ending(Path(opts["--result"]), mode)
        return 0
    if mode == "devzero" and command != "probe":  # the local result channel (stdout) never ends
        _flood(sys.stdout.buffer, 1 << 62)
    if mode == "event_flood":
        _event_flood(sys.stderr)
    if mode == "result_500mb" and command != "probe" and opts.get("--result", "-") not in ("-", ""):
        with open(opts["--result"], "wb") as fh:  # sparse: its size alone must refuse it
            fh.truncate(BIG_RESULT_BYTES)
        return 0
    with tempfile.TemporaryDirectory(prefix="fake-agent-") as tmp:
        result = _real(command, opts, passed, Path(tmp))
    if mode in BIG_SAMPLES and command != "probe":
        BIG_SAMPLES[mode](result, opts)
        return 0
    if command == "probe":
        if mode == "inject":
            result["environment"]["hostname"] = result["environment"]["cpu"] = result["agent_version"] = INJECT
        sys.stdout.write(json.dumps(result) + "\n")
        return 0
    text = LIES.get(mode, _same)(result, opts)
    _write(opts, text)
    return 0


def int_body(nbytes: int, low: int = 1000, high: int = 10_000, sep: str = ",") -> bytes:
    """About ``nbytes`` of JSON integers ``low..high-1`` in turn (ints above 256 are not Python's cached small
    ints: each is its own object once parsed), joined by ``sep``, without a trailing separator."""
    chunk = (sep.join(str(i) for i in range(low, high)) + sep).encode()
    return (chunk * max(1, nbytes // len(chunk)))[:-len(sep)]


def _spliced(opts: dict[str, str], result: dict[str, Any], body: bytes | None, size: int | None = None) -> None:
    """Write ``result`` whose :data:`SPLICE` value becomes the JSON array ``[body]``; with ``size``, an endless
    array (``body`` repeated) of about that many bytes, so what the host reads is a flood of numbers."""
    head, tail = json.dumps(result).split(json.dumps(SPLICE))
    target = opts.get("--result", "-")
    fh = sys.stdout.buffer if target in ("-", "") else open(target, "wb")  # noqa: SIM115 - closed below
    try:
        fh.write(head.encode() + b"[")
        written = 0
        assert body is not None
        while True:
            fh.write(body)
            written += len(body)
            if size is None or written >= size:
                break
            fh.write(b",")
        fh.write(b"]" + tail.encode() + b"\n")
        fh.flush()
    except BrokenPipeError:  # the host stopped reading: a flood refused
        pass
    finally:
        if fh is not sys.stdout.buffer:
            fh.close()


def _budget() -> int:
    sys.path.insert(0, str(REPO / "device_agent"))
    from edgeopt.runners.limits import RESULT_MAX_BYTES

    return int(RESULT_MAX_BYTES)


def _budget_ints(result: dict[str, Any], opts: dict[str, str]) -> None:
    """``samples_ns`` of small distinct integers filling the result budget less 1 MiB (every byte allowed)."""
    body = int_body(_budget() - (1 << 20))
    result["samples_ns"], result["timed_inferences"] = SPLICE, body.count(b",") + 1
    _spliced(opts, result, body)


def _samples_120mb(result: dict[str, Any], opts: dict[str, str]) -> None:
    """120 MB of plausible latencies (1.000-1.010 ms, ``json.dumps``'s ``", "``), consistent count."""
    body = int_body(SAMPLES_BYTES, 1_000_000, 1_010_000, ", ")
    result["samples_ns"], result["timed_inferences"] = SPLICE, body.count(b",") + 1
    _spliced(opts, result, body)


def _result_500mb(result: dict[str, Any], opts: dict[str, str]) -> None:
    """A result of :data:`BIG_RESULT_BYTES` on stdout: the local result channel (over SSH a sparse file)."""
    result["samples_ns"] = SPLICE
    _spliced(opts, result, int_body(1 << 20), BIG_RESULT_BYTES)


def _values_ceiling(result: dict[str, Any], opts: dict[str, str]) -> None:
    """As many 15-digit samples as a result may hold (edgeopt's count of values) within its byte budget: the
    most a hostile result can make the host parse."""
    sys.path.insert(0, str(REPO / "device_agent"))
    from edgeopt.runners.limits import RESULT_MAX_VALUES

    count = min(RESULT_MAX_VALUES - 100, (_budget() - (1 << 20)) // 16)
    chunk = (",".join(str(10**14 + i) for i in range(1000)) + ",").encode()
    body = (chunk * (count // 1000 + 1))[:16 * count - 1]
    result["samples_ns"], result["timed_inferences"] = SPLICE, count
    _spliced(opts, result, body)


BIG_SAMPLES: dict[str, Any] = {"values_ceiling": _values_ceiling, "budget_ints": _budget_ints,
                               "samples_120mb": _samples_120mb, "result_500mb": _result_500mb}


def _llm_trace(opts: dict[str, str], result: dict[str, Any]) -> None:
    """An LLM answer whose first repetition's token trace fills the result budget less 1 MiB (small ints)."""
    result["generate"]["cells"][0]["reps"][0]["token_ns"] = SPLICE
    _spliced(opts, result, int_body(_budget() - (1 << 20)))


def _never_ending(result: Path, mode: str) -> None:
    """A result.json no read ever finishes: a FIFO nobody writes to, or a link to /dev/zero."""
    result.unlink(missing_ok=True)
    if mode == "fifo":
        os.mkfifo(result)
    else:
        result.symlink_to("/dev/zero")


def _event_flood(stream: Any) -> None:
    """:data:`EVENT_FLOOD` progress events, each on its own line (a few MB: under the stderr budget)."""
    line = '{"event": "progress", "phase": "flood", "done": %d}\n'
    stream.write("".join(line % i for i in range(EVENT_FLOOD)))
    stream.flush()


def _padded(result: dict[str, Any], opts: dict[str, str]) -> str:
    """The real result with :data:`PAD_ITEMS` strings of 1,000 characters in its environment (~40 MB)."""
    result["environment"]["pad"] = [f"{i:08d}" + "x" * 992 for i in range(PAD_ITEMS)]
    return json.dumps(result)


def _same(result: dict[str, Any], opts: dict[str, str]) -> str:
    return json.dumps(result)


def _inject(result: dict[str, Any], opts: dict[str, str]) -> str:
    sys.stderr.write(json.dumps({"event": "phase", "phase": INJECT}) + "\n" + INJECT + "\n")
    result["runtime"]["version"] = INJECT
    result["environment"]["hostname"] = INJECT
    result["environment"]["cpu"] = INJECT
    return json.dumps(result)


def _error(result: dict[str, Any], opts: dict[str, str]) -> str:
    sys.stderr.write(INJECT + "\n")
    return json.dumps({"status": "error", "error": "runtime crashed: " + INJECT, "error_kind": "runtime",
                       "request": result.get("request"), "agent_version": INJECT})


def _numbers(change: dict[str, Any]) -> Any:
    def lie(result: dict[str, Any], opts: dict[str, str]) -> str:
        n = len(result["samples_ns"])
        for key, value in change.items():
            if key == "samples_ns":
                result[key] = value(n)
            elif key.startswith("memory_kb."):
                result["memory_kb"][key.split(".", 1)[1]] = value
            else:
                result[key] = value
        result["timed_inferences"] = len(result["samples_ns"])
        return json.dumps(result)  # json writes NaN as NaN, which Python's json (and edgeopt's) reads back
    return lie


def _profile_layers(result: dict[str, Any], **change: Any) -> str:
    """Every layer of a profile result changed (``median_us`` summing to 571,000 ms, NaN, an injected name)."""
    for layer in result["profile"]["layers"]:
        layer.update(change)
    return json.dumps(result)


def _deep(result: dict[str, Any], opts: dict[str, str]) -> str:
    text = json.dumps(result)
    return text[:-1] + ', "environment": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _eval_npz(arrays: dict[str, Any] | None = None, raw_members: dict[str, bytes] | None = None) -> Any:
    def lie(result: dict[str, Any], opts: dict[str, str]) -> str:
        out = (result.get("request") or {}).get("eval_output")
        if out:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
                for name, value in (arrays or {}).items():
                    member = io.BytesIO()
                    np.save(member, value)
                    zf.writestr(name + ".npy", member.getvalue())
                for name, data in (raw_members or {}).items():
                    zf.writestr(name, data)
            Path(out).write_bytes(buf.getvalue())
        return json.dumps(result)
    return lie


def _huge_header() -> bytes:
    """An .npy that declares 4 GB of float32 (4 samples) and holds 16 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (4, 250_000_000)})
    return buf.getvalue() + b"\0" * 16


def _zeros_bomb() -> bytes:
    """A real .npy of 256 MB of zeros, 4 samples (deflates to ~250 KB in the archive)."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (4, 1 << 24)})
    return buf.getvalue() + bytes(256 << 20)


def _eval_flood(result: dict[str, Any], opts: dict[str, str]) -> str:
    with open(result["request"]["eval_output"], "r+b") as fh:  # sparse: 8 GB on paper
        fh.truncate(8 << 30)
    return json.dumps(result)


def _eval_write_flood(result: dict[str, Any], opts: dict[str, str]) -> str:
    """Real bytes, not a sparse file: 1 GiB appended to the eval output, 1 MiB at a time."""
    with open(result["request"]["eval_output"], "ab") as fh:
        for _ in range(1024):
            fh.write(b"\0" * (1 << 20))
            fh.flush()
    return json.dumps(result)


LIES: dict[str, Any] = {
    "inject": _inject,
    "error_inject": _error,
    "nan": _numbers({"samples_ns": lambda n: [float("nan")] * n}),
    "negative": _numbers({"samples_ns": lambda n: [-1_000_000] * n}),
    "zero": _numbers({"samples_ns": lambda n: [0] * n}),
    "too_many": _numbers({"samples_ns": lambda n: [1000] * 200_000, "timed_wall_s": 0.0002}),
    "negative_wall": _numbers({"timed_wall_s": -5.0}),
    "nan_wall": _numbers({"timed_wall_s": float("nan")}),
    "negative_memory": _numbers({"memory_kb.peak": -4096}),
    "nan_power": _numbers({"power": {"sensor": "rapl", "kind": "power", "rails": ["package-0"],
                                     "idle": {"samples": 10, "duration_s": 0.5, "avg_w": 2.0},
                                     "active": {"samples": 10, "duration_s": 0.5, "avg_w": float("nan")}}}),
    "type_samples": _numbers({"samples_ns": lambda n: "fast"}),
    "type_frames": _numbers({"frames": {"fps": 30.0, "period_ns": "fast", "scheduled": 1, "completed": 1,
                                        "misses": 0}}),
    "type_runtime": _numbers({"runtime": ["onnxruntime", "1.0"]}),
    "type_wall": _numbers({"timed_wall_s": "1.0"}),
    "type_version": _numbers({"runtime": {"name": "onnxruntime", "version": {"major": 1}}}),
    "profile_huge": lambda result, opts: _profile_layers(result, median_us=571_000_000.0 / max(
        1, len(result["profile"]["layers"]))),
    "profile_negative": lambda result, opts: _profile_layers(result, median_us=-5.0),
    "profile_nan": lambda result, opts: _profile_layers(result, median_us=float("nan"), p90_us=float("nan")),
    "profile_inject": lambda result, opts: _profile_layers(result, name=INJECT),
    "type_profile": _numbers({"profile": {"layers": [{"name": 5, "median_us": "fast"}], "inference_ns": [1]}}),
    "deep": _deep,
    "eval_keys": _eval_npz({"logits": np.zeros((4, 3), np.float32)}),
    "eval_header_bomb": _eval_npz(raw_members={"out0.npy": _huge_header()}),
    "eval_zip_bomb": lambda result, opts: _eval_npz(raw_members={"out0.npy": _zeros_bomb()})(result, opts),
    "eval_flood": _eval_flood,
    "eval_write_flood": _eval_write_flood,
    "padded": _padded,
}



def _request(opts: dict[str, str]) -> dict[str, Any]:
    where = opts.get("--request", "-")
    return json.loads(sys.stdin.read() if where in ("-", "") else Path(where).read_text())


def _rep(gen_tokens: int, ttft_ns: int = 5_000_000, token_ns: int = 2_000_000) -> dict[str, Any]:
    tokens = [token_ns] * (gen_tokens - 1)
    return {"ttft_ns": ttft_ns, "prefill_ns": ttft_ns - 100_000, "token_ns": tokens, "e2e_ns": ttft_ns + sum(tokens),
            "tokens_out": gen_tokens, "rss_before_kb": 90_000, "rss_after_kb": 91_000, "peak_rss_kb": 95_000,
            "kv": {"dtype_bytes": 4, "shape": [1, 2, 64, 16]}, "start_s": 0.0}


def llm_result(request: dict[str, Any]) -> dict[str, Any]:
    """What an honest board's agent returns for ``generate`` (edgeopt_agent.generate's keys): 5 ms to the first
    token, 2 ms per later token, every cell of the request's grid."""
    from edgeopt_agent import environment
    from edgeopt_agent.protocol import PROTOCOL_VERSION

    spec, loads, cells = request["generate"], [], []
    for threads in spec["threads"]:
        loads.append({"threads": threads, "load_ms": 120.0, "rss_before_kb": 50_000, "rss_after_kb": 90_000,
                      "power": {}, "trace": None, "trim": None,
                      "kv_probe": {"method": None, "points": [], "note": "disabled (--no-kv-probe)"}})
        for p, g, d, b in itertools.product(spec["prompt_tokens"], spec["gen_tokens"], spec["context_depth"],
                                            spec["batch"]):
            cells.append({"prompt_tokens": p, "gen_tokens": g, "context_depth": d, "batch": b, "threads": threads,
                          "warmup": spec.get("warmup", 1), "unsupported": None, "energy": None,
                          "reps": [_rep(g) for _ in range(spec["repetitions"])]})
    model = {"layers": 2, "kv_heads": 2, "head_size": 16, "vocab_size": 512, "context_length": 1024,
             "source": "genai_config.json"}
    return {"status": "ok", "request": request, "runtime": {"name": "onnxruntime_genai", "version": "0.5.0"},
            "environment": environment.collect({}), "agent_version": "fake", "protocol_version": PROTOCOL_VERSION,
            "generate": {"model": model, "loads": loads, "cells": cells, "truncated": False}}


def _llm(change: Any) -> Any:
    """A lie about the first cell (``change(cell, result)`` edits it in place)."""
    def lie(result: dict[str, Any]) -> str:
        change(result["generate"]["cells"][0], result)
        return json.dumps(result)
    return lie


def _every_rep(key: str, value: Any) -> Any:
    def change(cell: dict[str, Any], result: dict[str, Any]) -> None:
        for rep in cell["reps"]:
            rep[key] = value(rep) if callable(value) else value
    return change


def _llm_inject(cell: dict[str, Any], result: dict[str, Any]) -> None:
    cell["unsupported"], cell["reps"] = INJECT, []
    result["runtime"]["version"] = INJECT


LLM_LIES: dict[str, Any] = {
    "llm_same": _llm(lambda cell, result: None),
    "llm_inject": _llm(_llm_inject),
    "llm_nan": _llm(_every_rep("ttft_ns", float("nan"))),
    "llm_negative": _llm(_every_rep("token_ns", lambda rep: [-2_000_000] * len(rep["token_ns"]))),
    "llm_zero": _llm(_every_rep("token_ns", lambda rep: [0] * len(rep["token_ns"]))),
    "llm_after_last": _llm(_every_rep("e2e_ns", 1_000)),
    "llm_extra_tokens": _llm(_every_rep("token_ns", lambda rep: [2_000_000] * 10_000)),
    "llm_nan_load": _llm(lambda cell, result: result["generate"]["loads"][0].update(load_ms=float("nan"))),
    "llm_type_tokens": _llm(_every_rep("token_ns", "fast")),
    "llm_type_rep": _llm(lambda cell, result: cell.update(reps=[[1, 2]])),
    "llm_missing": _llm(lambda cell, result: [rep.pop("e2e_ns") for rep in cell["reps"]]),
    "llm_no_load": _llm(lambda cell, result: cell.update(threads=7)),
    "llm_facts": _llm(lambda cell, result: result["generate"]["model"].update(layers="two")),
    "llm_zero_batch": _llm(lambda cell, result: cell.update(batch=0)),
    "llm_no_cells": _llm(lambda cell, result: result["generate"].update(cells=[])),
}
