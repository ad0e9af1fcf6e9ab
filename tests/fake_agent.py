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
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from tests.fake_llm_results import LLM_LIES, _request, llm_result
from tests.fake_results import BIG_RESULT_BYTES, BIG_SAMPLES, _llm_trace

REPO = Path(__file__).resolve().parents[1]
# Every string a device reports, poisoned: a window-title OSC, clear-screen and colour CSIs, a lone C1 CSI, a
# clickable rich link to an outside site, HTML that runs script where Markdown is rendered, a bidi override.
INJECT = ("v9\x1b]0;PWNED-title\x07\x1b[2J\x1b[31m[link=https://evil.example]click[/link]"
          "<script>alert(1)</script><img src=x onerror=alert(2)>\x9b2J\u202e")
FLOOD_BYTES = 24 << 20  # over the smallest stderr / stdout budget (16 MiB + 64 KiB per second of max_duration_s)
RESULT_FLOOD_BYTES = 136 << 20  # over the result budget (a fixed 48 MiB, edgeopt.runners.limits)
EVENT_FLOOD = 20_000  # progress events in one run ("event_flood"): 400 times the host's burst of 50
PAD_ITEMS = 40_000  # 1,000-character strings padding an honest result to ~40 MB ("padded")


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


def _never_ending(result: Path, mode: str) -> None:
    """A result.json no read ever finishes: a FIFO nobody writes to, or a link to /dev/zero."""
    result.unlink(missing_ok=True)
    if mode == "fifo":
        os.mkfifo(result)
    else:
        result.symlink_to("/dev/zero")


def _event_flood(stream: Any) -> None:
    """:data:`EVENT_FLOOD` progress events, each on its own line (~1 MB: under the stderr budget)."""
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
                    zf.writestr(name, data, compresslevel=1)  # the bomb's 256 MB: 0.4 CPU-s, not 1.8 at level 6
            Path(out).write_bytes(buf.getvalue())
        return json.dumps(result)
    return lie


def _huge_header() -> bytes:
    """An .npy that declares 4 GB of float32 (4 samples) and holds 16 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (4, 250_000_000)})
    return buf.getvalue() + b"\0" * 16


def _zeros_bomb() -> bytes:
    """A real .npy of 256 MB of zeros, 4 samples (deflates to ~1.1 MB in the archive)."""
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
