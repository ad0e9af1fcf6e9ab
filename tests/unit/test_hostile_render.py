"""Every string shown is data: results of every kind, with a hostile string in EVERY string field (found by walking
the pydantic schemas, not listed by hand), rendered by the terminal tables and the reports, show no ESC, no rich
markup effect and no raw HTML. docs/reliability.md, "Untrusted device: new surfaces"."""

from __future__ import annotations

import enum
import io
import json
import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel
from rich.console import Console

from tests.synthetic_results import bench_result

# A window title, clear screen, an OSC 8 link, a lone C1 CSI, rich markup (a link, and a closing tag that raises
# MarkupError when read as markup), HTML that runs script, a bidi override.
HOSTILE = ("v9\x1b]0;PWNED-title\x07\x1b[2J\x1b]8;;https://evil.example\x1b\\osc8\x1b]8;;\x1b\\"
           "[link=https://evil.example]click[/link][/hostile]<script>alert(1)</script><img src=x onerror=alert(2)>"
           "\x9b2J\u202e")
CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), 0x7F, *range(0x80, 0xA0), 0x202E)]


def _fill(annotation: Any, value: Any, depth: int = 0) -> Any:
    """``value`` (may be None) of type ``annotation`` with every string in it hostile, from the type alone."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        choices = [a for a in args if a is not type(None)]
        if value is None:
            return _fill(choices[0], None, depth) if choices and depth < 6 else None
        fitting = next((a for a in choices if _fits(a, value)), choices[0])
        return _fill(fitting, value, depth)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return hostile(annotation, value, depth + 1)
    if annotation is str:
        return HOSTILE
    if origin in (list, tuple) and args:
        items = list(value) if value else ([] if depth >= 6 else [None])
        out = [_fill(args[0], v, depth + 1) for v in items]
        return [v for v in out if v is not None] if origin is list else tuple(v for v in out if v is not None)
    if origin is dict:
        kind = args[1] if args else Any  # keys the renderers look up stay; one more key is hostile
        out = {k: _fill(kind, v, depth + 1) for k, v in dict(value or {}).items()}
        extra = _fill(kind, None, depth + 1) if kind is not Any else HOSTILE
        if (not args or args[0] is str) and extra is not None:
            out[HOSTILE] = extra
        return out
    if annotation is Any:
        return _any(value)
    return value


def _any(value: Any) -> Any:
    if isinstance(value, str):
        return HOSTILE
    if isinstance(value, dict):
        return {**{k: _any(v) for k, v in value.items()}, HOSTILE: HOSTILE}
    if isinstance(value, list):
        return [_any(v) for v in value]
    return value


def _fits(annotation: Any, value: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return isinstance(value, BaseModel)
    base = typing.get_origin(annotation) or annotation
    return isinstance(base, type) and isinstance(value, base)


def hostile(model: type[BaseModel], base: BaseModel | None = None, depth: int = 0) -> BaseModel | None:
    """A copy of ``base`` (or a new ``model``) whose every string field, nested ones included, is hostile; enums,
    literals and numbers keep the base's values. None where a required non-string field has no base value."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        value = getattr(base, name, None) if base is not None else None
        annotation = info.annotation
        if typing.get_origin(annotation) is typing.Literal or (
                isinstance(annotation, type) and issubclass(annotation, enum.Enum)):
            fields[name] = value
            continue
        filled = _fill(annotation, value, depth)
        if filled is None and info.is_required() and base is None:
            return None
        fields[name] = filled if filled is not None else value
    return model.model_construct(**fields)


def _strings(model: BaseModel) -> int:
    """How many hostile strings the instance carries (the filler reached every level)."""
    return json.dumps(model.model_dump(mode="json")).count("PWNED-title")


def _terminal_ok(text: str) -> None:
    assert not any(c in text for c in CONTROL), [c for c in CONTROL if c in text][:3]
    assert "PWNED-title" not in text and "\x1b]8" not in text  # whole escape sequences were removed
    assert "[link=https://evil.example]click[/link]" in text.replace("\n", "").replace(" ", "").replace("│", "")


def _html_ok(text: str) -> None:
    assert not any(c in text for c in CONTROL) and "<script" not in text and "<img" not in text


@pytest.fixture()
def hostile_bench():
    result = hostile(type(bench_result()), bench_result())
    assert _strings(result) > 20
    return result


def test_the_bench_table(hostile_bench, capsys):
    from edgeopt.cli.render import render_bench

    render_bench(hostile_bench)
    _terminal_ok(capsys.readouterr().out)


def test_llm_tables(capsys):
    from edgeopt.bench.llm.render import render_llm_bench
    from edgeopt.bench.llm.result import LlmBenchResult, LlmCell, LlmLoad

    base = LlmBenchResult.model_construct(
        model_path="/m", model_format="onnxruntime_genai", runtime={"name": "x", "version": "1"}, runner="local",
        model=None, workload=None, loads=[LlmLoad.model_construct(threads=0, load_ms=1.0)],
        cells=[LlmCell.model_construct(prompt_tokens=1, gen_tokens=2, context_depth=0, batch=1, threads=0,
                                       repetitions=1, valid=False, invalid_reasons=["x"])],
        truncated=False, valid=False, target_mismatch=["x"])
    result = hostile(LlmBenchResult, base)
    object.__setattr__(result, "workload", __import__("edgeopt.bench.llm.workload", fromlist=["x"]).LlmWorkload())
    console = Console(file=io.StringIO(), force_terminal=True, width=400, highlight=False)
    render_llm_bench(result, console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    import re
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)  # rich's own colours
    _terminal_ok(out)
