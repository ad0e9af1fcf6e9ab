"""A runtime's option schema: each option's name, type, allowed values, default and a one-line help.

Declared once, on the runtime class (``Runtime.options``). The agent checks a request's options with it before
loading; the host checks the same schema before anything is sent (``edgeopt.registry``), so a typo in
``--runtime-option`` fails at once, not after the SSH connection and the upload. A value of None always passes:
it means "the runtime's default" (the sweep unsets an option that way). Checks that need the device (is this
OpenVINO device present, is this execution provider in the build) stay in the runtime's ``load``.

Standard library only, Python 3.8.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Tuple

KINDS = ("bool", "int", "str", "list")


class Option:
    """One runtime option.

    Args:
        name: the key in ``runtime_options``.
        kind: ``bool`` (true/false), ``int`` (an integer, or a string of one), ``str`` (any scalar, read as text)
            or ``list`` (a list of strings).
        help: one line saying what it does (``docs/runtimes.md`` and error messages).
        default: what the runtime uses when the option is not given (None: the runtime library's own default).
        choices: allowed values of a ``str`` option (empty: any).
        fold: ``upper`` or ``lower`` when the runtime reads the value case-insensitively (compared folded).
        validate: a check of its own, instead of the kind's: value -> the problem (one line) or None.
        path: the value names a file or directory the runtime writes or reads (a cache directory). The host
            refuses such an option from a deployment file, which is data and must not choose where anything is
            written (docs/reliability.md, "Untrusted files"); given on the command line it is the user's choice.
    """

    def __init__(self, name: str, kind: str, help: str, default: Any = None, choices: Sequence[str] = (),
                 fold: Optional[str] = None, validate: Optional[Callable[[Any], Optional[str]]] = None,
                 path: bool = False) -> None:
        if kind not in KINDS:
            raise ValueError("option %s: kind %r is not one of %s" % (name, kind, ", ".join(KINDS)))
        self.name = name
        self.kind = kind
        self.help = help
        self.default = default
        self.choices = tuple(choices)
        self.fold = fold
        self.validate = validate
        self.path = path

    def __repr__(self) -> str:
        return "Option(%r, %r)" % (self.name, self.kind)

    def problem(self, value: Any) -> Optional[str]:
        """Why ``value`` is not a valid value of this option (one line), or None when it is."""
        if value is None:
            return None
        if self.validate is not None:
            return self.validate(value)
        if self.kind == "bool" and not isinstance(value, bool):
            return "%s must be true or false (got %r): %s" % (self.name, value, self.help)
        if self.kind == "int":
            try:
                int(value)
            except (TypeError, ValueError):
                return "%s must be an integer (got %r): %s" % (self.name, value, self.help)
            if isinstance(value, bool):
                return "%s must be an integer (got %r): %s" % (self.name, value, self.help)
        if self.kind == "list" and not (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
            return "%s must be a list of names (got %r): %s" % (self.name, value, self.help)
        if self.choices:
            text = self.folded(value)
            if text not in self.choices:
                return "%s %r: use one of %s" % (self.name, text, ", ".join(self.choices))
        return None

    def folded(self, value: Any) -> str:
        """``value`` as the runtime compares it (upper- or lower-cased when it reads it case-insensitively)."""
        text = str(value)
        if self.fold == "upper":
            return text.upper()
        if self.fold == "lower":
            return text.lower()
        return text


Schema = Optional[Tuple[Option, ...]]


def by_name(schema: Sequence[Option]) -> Dict[str, Option]:
    """The schema's options by name."""
    return dict((o.name, o) for o in schema)


def path_options(schema: Schema) -> Tuple[str, ...]:
    """Names of the options of ``schema`` that name a path (``Option.path``); none for a runtime without a schema."""
    return tuple(o.name for o in schema or () if getattr(o, "path", False))


def problem(runtime: str, schema: Schema, options: Dict[str, Any]) -> Optional[str]:
    """The first problem with ``options`` for ``runtime`` (one line naming the option and the known ones), or None.

    A runtime with no schema (``schema`` None: a plug-in that declares none, or ``null``, which ignores options)
    accepts every option.
    """
    if schema is None:
        return None
    known = by_name(schema)
    unknown = sorted(set(options) - set(known))
    if unknown:
        return "unknown %s option(s) %s; known: %s" % (runtime, ", ".join(unknown), ", ".join(sorted(known)))
    for name in sorted(options):
        found = known[name].problem(options[name])
        if found:
            return found
    return None


def check(runtime: str, schema: Schema, options: Dict[str, Any]) -> None:
    """Raise ValueError (an input error in the agent's result) when :func:`problem` finds one."""
    found = problem(runtime, schema, options)
    if found:
        raise ValueError(found)
