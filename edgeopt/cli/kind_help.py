"""The kind-specific parts of the commands' help texts, composed from each registered kind's descriptor
(:class:`~edgeopt.registry.kind_spec.KindHelp`, its ``cli_help``), so a command module names no kind: a kind adds a
paragraph to a command's help, a sentence to a command's paragraph or a clause to an option's, and a plug-in
kind's appear beside the built-ins'.

Registry order (the built-ins first); a kind that does not load adds nothing (its own commands say why).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..registry import KindDescriptor, RegistryError, kind_registry
from ..registry.kind_spec import HelpSlot


def fragments(slot: HelpSlot, kinds: Sequence[KindDescriptor] | None = None) -> list[str]:
    """Each kind's help fragment for ``slot`` (``kinds``: instead of the registry's, for tests)."""
    if kinds is None:
        kinds = [k for k in map(_loaded, kind_registry().names()) if k is not None]
    texts = (getattr(k.cli_help, slot) for k in kinds)
    return [t for t in texts if t]


def _loaded(name: str) -> KindDescriptor | None:
    try:
        return kind_registry().get(name)
    except RegistryError:
        return None


def option_help(base: str, slot: HelpSlot, kinds: Sequence[KindDescriptor] | None = None) -> str:
    """An option's help: its own text, then each kind's clause after "; ", closed with "."."""
    return "; ".join([base, *fragments(slot, kinds)]) + "."


def sentence_help(head: str, slot: HelpSlot, kinds: Sequence[KindDescriptor] | None = None) -> str:
    """A command's one-paragraph help: its own sentences ``head``, then each kind's sentence, joined by spaces."""
    return " ".join([head, *fragments(slot, kinds)])


def command_help(head: str, slot: HelpSlot, *tail: str, kinds: Sequence[KindDescriptor] | None = None) -> str:
    """A command's help: its own paragraphs ``head``, each kind's paragraph, then ``tail`` (one per paragraph)."""
    return "\n\n".join([head, *fragments(slot, kinds), *tail])
