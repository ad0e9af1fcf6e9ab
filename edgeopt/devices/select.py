"""``--devices SELECTION``: many inventory devices by name, tag or glob.

A selection is one or more comma-separated terms, their union in inventory order:

- ``pi5-01``: the device of that name (a typo is an error with the closest name);
- ``tag:rpi5``: every device carrying that tag;
- ``pi5-*``, ``jetson-?``, ``pi[0-9]*``: every device whose name matches the glob (``fnmatch``);
- ``all`` (or ``*``): every device of the inventory.

Every term must match at least one device, so a mistyped tag never silently shrinks a lab run.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError
from .schema import Device, Inventory

_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Term:
    """One term of a selection: ``kind`` is ``name``, ``tag``, ``glob`` or ``all``."""

    kind: str
    value: str

    def matches(self, device: Device) -> bool:
        if self.kind == "all":
            return True
        if self.kind == "tag":
            return self.value in device.tags
        if self.kind == "glob":
            return fnmatch.fnmatchcase(device.name, self.value)
        return device.name == self.value

    def __str__(self) -> str:
        return f"tag:{self.value}" if self.kind == "tag" else self.value


def parse_selection(selection: str | Sequence[str]) -> list[Term]:
    """Split ``"pi5-01,tag:rpi5,jetson-*"`` (or a list of such strings) into terms.

    Raises:
        InputError: an empty selection or an empty ``tag:``.
    """
    parts = [selection] if isinstance(selection, str) else list(selection)
    words = [w.strip() for part in parts for w in part.split(",") if w.strip()]
    if not words:
        raise InputError("--devices is empty: name devices, tags or globs, e.g. --devices tag:rpi5 or pi5-*")
    terms = []
    for word in words:
        if word.startswith("tag:"):
            tag = word[4:].strip()
            if not tag:
                raise InputError(f"--devices {word!r}: write tag:NAME, e.g. tag:rpi5")
            terms.append(Term("tag", tag))
        elif word in ("all", "*"):
            terms.append(Term("all", word))
        elif _GLOB_CHARS & set(word):
            terms.append(Term("glob", word))
        else:
            terms.append(Term("name", word))
    return terms


def select_devices(inventory: Inventory, selection: str | Sequence[str]) -> list[Device]:
    """The inventory's devices the selection names, in inventory order, each once.

    Raises:
        InputError: a term that matches no device (exit 2); the message names the inventory file, its devices
            and its known tags, and the closest name or tag.
    """
    terms = parse_selection(selection)
    for term in terms:
        if not any(term.matches(d) for d in inventory.devices):
            raise InputError(_no_match(inventory, term))
    return [d for d in inventory.devices if any(t.matches(d) for t in terms)]


def _no_match(inventory: Inventory, term: Term) -> str:
    where = f"inventory {inventory.source}" if inventory.source else "the inventory"
    pool = inventory.tags() if term.kind == "tag" else inventory.names()
    close = difflib.get_close_matches(term.value, pool, n=1, cutoff=0.6)
    hint = f" (did you mean '{'tag:' if term.kind == 'tag' else ''}{close[0]}'?)" if close else ""
    what = {"tag": f"no device has tag '{term}'{hint} in", "glob": f"no device name matches '{term}' in",
            "all": "no devices in"}.get(term.kind, f"unknown device '{term}'{hint} in")
    fix = (f"give devices 'tags: [{term.value}]' there" if term.kind == "tag"
           else "fix the selection, add the device there or pass --inventory FILE")
    return (f"--devices: {what} {where}; devices: {', '.join(inventory.names()) or '(none)'}; "
            f"tags: {', '.join(inventory.tags()) or '(none)'}; {fix} (docs/fleet.md)")
