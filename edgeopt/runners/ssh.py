"""The SSH runner: the same agent, request and result as the local runner, carried over SSH (paramiko).

One run: connect (host key checked) -> push the agent and the model into the device's content-addressed
cache (skipped when already there) -> write the request into a fresh job directory -> run the agent with an
absolute interpreter and an empty environment, streaming its progress lines -> fetch ``result.json`` ->
remove the job directory. Every step has a deadline (:class:`SshTimeouts`); the agent holds the device lock
and ends itself when the SSH session goes away (``--exit-on-stdin-eof``), when the host's heartbeat on its stdin
stops for ``dead_after_s + 3 * keepalive_s`` (``--host-silence-s``: a dead link, which a default sshd never
notices), or when its watchdog fires.

Device layout (``workdir`` defaults to ``~/.cache/edgeopt``)::

    <workdir>/cache/<sha256>/edgeopt_agent/...   the agent package, keyed by a hash of its files
    <workdir>/cache/<sha256>/model.onnx          a model (plus its data files), keyed by content
    <workdir>/jobs/<uuid>/request.json, result.json   one run; removed afterwards
    <workdir>/locks/device.lock                  held by the running agent (its PID inside)
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shlex
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from edgeopt_agent.protocol import RawRun, Request

from .. import interrupts
from ..devices.schema import SshAddress
from ..errors import EdgeoptError, RunnerError
from ..interrupts import stop_on_interrupt
from .agent_exit import AgentTrace
from .base import (
    AgentCommand,
    ProgressSink,
    RunnerInfo,
    RunnerKind,
    parse_probe,
    parse_progress_line,
    parse_result_bytes,
    probe_args,
)
from .event_gate import EventGate
from .limits import ReadLimits
from .ssh_cache import (
    DEFAULT_LIMIT_BYTES,
    UNPACK_SCRIPT,
    Bundle,
    RemoteCache,
    TransferStats,
    agent_bundle,
    file_bundle,
    makedirs,
    model_bundle,
    rmtree,
    sweep_stale,
)
from .ssh_fetch import copy_capped, read_capped
from .ssh_session import ExecResult, SshSession, SshTimeouts

if TYPE_CHECKING:
    from .served import Info, ServedRunner

# The only environment the agent gets on the device (env -i): no rc files, no user variables.
REMOTE_PATH = "/usr/bin:/bin"
# Exit status of a shell that could not find the interpreter.
_NOT_FOUND = 127
# Request fields naming host files the agent reads: pushed into the device cache (the name of a lone file there).
UPLOAD_FIELDS: dict[str, str] = {"inputs_npz": "inputs", "eval_npz": "eval"}
# Request fields naming host paths where the agent writes a file: a job-dir path on the device, fetched back after.
FETCH_FIELDS: tuple[str, ...] = ("eval_output",)


class SshRunner:
    """Runs the device agent on a remote machine over SSH.

    Args:
        address: host, port, user, key, interpreter and work directory of the device.
        known_hosts: trusted host keys (default ``~/.ssh/known_hosts``).
        accept_new_host_key: trust and record the key of a host seen for the first time.
        timeouts: deadlines of each step (defaults: :class:`SshTimeouts`).
        cache_limit_bytes: size limit of the device's cache (least recently used entries are evicted).

    Attributes:
        name: ``ssh:<user>@<host>:<port>`` (the result's ``runner``).
        last_stats: what the latest run uploaded and how long each phase took.
    """

    def __init__(self, address: SshAddress, *, known_hosts: Path | None = None, accept_new_host_key: bool = False,
                 timeouts: SshTimeouts | None = None, cache_limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.address = address
        self.cache_limit_bytes = cache_limit_bytes
        self.known_hosts = known_hosts
        self.accept_new_host_key = accept_new_host_key
        self.timeouts = timeouts or SshTimeouts()
        self.name = f"ssh:{address.label()}"
        self.last_stats: TransferStats | None = None

    def _session(self) -> SshSession:
        return SshSession(self.address, known_hosts=self.known_hosts, accept_new_host_key=self.accept_new_host_key,
                          timeouts=self.timeouts)

    def _agent_command(self, agent_path: str, *args: str) -> str:
        """``env -i PATH=... PYTHONPATH=<agent> <python> -m edgeopt_agent ARGS`` with every value quoted."""
        env = [f"PATH={REMOTE_PATH}", f"PYTHONPATH={agent_path}", "PYTHONDONTWRITEBYTECODE=1"]
        words = ["env", "-i", *env, self.address.python, "-m", "edgeopt_agent", *args]
        # Not exec'd: the shell outlives the agent and reports a killing signal as 128+N (paramiko ignores the
        # exit-signal message sshd sends for a process killed by a signal).
        return " ".join(shlex.quote(w) for w in words) + "; exit $?"

    def _push_agent(self, s: SshSession, workdir: str, stats: TransferStats, emit: ProgressSink) -> str:
        """The agent's cache entry on the device; when missing, sent as one zip and unpacked there by the device's
        Python (a few round trips instead of several per file: 45 s for 37 files at 200 ms round-trip time)."""
        started = time.perf_counter()
        with s.step(f"uploading the agent to {s.where}", self.timeouts.upload_s), stop_on_interrupt(s.abort):
            path = self._cache(s, workdir, stats, emit).ensure_packed(
                agent_bundle(), lambda archive, dest: self._unpack(s, archive, dest))
        stats.timed("upload", started)
        return path

    def _unpack(self, s: SshSession, archive: str, dest: str) -> None:
        """Unpack the agent's archive on the device with its Python (zipfile; nothing else needed there)."""
        words = ["env", "-i", f"PATH={REMOTE_PATH}", self.address.python, "-c", UNPACK_SCRIPT, archive, dest]
        result = s.execute(" ".join(shlex.quote(w) for w in words), what="unpacking the agent",
                           timeout_s=self.timeouts.upload_s)
        if result.status == _NOT_FOUND:
            raise RunnerError(f"cannot start the agent on {s.where}: interpreter {self.address.python} not found "
                              f"there ({result.stderr_tail or 'exit 127'}); install python3 or pass --python "
                              "/abs/path/python3")
        if result.status != 0:
            raise RunnerError(f"unpacking the agent on {s.where} with {self.address.python} failed (exit "
                              f"{result.status}: {result.stderr_tail or 'no output'}): check the interpreter and "
                              "the work dir's disk space")

    def _cache(self, s: SshSession, workdir: str, stats: TransferStats, emit: ProgressSink) -> RemoteCache:
        return RemoteCache(s.sftp, f"{workdir}/cache", stats, emit, limit_bytes=self.cache_limit_bytes)

    def describe(self) -> RunnerInfo:
        """``ssh:user@host:port``, remote, with the device's interpreter; contacts nothing."""
        return RunnerInfo(name=self.name, kind=RunnerKind.REMOTE, address=self.address.label(),
                          python=self.address.python)

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Run ``request`` on the device against ``model_path`` (a host path; uploaded when not cached).

        Raises:
            InputError: the key file does not exist.
            HostKeyError: unknown (not accepted) or changed host key.
            RunnerError: connection, upload, run or fetch failed or timed out; the agent left no result.
        """
        return self._call(AgentCommand.RUN, request, model_path, progress)

    def evaluate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """The agent's eval mode: ``request.eval_npz`` is pushed (cached) and the outputs file the agent writes in
        the job directory is fetched to the host path ``request.eval_output``. Raises as :meth:`run`."""
        return self._call(AgentCommand.EVALUATE, request, model_path, progress)

    def profile(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Per-layer profile on the device (the profile travels in the result). Raises as :meth:`run`."""
        return self._call(AgentCommand.PROFILE, request, model_path, progress)

    def generate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Generative timings of the LLM folder ``model_path`` (see :meth:`edgeopt.runners.Runner.generate`)."""
        return self._call(AgentCommand.GENERATE, request, model_path, progress)

    def close(self) -> None:
        """Nothing is held between calls: each command opens (and closes) its own SSH session (a served session
        holds its own connection until it is closed: :meth:`served`)."""

    def serving(self, on_info: Info | None = None) -> ServedRunner:
        """This runner with run/evaluate/profile answered by one ``edgeopt_agent serve`` agent on the device, over
        one SSH connection and exec channel (started on the first request, again after a lost link or a deadline),
        until the returned runner is closed (:mod:`.ssh_served`; what a shared process changes: :mod:`.served`)."""
        from .ssh_served import serving

        return serving(self, on_info)

    def served(self, on_info: Info | None = None) -> contextlib.closing[ServedRunner]:
        """:meth:`serving` for the block's duration (closed after it); ``on_info`` gets the ``info`` event of a
        session that goes on one-shot (the agent there cannot serve)."""
        return contextlib.closing(self.serving(on_info))

    def _call(self, command: AgentCommand, request: Request, model_path: Path,
              progress: ProgressSink | None) -> RawRun:
        """One agent command on the device: push the agent, the model and the request's input files (cached),
        run it in a fresh job directory, fetch the result and the request's output files, remove the job."""
        stats = TransferStats()
        self.last_stats = stats
        trace = AgentTrace()
        emit: ProgressSink = progress or (lambda event: None)
        bundles = self.bundles(request, Path(model_path))
        started = time.perf_counter()
        with self._session() as s:
            stats.timed("connect", started)
            with s.step(f"preparing {s.where}", self.timeouts.fetch_s):
                workdir = s.remote_path(self.address.workdir)
            agent_path = self._push_agent(s, workdir, stats, emit)
            limits = ReadLimits.for_request(request)
            with self.staged(s, workdir, request, bundles, stats, emit) as (remote, job):
                text, result = self._run_job(s, workdir, agent_path, job, remote, stats, emit, command, trace, limits)
        if result.status == _NOT_FOUND and not text:
            raise RunnerError(
                f"cannot start the agent on {s.where}: interpreter {self.address.python} not found there "
                f"({result.stderr_tail or 'exit 127'}); install python3 or pass --python /abs/path/python3"
            )
        return parse_result_bytes(text, result.stderr_tail, self.name, result.status, trace)

    @staticmethod
    def bundles(request: Request, model_path: Path) -> tuple[Bundle, dict[str, Bundle]]:
        """The model's bundle and the request's input files' (by request field), hashed on the host before anything
        connects: a missing file is an input error, not a device's."""
        uploads = {f: file_bundle(Path(getattr(request, f)), lone_name=lone) for f, lone in UPLOAD_FIELDS.items()
                   if getattr(request, f)}
        return model_bundle(model_path), uploads

    @contextlib.contextmanager
    def staged(self, s: SshSession, workdir: str, request: Request, bundles: tuple[Bundle, dict[str, Bundle]],
               stats: TransferStats, emit: ProgressSink, *, job_dir: bool = True) -> Iterator[tuple[Request, str]]:
        """``request`` as the agent on the device sees it, and its job directory: the model and the input files
        pushed into the cache, output files named in a fresh job directory (made when ``job_dir`` or an output
        needs one, else ""); after the block the outputs are fetched to their host paths, and the job directory is
        removed whatever happened. One-shot runs and the served agent (:mod:`.ssh_served`) stage alike."""
        placed = self._push_files(s, workdir, *bundles, stats, emit)
        outputs = [f for f in FETCH_FIELDS if getattr(request, f)]
        job = f"{workdir}/jobs/{uuid.uuid4().hex}" if job_dir or outputs else ""
        fetches = {f: f"{job}/{PurePosixPath(getattr(request, f)).name}" for f in outputs}
        stats.job_dir = job
        try:
            if job:
                self._make_job_dir(s, workdir, job, stats)
            yield dataclasses.replace(request, **placed, **fetches), job
            self._fetch_outputs(s, {getattr(request, f): path for f, path in fetches.items()},
                                ReadLimits.for_request(request))
        finally:
            if job:
                self._cleanup(s, job, stats)

    def _make_job_dir(self, s: SshSession, workdir: str, job: str, stats: TransferStats) -> None:
        started = time.perf_counter()
        with s.step(f"creating the job directory on {s.where}", self.timeouts.fetch_s):
            try:
                s.sftp.mkdir(job)
            except FileNotFoundError:
                makedirs(s.sftp, f"{workdir}/jobs")
                s.sftp.mkdir(job)
        stats.timed("job_setup", started)

    def _push_files(self, s: SshSession, workdir: str, model: Bundle, uploads: dict[str, Bundle],
                    stats: TransferStats, emit: ProgressSink) -> dict[str, str]:
        """Upload the model and the request's input files into the cache; their device paths by request field."""
        started = time.perf_counter()
        # Ctrl-C closes the connection at once: paramiko would otherwise first wait for every pipelined write's
        # acknowledgement (seconds on a slow link); the temp upload is never trusted and is swept later.
        with s.step(f"uploading the model to {s.where}", self.timeouts.upload_s), stop_on_interrupt(s.abort):
            cache = self._cache(s, workdir, stats, emit)
            placed = {"model_path": f"{cache.ensure(model)}/{model.main}"}
            placed.update({f: f"{cache.ensure(b)}/{b.main}" for f, b in uploads.items()})
        stats.timed("upload", started)
        return placed

    def _fetch_outputs(self, s: SshSession, outputs: dict[str, str], limits: ReadLimits) -> None:
        """Copy each device file to its host path, at most ``limits.file_bytes`` of it (a larger or growing file
        is a flood); a missing one is skipped (the agent failed: its result says why)."""
        for host_path, device_path in outputs.items():
            with s.step(f"fetching {PurePosixPath(device_path).name} from {s.where}", self.timeouts.upload_s), \
                    contextlib.suppress(FileNotFoundError):
                copy_capped(s, device_path, Path(host_path), limits.file_bytes, PurePosixPath(device_path).name)

    def _run_job(self, s: SshSession, workdir: str, agent_path: str, job: str, request: Request,
                 stats: TransferStats, emit: ProgressSink, command: AgentCommand,
                 trace: AgentTrace, limits: ReadLimits) -> tuple[bytearray, ExecResult]:
        t = self.timeouts
        started = time.perf_counter()
        with s.step(f"writing the request on {s.where}", t.fetch_s), s.sftp.open(f"{job}/request.json", "w") as fh:
            fh.write(json.dumps(request.to_dict()))
        stats.timed("job_setup", started)
        line = self._agent_command(
            agent_path, command.value, "--request", f"{job}/request.json", "--result", f"{job}/result.json",
            "--lock-dir", f"{workdir}/locks", "--lock-wait-s", f"{t.lock_wait_s:g}", "--exit-on-stdin-eof",
            # Later than the host's own verdict on the link, so the host says "the link died" first.
            "--host-silence-s", f"{t.dead_after_s + 3 * t.keepalive_s:g}",
        )

        gate = EventGate(emit, self.name)

        def on_line(line: str) -> bool:
            event = parse_progress_line(line)
            if event is None:
                return False
            trace.observe(event)
            gate(event)
            return True

        started = time.perf_counter()
        try:
            result = s.execute(line, what="the agent run", on_stderr_line=on_line, heartbeat=True,
                               timeout_s=request.max_duration_s + t.lock_wait_s + t.run_grace_s, limits=limits)
        finally:
            gate.close()
        stats.timed("run", started)
        started = time.perf_counter()
        with s.step(f"fetching the result from {s.where}", t.fetch_s):
            try:
                text = read_capped(s, f"{job}/result.json", limits.result_bytes, "result.json")
            except FileNotFoundError:
                text = bytearray()
        stats.timed("fetch", started)
        return text, result

    def _cleanup(self, s: SshSession, job: str, stats: TransferStats) -> None:
        """Remove the job directory, and job directories a dead link left behind a day ago or more, on every exit
        path: a step past its deadline (a fetch that timed out) closed the connection, so a new one is opened for
        this when the link was still answering keepalives (at most ``cleanup_s`` to connect).

        Best effort: on a dead link, or after Ctrl-C, nothing can be removed now; a later run sweeps it.
        """
        started = time.perf_counter()
        try:
            if s.alive:
                self._remove_job(s, job)
            elif s.link_answering and interrupts.requested() is None:
                fresh = self.timeouts.model_copy(
                    update={"connect_s": min(self.timeouts.connect_s, self.timeouts.cleanup_s)})
                with SshSession(self.address, known_hosts=self.known_hosts, timeouts=fresh) as again:
                    self._remove_job(again, job)
        except EdgeoptError:
            pass
        stats.timed("cleanup", started)

    def _remove_job(self, s: SshSession, job: str) -> None:
        with s.step(f"removing the job directory on {s.where}", self.timeouts.cleanup_s):
            rmtree(s.sftp, job)
            sweep_stale(s.sftp, str(PurePosixPath(job).parent))

    def probe(self, runtimes: Sequence[str] | None = None) -> dict[str, Any]:
        """``python -m edgeopt_agent probe`` on the device (agent pushed first): machine facts as a dict
        (``runtimes``: only those).

        Raises:
            RunnerError: connection failed, the interpreter is missing, or the probe printed no JSON.
        """
        stats = TransferStats()
        with self._session() as s:
            with s.step(f"preparing {s.where}", self.timeouts.fetch_s):
                workdir = s.remote_path(self.address.workdir)
            agent_path = self._push_agent(s, workdir, stats, lambda event: None)
            result = s.execute(self._agent_command(agent_path, "probe", "--workdir", workdir, *probe_args(runtimes)),
                               what="the probe", timeout_s=self.timeouts.probe_s)
        if result.status == _NOT_FOUND:
            raise RunnerError(f"interpreter {self.address.python} not found on {s.where}: install python3 there "
                              "or pass --python /abs/path/python3")
        facts = parse_probe(result.stdout, result.status, result.stderr_tail, s.where, self.address.python)
        facts["workdir"] = workdir
        return facts
