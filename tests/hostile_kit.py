"""Results of any kind with a hostile string in every string field, generated from the pydantic schemas, and the
checks every rendered output must pass (tests/unit/test_hostile_render.py, tests/unit/test_hostile_reports.py).

:func:`hostile` walks a model's fields by their annotations: every ``str`` (nested models, list items, dict keys and
values, ``Any``) becomes :data:`HOSTILE`; enums and literals keep a valid value; numbers are small and non-zero;
booleans take one given value (render each kind with both, so both sides of every ``if`` are shown). A ``base``
instance supplies the values a renderer looks up by key (percentile names, ...); its strings are replaced too.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as _dt
import enum
import io
import json
import re
import types
import typing
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console

MARK = "PWNED-title"  # inside the OSC 0 sequence: seen in an output only when a raw escape sequence got through
LINK = "[link=https://evil.example]click[/link]"
# A window title, clear screen, an OSC 8 link, a lone C1 CSI, rich markup (a link, a style, and a closing tag that
# raises MarkupError when read as markup), HTML that runs script, Markdown / XML breakers, a bidi override.
HOSTILE = (f"v9\x1b]0;{MARK}\x07\x1b[2J\x1b]8;;https://evil.example\x1b\\osc8\x1b]8;;\x1b\\"
           f"{LINK}[bold red]red[/hostile]<script>alert(1)</script><img src=x onerror=alert(2)>"
           "]]>|pipe|`tick`\x9b2J\u202e")
CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), 0x7F, *range(0x80, 0xA0), 0x202E)]
_SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colours, the only escape a renderer may write
_MAX_DEPTH = 8


@dataclasses.dataclass(frozen=True)
class Fill:
    """How :func:`hostile` fills what the base does not give: booleans, and how many list items."""

    flag: bool = True
    items: int = 2


def _union(annotation: Any, value: Any, depth: int, fill: Fill) -> Any:
    choices = [a for a in typing.get_args(annotation) if a is not type(None)]
    if value is None:
        return _fill(choices[0], None, depth, fill) if choices and depth < _MAX_DEPTH else None
    fitting = next((a for a in choices if _fits(a, value)), choices[0])
    return _fill(fitting, value, depth, fill)


def _scalar(annotation: Any, value: Any, fill: Fill) -> Any:
    """A leaf: strings hostile, everything else the base's value or a small valid one."""
    if annotation in (str, Any, object):
        return HOSTILE if value is None or isinstance(value, str) else _any(value)
    if annotation is Path:  # a path is shown like any string (a file name may hold every byte but NUL); as a Path,
        return Path("/models") / HOSTILE  # its "//" become "/": "[link=https:/evil.example]"
    if value is not None:
        return value
    if isinstance(annotation, type) and hasattr(annotation, "constants"):  # a registered name: a built-in one
        return annotation.constants()[0]
    if annotation is bool:
        return fill.flag
    if annotation is int:
        return 1  # a count, and an index into the generated lists
    if annotation is float:
        return 1.5
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return next(iter(annotation))
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)[0]
    if annotation is _dt.datetime:
        return _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
    return None


