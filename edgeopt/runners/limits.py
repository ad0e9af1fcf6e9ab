"""How much the host reads back from an agent, and a linear bounded stderr reader.

A board is untrusted (docs/reliability.md, "Untrusted device" and "Untrusted device: transport"): it may print
without end on stdout or stderr, write a result.json or an eval output of any size. Each channel gets a byte
budget bounded by design, never by what a request asks for: the result's is fixed (the agent keeps at most
``MAX_SAMPLES`` samples, whatever the duration), stderr's grows only with the watchdog's maximum duration, an eval
output's with the eval inputs the host itself sends. A channel over budget ends the run with one line naming the
flood (a device error, exit 3). stderr is split into lines in one pass over each chunk (never re-scanning what
came before), keeping only the last lines and cutting long ones, so a flood costs time linear in its size and
constant memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from edgeopt_agent.protocol import MAX_SAMPLES, Request

from ..errors import RunnerError
from ..npz_headers import NpzHeaderError, samples_and_bytes
from ..untrusted import clean_text

MIB = 1 << 20
# Fastest inference rate one stream of the agent's harness can time (a Python loop around a no-op: ~70 ns per
# sample, 4.75 M/s on a 2-core Xeon with AVX-512); four times that is impossible on any board.
MAX_SAMPLES_PER_S = 20_000_000
# Everything a result carries besides its samples (environment, outputs, per-layer profile, generate cells), and the
# base of an eval output's budget.
RESULT_BASE_BYTES = 64 * MIB
# A sample in the result's JSON: at most 18 bytes (16 digits, 115 days in ns, far over the one-day MAX_DURATION_S
# a sample cannot outlast; comma, space). The agent keeps at most MAX_SAMPLES numbers (edgeopt_agent.protocol; a
# paced run's frames keep two each, MAX_FRAMES of them), 34.3 MiB.
RESULT_BYTES_PER_SAMPLE = 18
# Everything else an honest result holds (environment, outputs, profile layers and trace, generate cells and token
# latencies): a few MiB in practice.
RESULT_REST_BYTES = 12 * MIB
# The result budget, fixed whatever the request's duration, iterations or streams: the kept samples at their
# largest plus the rest, 46.3 MiB, rounded up. The host holds the text and what it parses to at once, so this
# budget is what keeps a hostile result under ~300 MB of host RSS (docs/reliability.md, "Untrusted device: host
# cost"; it was 128 MiB, and 1.9 GB of RSS for a result of small integers).
RESULT_MAX_BYTES = 48 * MIB
# What a result may hold, counted in its text before it is parsed (each value of a list is a Python object on the
# host, ~40 bytes: 48 MiB of "1000," would be 10 M of them, ~400 MB): the kept numbers plus 500,000 others (an LLM
# run's token latencies: 500,000 tokens take hours on any board), arrays and objects, string quotes. At the ceiling
# (2.5 M 15-digit samples within the budget) the host peaks under 300 MB (benchmarks/hostile_results.py).
RESULT_MAX_VALUES = MAX_SAMPLES + 500_000
RESULT_MAX_CONTAINERS = 100_000
RESULT_MAX_QUOTES = 1_000_000
# stderr: progress lines and library logs. A budget per second the agent may run, a cap per line and the
# number of lines kept for messages.
STDERR_BASE_BYTES = 16 * MIB
STDERR_BYTES_PER_S = 64 * 1024
MAX_LINE_BYTES = 64 * 1024
TAIL_LINES = 20
# An eval output may hold this many times the bytes of the eval inputs, and at least this much per sample.
EVAL_OUTPUT_RATIO = 16
EVAL_MIN_BYTES_PER_SAMPLE = 1 * MIB
# A probe's JSON (machine facts and the runtimes found) is small.
PROBE_STDOUT_BYTES = 4 * MIB
# A device setup step (pip installing wheels) may print more than a probe.
SETUP_OUTPUT_BYTES = 64 * MIB


def max_samples(request: Request) -> int:
    """The most samples ``request`` can produce: every stream stops once both its iterations and its minimum
    duration are reached (``max(iterations, rate x min_duration_s)`` inferences), and the agent keeps at most
    :data:`~edgeopt_agent.protocol.MAX_SAMPLES` in all."""
    per_stream = max(request.iterations, int(MAX_SAMPLES_PER_S * request.min_duration_s)) + 1
    return min(max(1, request.streams) * per_stream, MAX_SAMPLES)


@dataclass(frozen=True)
class ReadLimits:
    """Byte budgets of what comes back from one agent command (see :meth:`for_request`)."""

    result_bytes: int
    stderr_bytes: int
    stdout_bytes: int
    file_bytes: int = RESULT_BASE_BYTES

    @classmethod
    def for_request(cls, request: Request) -> ReadLimits:
        """Budgets for ``request``: the result's is fixed (:data:`RESULT_MAX_BYTES`), stderr's grows with the
        maximum duration (a progress line a second), an eval output's with the eval inputs."""
        stderr = STDERR_BASE_BYTES + int(STDERR_BYTES_PER_S * max(request.max_duration_s, 1.0))
        return cls(result_bytes=RESULT_MAX_BYTES, stderr_bytes=stderr, stdout_bytes=stderr,
                   file_bytes=eval_output_bytes(request))

    @classmethod
    def for_probe(cls) -> ReadLimits:
        """A probe's JSON facts, and any short command run on a device."""
        return cls(result_bytes=PROBE_STDOUT_BYTES, stderr_bytes=STDERR_BASE_BYTES, stdout_bytes=PROBE_STDOUT_BYTES)

    @classmethod
    def for_setup(cls) -> ReadLimits:
        """A setup step (``pip install`` prints progress): generous, still bounded."""
        return cls(result_bytes=SETUP_OUTPUT_BYTES, stderr_bytes=SETUP_OUTPUT_BYTES, stdout_bytes=SETUP_OUTPUT_BYTES)


