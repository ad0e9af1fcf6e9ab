"""Read JSON that came from a file or a database row without letting it exhaust the stack or memory.

``json.loads`` recurses once per nesting level: a ``deployment.json`` or a history row nested 100,000 levels deep is
a :class:`RecursionError` (not a ``ValueError``), which escaped every ``except ValueError`` around it and broke each
command that read it (one such history row broke every ``compare`` in that database). Every reader of JSON edgeopt
did not just produce itself goes through :func:`loads`, :func:`validate` (a pydantic model) or
:func:`edgeopt.inbound.read_json` (a file), which refuse a text over a size limit or nested past :data:`MAX_DEPTH`
with a one-line :class:`JsonLimitError` before anything is parsed. The limits are the reader's: a deployment record
is a few KiB, a stored result some MiB (docs/reliability.md, "Untrusted files").
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["MAX_DEPTH", "JsonLimitError", "check", "loads", "validate"]

M = TypeVar("M", bound=BaseModel)

MAX_DEPTH = 64  # nesting of objects and arrays; edgeopt's own records nest at most 8 levels
# A JSON string literal, escapes included, up to its closing quote or the end of the text: optional, so a match
# that starts always succeeds and consumes (an unterminated ``"\"\"\"...`` would otherwise be retried from every
# escaped quote: quadratic). What is left once strings are gone is the structure, where every bracket counts.
STRING_LITERAL = _STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_BRACKETS = re.compile(r"[][{}]")


class JsonLimitError(ValueError):
    """JSON over a size or depth limit, not UTF-8, or not a regular file; ``str()`` is one line without content."""


def _depth_problem(text: str, max_depth: int) -> str | None:
    depth = 0
    for match in _BRACKETS.finditer(_STRING.sub("", text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > max_depth:
            return f"nested more than {max_depth} levels deep"
    return None


def check(text: str | bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> None:
    """Refuse ``text`` when it is longer than ``max_bytes`` (characters, for a ``str``) or nests deeper than
    ``max_depth``.

    Iterative (string literals skipped, brackets counted, stopping at the first level too deep), so a hostile
    text costs one pass, never a recursion.

    Raises:
        JsonLimitError: too large or too deep.
    """
    size = len(text)
    if size > max_bytes:
        raise JsonLimitError(f"{size:,} bytes, over the {max_bytes:,}-byte limit")
    body = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    problem = _depth_problem(body, max_depth)
    if problem:
        raise JsonLimitError(problem)


def loads(text: str | bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` within the limits of :func:`check`.

    Raises:
        JsonLimitError: too large or too deep. json.JSONDecodeError (a ValueError): not JSON.
    """
    check(text, max_bytes=max_bytes, max_depth=max_depth)
    try:
        return json.loads(text)
    except RecursionError:  # not reachable after check(); kept so no caller ever sees one
        raise JsonLimitError(f"nested too deeply to parse (over {max_depth} levels)") from None


def validate(model: type[M], text: str | bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> M:
    """``model.model_validate_json(text)`` within the limits of :func:`check` (pydantic parses the whole text
    before validating, so the limits come first).

    Raises:
        JsonLimitError: too large or too deep. pydantic.ValidationError (a ValueError): not that model.
    """
    check(text, max_bytes=max_bytes, max_depth=max_depth)
    return model.model_validate_json(text)