def _fill(annotation: Any, value: Any, depth: int, fill: Fill) -> Any:
    """``value`` (None: generated) of type ``annotation`` with every string in it hostile."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _fill(args[0], value, depth, fill)
    if origin in (typing.Union, types.UnionType):
        return _union(annotation, value, depth, fill)
    if isinstance(annotation, type) and (issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)):
        return hostile(annotation, value, fill, depth + 1) if depth < _MAX_DEPTH or value is not None else None
    if origin in (list, set, frozenset, collections.abc.Sequence) and args or (
            origin is tuple and len(args) == 2 and args[1] is Ellipsis):
        items = list(value) if value is not None else ([] if depth >= _MAX_DEPTH else [None] * fill.items)
        out = [v for v in (_fill(args[0], x, depth + 1, fill) for x in items) if v is not None]
        return tuple(out) if origin is tuple else out
    if origin is tuple and args:
        values = list(value) if value is not None else [None] * len(args)
        return tuple(_fill(a, v, depth + 1, fill) for a, v in zip(args, values, strict=False))
    if origin is dict or annotation is dict:
        key, kind = (args if args else (str, Any))
        # the base's keys stay (renderers look them up); one more key, hostile, is added
        out = {k: _fill(kind, v, depth + 1, fill) for k, v in dict(value or {}).items()}
        extra = _fill(kind, None, depth + 1, fill)
        if depth < _MAX_DEPTH and extra is not None:
            out[_fill(key, None, depth + 1, fill)] = extra
        return out
    if origin is list or annotation is list:
        return _any(value) if value is not None else [HOSTILE]
    return _scalar(annotation, value, fill)


def _any(value: Any) -> Any:
    if isinstance(value, str):
        return HOSTILE
    if isinstance(value, dict):
        return {**{k: _any(v) for k, v in value.items()}, HOSTILE: HOSTILE}
    if isinstance(value, list):
        return [_any(v) for v in value] or [HOSTILE]
    return value


def _fits(annotation: Any, value: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return isinstance(value, annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return value in typing.get_args(annotation)
    base = typing.get_origin(annotation) or annotation
    return isinstance(base, type) and isinstance(value, base)


def _hints(model: type) -> dict[str, Any]:
    if isinstance(model, type) and issubclass(model, BaseModel):
        return {name: info.annotation for name, info in model.model_fields.items()}
    return {f.name: typing.get_type_hints(model).get(f.name, f.type) for f in dataclasses.fields(model)}


def hostile(model: type, base: Any = None, fill: Fill = Fill(), depth: int = 0) -> Any:
    """A copy of ``base`` (or a new ``model``) whose every string field, nested ones included, is hostile; enums,
    literals and numbers keep the base's values (or get small valid ones); booleans the base's or ``fill.flag``."""
    fields: dict[str, Any] = {}
    for name, annotation in _hints(model).items():
        value = getattr(base, name, None) if base is not None else None
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum) or (
                typing.get_origin(annotation) is typing.Literal):
            fields[name] = value if value is not None else _scalar(annotation, None, fill)
            continue
        fields[name] = _fill(annotation, value, depth, fill)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_construct(**fields)
    out = object.__new__(model)
    for name, value in fields.items():
        object.__setattr__(out, name, value)
    return out


def strings(value: Any) -> int:
    """How many hostile strings an instance (or a list of them) carries: the filler reached every level."""
    if isinstance(value, list):
        return sum(strings(v) for v in value)
    if isinstance(value, BaseModel):
        return value.model_dump_json(warnings=False).count(MARK)
    return json.dumps(dataclasses.asdict(value), default=str).count(MARK)


def schema_strings(model: type, seen: frozenset[type] = frozenset()) -> int:
    """How many string-typed slots ``model``'s schema has (nested models counted once per path, not recursing into
    a model already on the path): the count docs/reliability.md states per kind."""
    total = 0
    for annotation in _hints(model).values():
        total += _slots(annotation, seen | {model})
    return total


def _slots(annotation: Any, seen: frozenset[type]) -> int:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation in (str, Any, object):
        return 1
    if isinstance(annotation, type) and (issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)):
        return 0 if annotation in seen else schema_strings(annotation, seen)
    if origin is typing.Literal or not args:
        return 0
    return sum(_slots(a, seen) for a in args if a is not type(None) and a is not Ellipsis)


# ---- the checks ----

def recording_console() -> Console:
    """What every renderer prints to in the tests: a real terminal (so a link would be written as OSC 8), wide
    enough that no cell wraps."""
    return Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=4000, highlight=False,
                   soft_wrap=False, legacy_windows=False)


def no_control(text: str, where: str) -> None:
    bad = sorted({repr(c) for c in CONTROL if c in text})
    assert not bad, f"{where}: control characters {bad[:4]} in the output"


def terminal_ok(text: str, where: str) -> None:
    """No escape sequence but rich's own colours, no control character, every hostile link shown as its text."""
    plain = _SGR.sub("", text)
    no_control(plain, where)
    assert MARK not in plain, f"{where}: an escape sequence's payload is in the output"
    flat = re.sub(r"[\s│┃|╷╵┏┓┗┛━─┡┩└┘┌┐├┤┼╇╈╋╂┠┨]", "", plain)
    assert flat.count("evil.example") == len(re.findall(r"\[link=https:/+evil\.example\]", flat)), (
        f"{where}: rich markup was read as markup (a link lost its text)")
    assert LINK in flat, f"{where}: no hostile string shown as text"


def plain_ok(text: str, where: str) -> None:
    """Text written without rich (click.echo, print): no escape sequence, no control character."""
    no_control(text, where)
    assert MARK not in text, f"{where}: an escape sequence's payload is in the output"
    assert not text or LINK in text, f"{where}: no hostile string shown"


def html_ok(text: str, where: str) -> None:
    no_control(text, where)
    assert MARK not in text
    for raw in ("<script", "<img", "onerror=alert"):
        if raw == "onerror=alert":
            assert "<img src=x onerror" not in text, where
        else:
            assert raw not in text, f"{where}: raw {raw} in the page"
    assert "&lt;script&gt;" in text, f"{where}: the hostile strings are not shown at all"


def markdown_ok(text: str, where: str) -> None:
    html_ok(text, where)
    for line in text.splitlines():
        assert "`tick`" not in line, f"{where}: a backtick span from the data: {line[:80]}"


def xml_ok(text: str, where: str) -> ET.Element:
    no_control(text, where)
    return ET.fromstring(text.encode("utf-8"))


def json_ok(text: str, where: str) -> Any:
    no_control(text.replace("\n", "").replace("\t", ""), where)
    return json.loads(text)