def eval_output_bytes(request: Request) -> int:
    """The largest eval output ``request`` can produce: its samples times a generous output size per sample
    (:data:`EVAL_OUTPUT_RATIO` x the inputs' bytes, at least :data:`EVAL_MIN_BYTES_PER_SAMPLE`)."""
    if not request.eval_npz:
        return RESULT_BASE_BYTES
    try:
        samples, in_bytes = samples_and_bytes(Path(request.eval_npz))
    except NpzHeaderError:
        return RESULT_BASE_BYTES  # the agent refuses such inputs itself, with the reason
    return RESULT_BASE_BYTES + max(EVAL_OUTPUT_RATIO * in_bytes, samples * EVAL_MIN_BYTES_PER_SAMPLE)


class FloodError(RunnerError):
    """The agent sent more on one channel than its request can produce."""


def flood_error(where: str, channel: str, limit: int) -> FloodError:
    """The one line for a channel over its budget."""
    return FloodError(
        f"the agent on {where} flooded its {channel} (more than {limit / MIB:.0f} MiB, the most this command can "
        "legitimately send); the run was stopped and nothing of it kept: check the device's agent and runtime (a board "
        "that floods is broken or not trustworthy)"
    )


class LineTail:
    """Splits a byte stream into lines in linear time, keeping the last :data:`TAIL_LINES` non-event lines.

    Args:
        limit: total bytes accepted; :attr:`flooded` turns True past it (the caller stops the agent).
        on_line: receives each line (cleaned of nothing: the caller parses events); returns True when it
            consumed the line (an event), False to keep it in the tail.
    """

    def __init__(self, limit: int, on_line: Callable[[str], bool] | None = None) -> None:
        self.limit = limit
        self.on_line = on_line
        self.total = 0
        self.flooded = False
        self.lines: deque[str] = deque(maxlen=TAIL_LINES)
        self._pending = bytearray()
        self._cut = False  # the current line passed MAX_LINE_BYTES: the rest of it is dropped

    def feed(self, data: bytes) -> None:
        """Take one chunk; every complete line in it is handed on at once."""
        self.total += len(data)
        if self.total > self.limit:
            self.flooded = True
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._append(data[start:])
                return
            self._append(data[start:end])
            self._emit()
            start = end + 1

    def _append(self, piece: bytes) -> None:
        room = MAX_LINE_BYTES - len(self._pending)
        if len(piece) > room:
            piece = piece[:max(room, 0)]
            self._cut = True
        self._pending += piece

    def _emit(self) -> None:
        line = self._pending.decode("utf-8", "replace") + (" ...(line cut)" if self._cut else "")
        self._pending = bytearray()
        self._cut = False
        if not (self.on_line and self.on_line(line)):
            self.lines.append(clean_text(line.rstrip(), 500))

    def close(self) -> None:
        """Hand on the last line when the stream did not end with a newline."""
        if self._pending or self._cut:
            self._emit()

    def text(self) -> str:
        """The kept lines as one line for messages (cleaned: device text)."""
        return " | ".join(line for line in self.lines if line)


def read_capped(read: Callable[[int], bytes], limit: int) -> tuple[bytearray, bool]:
    """Read a stream to its end or to ``limit`` bytes: ``(data, over)`` where ``over`` says it had more. One
    buffer grows in place (joining chunks at the end held the result twice)."""
    data = bytearray()
    while True:
        chunk = read(1 << 16)
        if not chunk:
            return data, False
        if len(data) + len(chunk) > limit:
            return bytearray(), True
        data += chunk
