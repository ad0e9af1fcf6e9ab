"""The hostile-input campaign's harness: run a real ``edgeopt`` command on one fuzzed input and judge the outcome.

A run is *clean* when: it returned a documented exit code (docs/exit-codes.md) instead of raising; a failed run
printed exactly one ``edgeopt: error:`` line; no ``Traceback`` reached stdout or stderr (the agent's relayed
stderr included); and nothing changed in the workspace outside its output directory (the inputs, the current
directory, ``$HOME`` and the temp dir are compared before and after).

Counts per category go to ``$EDGEOPT_FUZZ_COUNTS`` (default ``out/fuzz-counts.json``); docs/reliability.md quotes
them. Each category is replaced by the latest run of the test that owns it.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from edgeopt.cli.main import main

DOCUMENTED_EXIT_CODES = {0, 1, 2, 3, 4}  # 4: an SSH host key not trusted (docs/exit-codes.md)
COUNTS_FILE = Path(os.environ.get("EDGEOPT_FUZZ_COUNTS", "out/fuzz-counts.json"))
# Multiplies every property's example budget (EDGEOPT_FUZZ_SCALE=4 for a longer campaign).
SCALE = float(os.environ.get("EDGEOPT_FUZZ_SCALE", "1"))
# Longest a single command may take: a valid qualify or optimize takes seconds, anything past this is a hang.
LIMIT_S = int(os.environ.get("EDGEOPT_FUZZ_LIMIT_S", "60"))
REPO = Path(__file__).resolve().parent.parent
# Written by the runtimes themselves, not by edgeopt: onnxruntime's telemetry ids on import
# ($HOME/.cache/Microsoft/DeveloperTools/.onnxruntime/, $TMPDIR/.ses) and OpenVINO's ($HOME/intel/). The only
# changes outside the output dir the campaign lets pass.
THIRD_PARTY = ("home/.cache/Microsoft", "home/intel", "tmp/.ses")


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


@dataclass
class Outcome:
    """What one command did."""

    args: list[str]
    code: int | None
    stdout: str
    stderr: str
    crash: str | None = None
    changed_outside: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.startswith("edgeopt: error:")]

    def problems(self, *, names: Sequence[str] = ()) -> list[str]:
        """Why this outcome is not clean (empty: clean). ``names``: one of them must appear in an input error."""
        found = []
        if self.crash:
            found.append(f"crashed: {self.crash}")
        elif self.code not in DOCUMENTED_EXIT_CODES:
            found.append(f"undocumented exit code {self.code}")
        for stream, text in (("stderr", self.stderr), ("stdout", self.stdout)):
            if "Traceback (most recent call last)" in text:
                found.append(f"traceback on {stream}: ...{text[text.index('Traceback'):][:400]}")
        if any("without a result" in line or 'File "' in line for line in self.error_lines):
            found.append(f"the agent crashed: {self.error_lines[0][:400]}")
        if self.code in (2, 3) and len(self.error_lines) != 1:
            found.append(f"{len(self.error_lines)} error lines (want 1): {self.stderr[-400:]!r}")
        if self.code == 2 and names and self.error_lines and not any(n in self.error_lines[0] for n in names):
            found.append(f"input error does not name {' or '.join(names)}: {self.error_lines[0]}")
        if self.changed_outside:
            found.append(f"changed outside the output dir: {self.changed_outside[:5]}")
        return found


def _snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of every entry under ``root`` except ``skip`` (symlinks not followed)."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == skip:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = here / name
            if p == skip:
                continue
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size if not p.is_dir() else 0, st.st_mtime_ns if p.is_file() else 0)
    return out


class Workspace:
    """``root/{inputs,out,cwd,home,tmp}``: only ``out`` may change while a command runs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.inputs, self.out, self.cwd, self.home, self.tmp = (root / n for n in ("inputs", "out", "cwd", "home",
                                                                                    "tmp"))
        for d in (self.inputs, self.out, self.cwd, self.home, self.tmp):
            d.mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def guarded(self) -> Iterator[list[str]]:
        """Yields the list that receives every path changed outside ``out`` (filled on exit)."""
        before = _snapshot(self.root, self.out)
        changed: list[str] = []
        try:
            yield changed
        finally:
            after = _snapshot(self.root, self.out)
            changed.extend(sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)
                                  and k != "home/.cache" and not k.startswith(THIRD_PARTY)))

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "XDG_CACHE_HOME": str(self.home / ".cache"),
                "XDG_DATA_HOME": str(self.home / ".local/share"), "TMPDIR": str(self.tmp),
                "EDGEOPT_HISTORY_DB": str(self.out / "history.sqlite3"),
                "EDGEOPT_INVENTORY": str(self.inputs / "none.yaml")}


