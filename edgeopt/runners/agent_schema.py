"""The one schema for what an agent returns, checked at the boundary before anything on the host uses it.

A board is untrusted (docs/reliability.md, "Untrusted device"). :func:`accept_result` turns the agent's result
text into a ``RawRun`` or raises one :class:`RunnerError` line (exit 3) naming the field that is wrong: JSON
nested deeper than :data:`~edgeopt.untrusted.MAX_DEPTH`, a field of the wrong type (``samples_ns`` a string,
``runtime`` a list), an unknown field. Every string in it is cleaned of escapes and control characters
(:func:`~edgeopt.untrusted.clean_tree`). Numbers of the right type but impossible values (NaN, negative
latencies, more samples than the wall time allows) are left for the metrics to judge
(:mod:`edgeopt.metrics.physics`): such a run is invalid with a reason (exit 1), not a device error.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from edgeopt_agent import protocol
from edgeopt_agent.protocol import RawRun

from ..errors import RunnerError, SchemaProblem
from ..jsonio import STRING_LITERAL
from ..untrusted import UntrustedDataError, clean_text, clean_tree
from .limits import RESULT_MAX_CONTAINERS, RESULT_MAX_QUOTES, RESULT_MAX_VALUES

Number = StrictInt | StrictFloat


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class RuntimeFacts(_Open):
    name: StrictStr
    version: StrictStr


class WarmupDone(_Open):
    iterations: StrictInt = 0
    duration_s: Number = 0.0


class PowerWindow(_Open):
    samples: StrictInt = 0
    duration_s: Number = 0.0
    avg_w: Number | None = None
    energy_j: Number | None = None
    channels_w: dict[StrictStr, Number | None] = {}


class PowerFacts(_Open):
    """What the power sampler measured (``edgeopt_agent.power.sampler``): the figures energy is computed from."""

    sensor: StrictStr | None = None
    kind: StrictStr | None = None
    rails: list[StrictStr] = []
    rate_hz: Number | None = None
    rate_hz_used: Number | None = None
    read_errors: StrictInt = 0
    idle: PowerWindow | None = None
    active: PowerWindow | None = None


class Frames(_Open):
    """A paced run's frames (``edgeopt_agent.paced.paced_loop``): the deadline figures come from them."""

    fps: Number
    period_ns: StrictInt
    scheduled: StrictInt
    completed: StrictInt
    misses: StrictInt
    late_starts: StrictInt = 0
    max_lateness_ns: StrictInt = 0
    response_ns: list[StrictInt] = []
    wall_ns: StrictInt = 0


class ProfileLayer(_Open):
    """One runtime layer of a profile (``edgeopt_agent.layer_stats.layer_records``)."""

    name: StrictStr
    op_type: StrictStr = ""
    original_names: list[StrictStr] = []
    executed: StrictBool = True
    calls: StrictInt = 1
    runs: StrictInt = 0
    median_us: Number = 0.0
    p90_us: Number = 0.0
    mean_us: Number = 0.0
    min_us: Number = 0.0
    max_us: Number = 0.0
    share: Number = 0.0


class TraceEvent(_Open):
    name: StrictStr
    op_type: StrictStr = ""
    start_us: Number | None = None
    duration_us: Number


class ProfileFacts(_Open):
    """The ``profile`` command's records (``edgeopt_agent.profile``)."""

    layers: list[ProfileLayer] = []
    inference_ns: list[StrictInt] = []
    trace: list[TraceEvent] = []
    trace_source: StrictStr = "runtime"
    warmup: StrictInt = 0
    iterations: StrictInt = 0
    notes: list[StrictStr] = []


