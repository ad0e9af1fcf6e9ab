"""Command line of the agent: ``python -m edgeopt_agent run --request FILE|- [--result FILE]``.

The result JSON goes to ``--result`` or stdout, and nothing else does: while the run is in progress the
process's stdout file descriptor points at stderr, so a runtime library that prints cannot corrupt it.
Progress goes to stderr as JSON lines (``{"event": ...}``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import Any, Dict

from . import __version__, environment, runtimes
from .harness import run
from .protocol import ERROR_INPUT, ERROR_TIMEOUT, STATUS_ERROR, ProtocolError, RawRun, Request

# Grace beyond max_duration_s before the watchdog ends the whole process (load and warm-up included).
WATCHDOG_GRACE_S = 60.0


def _emit(event: Dict[str, Any]) -> None:
    sys.stderr.write(json.dumps(event) + "\n")
    sys.stderr.flush()


def _write_result(raw: RawRun, result_path: str, stdout_fd: int) -> None:
    text = json.dumps(raw.to_dict())
    if result_path and result_path != "-":
        tmp = result_path + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, result_path)
    else:
        data = (text + "\n").encode("utf-8")
        while data:
            written = os.write(stdout_fd, data)
            data = data[written:]


def _read_request(source: str) -> Dict[str, Any]:
    if source == "-":
        text = sys.stdin.read()
    else:
        with open(source) as fh:
            text = fh.read()
    return json.loads(text)


def _start_watchdog(seconds: float, result_path: str, stdout_fd: int, request: Request) -> None:
    """End the process if the whole run outlives ``seconds``: an agent is never left running on a device."""

    def fire() -> None:
        raw = RawRun(status=STATUS_ERROR, error_kind=ERROR_TIMEOUT, request=request.to_dict(),
                     error="agent watchdog: run exceeded %.0f s; raise max_duration_s" % seconds,
                     agent_version=__version__)
        try:
            _write_result(raw, result_path, stdout_fd)
        finally:
            os._exit(124)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()


def cmd_run(args: argparse.Namespace) -> int:
    stdout_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed by libraries goes to stderr
    try:
        try:
            request = Request.from_dict(_read_request(args.request))
        except (OSError, ValueError, ProtocolError) as exc:
            bad = Request(model_path="")
            raw = RawRun(status=STATUS_ERROR, error_kind=ERROR_INPUT, error="bad request: %s" % exc,
                         request=bad.to_dict(), agent_version=__version__)
            _write_result(raw, args.result, stdout_fd)
            return 2
        _start_watchdog(request.max_duration_s + WATCHDOG_GRACE_S, args.result, stdout_fd, request)
        raw = run(request, _emit if request.progress_interval_s > 0 else (lambda e: None))
        _write_result(raw, args.result, stdout_fd)
        return 0 if raw.ok else 1
    finally:
        sys.stdout.flush()
        os.dup2(stdout_fd, 1)


def cmd_probe(args: argparse.Namespace) -> int:
    """Machine facts and which runtimes load here, as JSON."""
    available: Dict[str, Any] = {}
    for name in runtimes.names():
        try:
            available[name] = {"available": True, "version": runtimes.create(name).version()}
        except runtimes.RuntimeMissing as exc:
            available[name] = {"available": False, "hint": str(exc)}
    info = {"agent_version": __version__, "environment": environment.collect(), "runtimes": available}
    sys.stdout.write(json.dumps(info) + "\n")
    return 0


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(prog="edgeopt_agent", description="edgeopt device agent %s" % __version__)
    sub = parser.add_subparsers(dest="command")
    p_run = sub.add_parser("run", help="run one measurement request")
    p_run.add_argument("--request", default="-", help="request JSON file, or - for stdin")
    p_run.add_argument("--result", default="-", help="result JSON file, or - for stdout")
    p_run.set_defaults(func=cmd_run)
    p_probe = sub.add_parser("probe", help="print machine facts and available runtimes")
    p_probe.set_defaults(func=cmd_probe)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