@contextlib.contextmanager
def _patched_env(env: dict[str, str], cwd: Path, tmp: Path) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in env}
    saved_cwd, saved_tmp = os.getcwd(), tempfile.tempdir
    os.environ.update(env)
    tempfile.tempdir = str(tmp)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        tempfile.tempdir = saved_tmp
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class Hung(BaseException):
    """A command ran past the campaign's per-command limit (a hang or an input that takes minutes)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise Hung()


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(ws: Workspace, args: Sequence[str], limit_s: int = LIMIT_S) -> Outcome:
    """``edgeopt ARGS`` through :func:`edgeopt.cli.main.main`, as the console script runs it."""
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    crash = None
    start = time.monotonic()
    with ws.guarded() as changed, _patched_env(ws.env(), ws.cwd, ws.tmp), _time_limit(limit_s), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # click's --help/--version paths
            code = exc.code if isinstance(exc.code, int) else 2
        except Hung:
            crash = f"still running after {limit_s} s (hang?)"
        except BaseException as exc:  # noqa: BLE001 - the very thing under test
            import traceback

            crash = f"{type(exc).__name__}: {exc}"[:300]
            err.write(traceback.format_exc())
    return Outcome(list(args), code, out.getvalue(), err.getvalue(), crash, changed, time.monotonic() - start)


def run_subprocess(ws: Workspace, args: Sequence[str], timeout_s: float = 120) -> Outcome:
    """``python -m edgeopt ARGS`` as its own process (what a user's shell runs)."""
    env = {**os.environ, **ws.env(), "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "device_agent")])}
    start = time.monotonic()
    with ws.guarded() as changed:
        proc = subprocess.run([sys.executable, "-m", "edgeopt", *args], capture_output=True, text=True, env=env,
                              cwd=ws.cwd, timeout=timeout_s, errors="replace")
    code = proc.returncode
    crash = f"killed by signal {-code}" if code < 0 else None
    return Outcome(list(args), code, proc.stdout, proc.stderr, crash, changed, time.monotonic() - start)


@dataclass
class Tally:
    """Inputs tried and their outcomes in one category."""

    category: str
    tried: int = 0
    clean: int = 0
    exit_codes: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, kind: str, outcome: Outcome, problems: list[str]) -> None:
        self.tried += 1
        self.kinds[kind] += 1
        self.seconds += outcome.seconds
        self.exit_codes[str(outcome.code if outcome.crash is None else "crash")] += 1
        if problems:
            if len(self.failures) < 10:
                self.failures.append(f"{kind}: {' '.join(outcome.args)}: {problems[0]}"[:600])
        else:
            self.clean += 1

    def as_json(self) -> dict[str, object]:
        return {"tried": self.tried, "clean": self.clean, "exit_codes": dict(sorted(self.exit_codes.items())),
                "kinds": dict(sorted(self.kinds.items())), "failures": self.failures,
                "command_seconds": round(self.seconds, 1)}


def save(tally: Tally) -> None:
    """Write ``tally`` into the counts file (replacing the category's previous run) and print one summary line."""
    COUNTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(f"{COUNTS_FILE}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(COUNTS_FILE.read_text()) if COUNTS_FILE.exists() else {}
        data[tally.category] = tally.as_json()
        total = [v for k, v in data.items() if not k.startswith("_")]
        data["_total"] = {"tried": sum(v["tried"] for v in total), "clean": sum(v["clean"] for v in total)}
        tmp = COUNTS_FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(COUNTS_FILE)
    finally:
        os.close(lock)
    print(f"\nfuzz {tally.category}: {tally.clean}/{tally.tried} clean, exit codes {dict(tally.exit_codes)}")


def judge(tally: Tally, kind: str, outcome: Outcome, *, names: Sequence[str] = (),
          allowed: set[int] | None = None) -> None:
    """Count ``outcome`` and fail (hypothesis then shrinks) when it is not clean or its code is not ``allowed``."""
    problems = outcome.problems(names=names)
    if not problems and allowed is not None and outcome.code not in allowed:
        problems.append(f"exit code {outcome.code}, expected one of {sorted(allowed)}: {outcome.stderr[-300:]!r}")
    tally.add(kind, outcome, problems)
    assert not problems, f"{kind}: edgeopt {' '.join(outcome.args)}: " + "; ".join(problems)
