"""Big results of a lying board (tests/fake_agent.py's host-cost modes; docs/reliability.md, "Untrusted device: host
cost"): bodies of JSON numbers spliced into a real result, written without building them in memory twice."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BIG_RESULT_BYTES = 500_000_000  # "result_500mb": far over the result budget
SAMPLES_BYTES = 120_000_000  # "samples_120mb": realistic latencies (7 digits, as json.dumps writes them)
SPLICE = "@@splice@@"  # where a big body of numbers goes in a result's JSON text


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
