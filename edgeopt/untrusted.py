"""Text a device sent is data: neutralised before it is shown (terminal, Markdown, XML) or stored.

A board is untrusted input (docs/reliability.md, "Untrusted device"): its runtime version, hostname, CPU name,
phase names, error text and stderr lines may carry terminal escapes (a window-title OSC, a clear-screen CSI),
rich markup (``[link=https://...]``), HTML (``<script>``) or bytes XML cannot hold (0x1B). The runners clean every
string at the boundary with :func:`clean_text` / :func:`clean_tree` (control characters out, length bounded), and
each renderer escapes for its own syntax: :func:`for_rich` (the terminal), :func:`for_html` (report.html, the
profile and trade-off pages, SVG charts), :func:`for_markdown` / :func:`for_markdown_code` (summary.md), and
:func:`for_json` (a JSON document printed or written: the same data, nothing a terminal acts on); :func:`clean_text`
alone makes a string valid XML 1.0 text (junit.xml) and a plain-text line (``click.echo``). Strings from files (a
deployment's name, a spec's description, a history row) reach the renderers without passing a runner, so the
renderers clean every string they show, not only a device's (tests/unit/test_hostile_reports.py renders every
result kind through every renderer with a hostile string in every string field).
"""

from __future__ import annotations

import html
import re
from typing import Any

from rich.markup import escape as _rich_escape

# C0 controls except tab/newline, DEL, C1 controls (0x80-0x9F: a lone 0x9B is a CSI on some terminals), the
# bidirectional overrides and isolates (text that reads differently than it is), and the XML-invalid
# surrogates and non-characters.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
# A full escape sequence (CSI ... final byte, OSC ... BEL/ST, two-byte ESC x) is removed whole, so no
# ``[2J`` residue is left where the ESC was.
_ESCAPE_SEQ = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\^_])|\x9b[0-?]*[ -/]*[@-~]")
# The longest device string kept (an error line, a version, a stderr line); longer ones are cut with a mark.
MAX_TEXT_CHARS = 2000
# How deep a device's JSON may nest (the real agent's results nest 4 levels; 32 is generous).
MAX_DEPTH = 32


class UntrustedDataError(ValueError):
    """Device data that cannot be accepted at all (nested deeper than :data:`MAX_DEPTH`)."""


def clean_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` without escape sequences or control characters (tabs and newlines become spaces), cut to
    ``limit`` characters: safe for a terminal, a log line and XML text."""
    out = _CONTROL.sub("", _ESCAPE_SEQ.sub("", text).replace("\t", " ").replace("\n", " ").replace("\r", " "))
    return out if len(out) <= limit else out[:limit] + "...(cut)"


_PLAIN = {int, float, bool, type(None)}  # JSON scalars with no text: a list of only these is left as it is (one C pass)


def clean_tree(value: Any, *, depth: int = 0, limit: int = MAX_TEXT_CHARS) -> Any:
    """A JSON value with every string (keys included) passed through :func:`clean_text`.

    Raises:
        UntrustedDataError: the value nests deeper than :data:`MAX_DEPTH`.
    """
    if depth > MAX_DEPTH:
        raise UntrustedDataError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return clean_text(value, limit)
    if isinstance(value, dict):
        return {clean_text(str(k), limit): clean_tree(v, depth=depth + 1, limit=limit) for k, v in value.items()}
    if isinstance(value, list):
        if set(map(type, value)) <= _PLAIN or not any(isinstance(v, (str, dict, list)) for v in value):
            return value  # numbers, booleans, nulls: nothing to clean, and no copy of 2 M samples
        return [clean_tree(v, depth=depth + 1, limit=limit) for v in value]
    return value


def for_rich(value: object) -> str:
    """A device string for rich output (a table cell, a title, a printed line): cleaned, markup escaped."""
    return _rich_escape(clean_text(str(value)))


def for_html(value: object) -> str:
    """A string for HTML or SVG text and attribute values: cleaned (no ESC reaches the page), then ``<>&"'``
    escaped, so ``<script>`` shows as text."""
    return html.escape(clean_text(str(value)))


def for_markdown(value: object) -> str:
    """A device string for Markdown (summary.md): cleaned, HTML and table syntax escaped, so ``<script>`` or
    ``<img onerror>`` shows as text on the page that renders it."""
    text = clean_text(str(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("`", "&#96;").replace("[", "\\[").replace("]", "\\]")


def for_markdown_code(value: object) -> str:
    """A name as a Markdown code span (`` `board-1` ``) when it is plain; otherwise (a backtick that would close
    the span, ``<>&|`` that a reader would take for HTML or a table) as :func:`for_markdown`'s escaped text."""
    text = clean_text(str(value))
    return f"`{text}`" if text and not any(c in text for c in "`<>&|") else for_markdown(text)


# What JSON may hold raw in a string but a terminal (or a bidi-aware viewer) acts on: DEL, the C1 controls, the
# bidirectional overrides and isolates. JSON escapes only C0 itself.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def for_json(text: str) -> str:
    """A JSON document with :data:`_JSON_UNSAFE` characters written as ``\\uXXXX`` escapes: parsed, it is the same
    data; printed (``--json`` to a terminal, ``cat result.json``), nothing in it is a control sequence. Those
    characters appear in JSON only inside strings, so the replacement is always valid."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