class AgentResult(BaseModel):
    """The types of every field of :class:`edgeopt_agent.protocol.RawRun` (the agent's result)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    status: Literal["ok", "error"]
    error: StrictStr | None = None
    error_kind: StrictStr | None = None
    request: dict[str, Any] | None = None
    runtime: dict[str, Any] = {}
    samples_ns: list[Number] = []
    timed_wall_s: Number = 0.0
    timed_inferences: StrictInt = 0
    warmup_done: dict[str, Any] = {}
    load_ms: Number | None = None
    first_inference_ms: Number | None = None
    memory_kb: dict[StrictStr, StrictInt | None] = {}
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    truncated: StrictBool = False
    environment: dict[str, Any] = {}
    power: dict[str, Any] = {}
    frames: dict[str, Any] = {}
    profile: dict[str, Any] = {}
    generate: dict[str, Any] = {}
    agent_version: StrictStr = ""
    protocol_version: StrictInt = protocol.PROTOCOL_VERSION


def _malformed(where: str, why: str) -> RunnerError:
    return RunnerError(f"the agent on {where} returned a malformed result ({clean_text(why, 200)}); nothing of it "
                       "was used: check the agent there (edgeopt devices check) or update it")


_DECODER = json.JSONDecoder()
_BLANK = re.compile(r"[ \t\n\r]*")
_MAX_TAIL = 4096  # blank characters after the result's line (the agent writes one newline)


def _past_blanks(text: str, pos: int) -> int:
    """The first offset at or after ``pos`` that is not a blank (``_BLANK`` matches the empty string too)."""
    match = _BLANK.match(text, pos)
    return match.end() if match else pos


def result_text(data: bytes | bytearray, where: str) -> str:
    """The agent's result bytes as text, refused unless ASCII: the agent writes ``json.dumps``'s ASCII, and one
    character past Latin-1 would make Python hold the whole text at 4 bytes a character. The caller drops ``data``
    once it has the text, so the host holds one copy of the result while it is parsed.

    Raises:
        RunnerError: not ASCII.
    """
    if not data.isascii():
        raise _malformed(where, "not ASCII JSON, which is what the agent writes")
    return data.decode("ascii")


def _last_line(text: str, where: str) -> tuple[int, int]:
    """Where the last non-blank line of ``text`` starts and ends, found without copying the text (``strip`` and
    ``splitlines`` held up to three more copies of it)."""
    end = len(text)
    while end and text[end - 1] in " \t\r\n":
        end -= 1
        if len(text) - end > _MAX_TAIL:
            raise _malformed(where, f"more than {_MAX_TAIL} blank characters after it")
    return _past_blanks(text, text.rfind("\n", 0, end) + 1), end


def _check_counts(text: str, start: int, end: int, where: str) -> None:
    """Refuse a result that holds more values, arrays and objects, or strings than an agent's result can, counted
    in its text before anything is parsed: each becomes a Python object on the host (40 bytes or more), so a
    result of small integers within the byte budget cost the host ~1.9 GB. Commas inside strings (an error
    message, a layer or device name) are not values: they are taken off, string by string, without a copy of the
    text."""
    quotes = text.count('"', start, end)
    containers = text.count("[", start, end) + text.count("{", start, end)
    commas = text.count(",", start, end)
    if commas > RESULT_MAX_VALUES and quotes <= RESULT_MAX_QUOTES:
        commas -= sum(m.group().count(",") for m in STRING_LITERAL.finditer(text, start, end))
    for count, most, what in ((commas + 1, RESULT_MAX_VALUES, "values"), (containers, RESULT_MAX_CONTAINERS,
                              "arrays and objects"), (quotes, RESULT_MAX_QUOTES, "string quotes")):
        if count > most:
            raise _malformed(where, f"up to {count:,} {what}, more than an agent's result holds ({most:,}: at "
                                    f"most {protocol.MAX_SAMPLES:,} samples are kept); it was not parsed")


def accept_result(text: str, where: str) -> RawRun:
    """The agent's result text (its last line) as a checked, cleaned ``RawRun``.

    Raises:
        RunnerError: not JSON, more values than a result holds, nested too deep, a field of the wrong type, or not
            this protocol.
    """
    start, end = _last_line(text, where)
    _check_counts(text, start, end, where)
    try:
        data, stop = _DECODER.raw_decode(text, start)
        if _past_blanks(text, stop) != len(text):
            raise ValueError(f"extra data at character {stop}")
    except RecursionError:
        raise _malformed(where, "JSON nested too deep") from None
    except ValueError as exc:
        raise _malformed(where, f"not JSON: {exc}") from None
    try:
        data = clean_tree(data)
    except UntrustedDataError as exc:
        raise _malformed(where, f"JSON {exc}") from None
    if not isinstance(data, dict):
        raise _malformed(where, f"expected a JSON object, got {type(data).__name__}")
    try:
        status = _validated_status(data)
    except ValidationError as exc:
        p = SchemaProblem.of(exc)
        raise _malformed(where, f"{'.'.join(str(x) for x in p.loc) or 'result'}: {p.msg}{p.got}") from None
    if status == protocol.STATUS_OK:
        _require_parts(data, where)
    try:
        return RawRun.from_dict(data)
    except protocol.ProtocolError as exc:
        raise RunnerError(f"the agent on {where} returned an unreadable result ({exc}): update the agent") from None


def _validated_status(data: dict[str, Any]) -> str:
    """``data`` checked against :class:`AgentResult`, its status. A ``samples_ns`` of numbers only is checked here
    and left out of the model's check (whose validated copy of 2 M samples cost the host ~46 MB more at the peak);
    any other value is the model's to check and name."""
    samples = data.get("samples_ns")
    if not isinstance(samples, list) or not set(map(type, samples)) <= {int, float}:  # bool is no number
        return AgentResult.model_validate(data).status
    data["samples_ns"] = []
    try:
        return AgentResult.model_validate(data).status
    finally:
        data["samples_ns"] = samples


def _require_parts(data: dict[str, Any], where: str) -> None:
    """A successful result names its runtime and version as strings (they label every table and record), and
    its warm-up, power, frames and profile hold the types the host computes with."""
    parts: tuple[tuple[str, type[BaseModel]], ...] = (
        ("runtime", RuntimeFacts), ("warmup_done", WarmupDone), ("power", PowerFacts), ("frames", Frames),
        ("profile", ProfileFacts))
    for name, model in parts:
        if name in ("power", "frames", "profile") and not data.get(name):
            continue  # energy disabled, not a paced run, not a profile
        try:
            model.model_validate(data.get(name) or {})
        except ValidationError as exc:
            p = SchemaProblem.of(exc)
            raise _malformed(where, f"{'.'.join(str(x) for x in (name, *p.loc))}: {p.msg}{p.got}") from None
