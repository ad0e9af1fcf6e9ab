"""Command line of the agent: ``python -m edgeopt_agent run|evaluate|profile|generate --request FILE|-``
(``--result FILE``).

The result JSON goes to ``--result`` or stdout, and nothing else does: while the run is in progress the
process's stdout file descriptor points at stderr, so a runtime library that prints cannot corrupt it.
Progress goes to stderr as JSON lines (``{"event": ...}``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import select
import signal
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

from . import __version__, deps, environment, loaded, memory, runtimes
from . import probe as probe_facts
from .lock import DeviceLock, LockBusy
from .protocol import ERROR_INPUT, ERROR_TIMEOUT, STATUS_ERROR, ProtocolError, RawRun, Request

# Grace beyond max_duration_s before the watchdog ends the whole process (load and warm-up included).
WATCHDOG_GRACE_S = 60.0
# Exit status when the host went away (stdin reached EOF with --exit-on-stdin-eof).
EXIT_HOST_GONE = 125
# Commands a served agent (``serve``) answers; ``generate`` measures a process's memory per cell: one-shot only.
SERVED_COMMANDS = ("run", "evaluate", "profile")

# Run before any forced exit (watchdog, host gone), so a lock is never left behind by a live-but-ending agent.
_CLEANUPS: List[Callable[[], None]] = []
_CLEANUPS_LOCK = threading.Lock()


def _run_cleanups() -> None:
    """Run each cleanup once; a second caller (another thread about to exit) waits for the first to finish."""
    with _CLEANUPS_LOCK:
        while _CLEANUPS:
            with contextlib.suppress(Exception):
                _CLEANUPS.pop()()


def _exit_on_stdin_eof(silence_s: float = 0.0, on_data: Optional[Callable[[bytes], None]] = None) -> None:
    """End the process when stdin closes: over SSH that means the session (or the link) is gone.

    With ``silence_s`` > 0 the host sends a heartbeat byte on stdin every few seconds, and stdin silent for
    ``silence_s`` also ends the process: a dead link closes nothing on a device whose sshd does not probe its
    clients (OpenSSH's default), so the session would otherwise live on until TCP gives up, holding the lock.
    ``on_data`` receives what stdin brings (a served agent's requests); without it, it is dropped.
    """

    def watch() -> None:
        try:
            while True:
                if silence_s > 0 and not select.select([0], [], [], silence_s)[0]:
                    break  # no heartbeat: the host, or the link to it, is gone
                data = os.read(0, 65536)
                if not data:
                    break
                if on_data is not None:
                    on_data(data)
        except (OSError, ValueError):
            pass
        _run_cleanups()
        os._exit(EXIT_HOST_GONE)

    threading.Thread(target=watch, name="stdin-eof", daemon=True).start()


def _served_lines(args: argparse.Namespace) -> Iterator[str]:
    """The served agent's request lines: stdin read as it comes, or (``--exit-on-stdin-eof``, over SSH) by the
    thread that also ends the process when stdin closes or falls silent, even in the middle of a request."""
    if not args.exit_on_stdin_eof:
        for line in sys.stdin:
            yield line
        return
    lines = queue.Queue()  # type: queue.Queue[str]
    pending = bytearray()

    def feed(data: bytes) -> None:
        pending.extend(data)
        while True:
            end = pending.find(b"\n")
            if end < 0:
                return
            lines.put(bytes(pending[:end + 1]).decode("utf-8", "replace"))
            del pending[:end + 1]

    _exit_on_stdin_eof(args.host_silence_s, feed)
    while True:
        yield lines.get()


def _exit_on_signals() -> None:
    """SIGTERM/SIGHUP unwind through ``finally`` blocks (releasing the lock) instead of killing outright."""

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def _emit(event: Dict[str, Any]) -> None:
    sys.stderr.write(json.dumps(event) + "\n")
    sys.stderr.flush()


def _emit_phases(event: Dict[str, Any]) -> None:
    """Phase changes only (no periodic progress): what the host needs to say where a killed agent was."""
    if event.get("event") != "progress":
        _emit(event)


def _emit_start(**extra: Any) -> None:
    """The first event of a run: this process and the memory free at start (an OOM kill is judged from it)."""
    available, total = probe_facts.memory_headroom_mb()  # the memory cgroup's limit counts (containers)
    event = {"event": "start", "pid": os.getpid(), "memory_available_mb": available, "memory_total_mb": total}
    event.update(extra)
    _emit(event)


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


def _start_watchdog(seconds: float, result_path: str, stdout_fd: int, request: Request) -> threading.Timer:
    """End the process if the whole run outlives ``seconds``: an agent is never left running on a device."""

    def fire() -> None:
        raw = RawRun(status=STATUS_ERROR, error_kind=ERROR_TIMEOUT, request=request.to_dict(),
                     error="agent watchdog: run exceeded %.0f s; raise max_duration_s" % seconds,
                     agent_version=__version__)
        try:
            _write_result(raw, result_path, stdout_fd)
        finally:
            _run_cleanups()
            os._exit(124)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


def _dispatch(command: str) -> Callable[[Request, Callable[[Dict[str, Any]], None]], RawRun]:
    """The function that carries out ``command`` (imported on first use: numpy is kept out of ``probe``)."""
    if command == "evaluate":  # accuracy on the device: outputs of the eval samples (evaluate.py)
        from .evaluate import evaluate
        return evaluate
    if command == "generate":  # generative models: TTFT, TPOT, memory per workload cell (generate.py)
        from .generate import generate
        return generate
    if command == "profile":  # per-layer times with the runtime's own profiler (profile.py)
        from .profile import profile
        return profile
    from .harness import run
    return run


def _one_request(command: str, text: Any, args: argparse.Namespace, result_path: str, stdout_fd: int) -> int:
    """Parse, check, lock, run and answer one request (``text``: its JSON, or the exception reading it raised);
    the exit status a one-shot agent returns for it. The lock is released before this returns."""
    try:
        if isinstance(text, Exception):
            raise text
        request = Request.from_dict(json.loads(text))
    except (OSError, ValueError, ProtocolError) as exc:
        bad = Request(model_path="")
        raw = RawRun(status=STATUS_ERROR, error_kind=ERROR_INPUT, error="bad request: %s" % exc,
                     request=bad.to_dict(), agent_version=__version__)
        _write_result(raw, result_path, stdout_fd)
        return 2
    missing = deps.check(request)  # numpy and the runtime, before the lock: one line instead of a traceback
    if missing is not None:
        _write_result(missing, result_path, stdout_fd)
        return deps.EXIT_MISSING
    if args.lock_dir:
        lock = DeviceLock(args.lock_dir)
        _CLEANUPS.append(lock.release)
        try:
            lock.acquire(args.lock_wait_s, on_event=_emit)
        except LockBusy as exc:
            raw = RawRun(status=STATUS_ERROR, error_kind=ERROR_TIMEOUT, error=str(exc),
                         request=request.to_dict(), agent_version=__version__)
            _write_result(raw, result_path, stdout_fd)
            return 1
    watchdog = _start_watchdog(request.max_duration_s + WATCHDOG_GRACE_S, result_path, stdout_fd, request)
    try:
        raw = _dispatch(command)(request, _emit if request.progress_interval_s > 0 else _emit_phases)
    finally:
        watchdog.cancel()
        _run_cleanups()  # the lock, at once: a served agent must not hold it between requests
    _write_result(raw, result_path, stdout_fd)
    return 0 if raw.ok else 1


def _read_text(source: str) -> Any:
    """The request text from ``source`` (a file, or - for stdin), or the OSError reading it raised."""
    try:
        if source == "-":
            return sys.stdin.read()
        with open(source) as fh:
            return fh.read()
    except OSError as exc:
        return exc


def cmd_run(args: argparse.Namespace) -> int:
    if args.exit_on_stdin_eof and args.request != "-":  # a request on stdin ends in EOF by design
        _exit_on_stdin_eof(args.host_silence_s)
    if args.lock_dir:
        _exit_on_signals()
    stdout_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed by libraries goes to stderr
    _emit_start()
    try:
        return _one_request(args.command, _read_text(args.request), args, args.result, stdout_fd)
    finally:
        _run_cleanups()
        sys.stdout.flush()
        os.dup2(stdout_fd, 1)


def cmd_serve(args: argparse.Namespace) -> int:
    """Answer requests one by one from stdin until it closes: one JSON line ``{"command": "run"|"evaluate"|
    "profile", "request": {...}, "keep_loaded": false}`` in, one result JSON line out (served.py on the host);
    with ``keep_loaded`` a ``run`` takes and keeps its loaded model between requests (loaded.py). Each request is
    handled exactly as a one-shot agent handles it (lock, watchdog, result); the process, its imports and the runtimes'
    thread pools stay, so a sweep's hundred short calls do not each pay a process start. The peak-memory counter
    is reset before each request; a request's ``start`` event says whether that worked (``peak_reset``). Over SSH
    (``--exit-on-stdin-eof``, ``--host-silence-s``) the process ends when its channel closes or the host's heartbeat
    stops, as a one-shot agent does, and the heartbeat's empty lines are skipped."""
    if args.lock_dir:
        _exit_on_signals()
    stdout_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        for line in _served_lines(args):
            if not line.strip():  # the host's heartbeat (over SSH), or an empty line
                continue
            loaded.set_keep(False)
            try:
                msg = json.loads(line)
                command, text = msg["command"], json.dumps(msg["request"])
                loaded.set_keep(msg.get("keep_loaded") is True)
                if command not in SERVED_COMMANDS:
                    raise ValueError("command %r is not served (one of %s)" % (command, ", ".join(SERVED_COMMANDS)))
            except (ValueError, KeyError, TypeError) as exc:
                command, text = "run", ValueError("bad served message: %s" % exc)
            peak_reset = memory.reset_peak()
            _emit_start(peak_reset=peak_reset)
            status = _one_request(command, text, args, "-", stdout_fd)
            _emit({"event": "served", "status": status})
        return 0
    finally:
        _run_cleanups()
        sys.stdout.flush()
        os.dup2(stdout_fd, 1)


def cmd_probe(args: argparse.Namespace) -> int:
    """Machine facts and which runtimes load here (``--runtimes``: only those; each costs an import), as JSON."""
    available: Dict[str, Any] = {}
    only = set(filter(None, args.runtimes.split(",")))
    for name in runtimes.names():
        if only and name not in only:
            continue
        try:
            available[name] = {"available": True, "version": runtimes.create(name).version()}
        except (runtimes.RuntimeMissing, ImportError) as exc:
            available[name] = {"available": False, "hint": str(exc)}
    try:
        env = environment.collect()
    except ImportError as exc:  # numpy missing: still report what can be known, and say so
        import platform

        env = {"os": "%s %s" % (platform.system(), platform.release()), "machine": platform.machine(),
               "python": platform.python_version(), "python_executable": sys.executable,
               "error": "environment incomplete: %s" % exc}
    info = {"agent_version": __version__, "environment": env, "runtimes": available,
            "packages": probe_facts.packages(), "memory_available_mb": probe_facts.memory_available_mb(),
            "power_sensors": probe_facts.power_sensors()}
    if args.workdir:
        info["disk"] = probe_facts.disk_free(args.workdir)
    sys.stdout.write(json.dumps(info) + "\n")
    return 0


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(prog="edgeopt_agent", description="edgeopt device agent %s" % __version__)
    sub = parser.add_subparsers(dest="command")
    p_run = sub.add_parser("run", help="run one measurement request")
    p_run.add_argument("--request", default="-", help="request JSON file, or - for stdin")
    p_run.add_argument("--result", default="-", help="result JSON file, or - for stdout")
    p_run.add_argument("--lock-dir", default="", help="take the per-device lock in this directory first")
    p_run.add_argument("--lock-wait-s", type=float, default=0.0,
                       help="seconds to wait for a busy device lock before failing (with --lock-dir)")
    p_run.add_argument("--exit-on-stdin-eof", action="store_true",
                       help="exit (releasing the lock) when stdin closes, i.e. when the SSH session is gone "
                            "(with --request FILE only; serve: also in the middle of a request)")
    p_run.add_argument("--host-silence-s", type=float, default=0.0,
                       help="with --exit-on-stdin-eof: also exit when stdin brings nothing for this many seconds "
                            "(the host sends a heartbeat; 0: off)")
    p_run.set_defaults(func=cmd_run)
    p_eval = sub.add_parser("evaluate", parents=[], help="run the request's eval_npz samples, save their outputs")
    for action in p_run._actions[1:]:  # same options as `run`
        p_eval._add_action(action)
    p_eval.set_defaults(func=cmd_run)
    p_prof = sub.add_parser("profile", help="per-layer times with the runtime's profiler (and the unprofiled p50)")
    for action in p_run._actions[1:]:
        p_prof._add_action(action)
    p_prof.set_defaults(func=cmd_run)
    p_gen = sub.add_parser("generate", help="time a generative model (LLM folder) over the request's workload cells")
    for action in p_run._actions[1:]:
        p_gen._add_action(action)
    p_gen.set_defaults(func=cmd_run)
    p_serve = sub.add_parser("serve", help="answer run/evaluate/profile requests, one JSON line each, until stdin "
                                           "closes (one process for many requests)")
    for action in p_run._actions[1:]:
        if action.dest in ("lock_dir", "lock_wait_s", "exit_on_stdin_eof", "host_silence_s"):
            p_serve._add_action(action)
    p_serve.set_defaults(func=cmd_serve)
    p_probe = sub.add_parser("probe", help="print machine facts and available runtimes")
    p_probe.add_argument("--workdir", default="", help="also report free disk space where this directory lives")
    p_probe.add_argument("--runtimes", default="", help="probe only these runtimes (comma-separated; default: all)")
    p_probe.set_defaults(func=cmd_probe)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
