"""Which kind a qualify spec's model is (:func:`spec_kind`), and what of the spec does not fit that kind.

The kind is the registry's answer (:func:`edgeopt.dispatch.kind_of` for ``model.path``, :func:`edgeopt.dispatch.
zoo_kind` for ``model.zoo``); the checks are the kind's ``qualify_check`` entry (a gate the kind does not take, a
workload block of another kind, ...), so the loader asks no "is this an LLM?" question.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..dispatch import entry, kind_of, zoo_kind
from ..registry import KindDescriptor
from .gate_spec import GATE_KINDS
from .spec import QualifySpec

Problem = tuple[tuple[str, ...], str]


def spec_kind(spec: QualifySpec, resolve: Callable[[str], Path]) -> KindDescriptor:
    """The kind of the spec's model (``resolve``: a spec path -> a file system path)."""
    m = spec.model
    if m.zoo is not None:
        return zoo_kind(m.zoo)
    assert m.path is not None  # the spec's model has exactly one of path and zoo (ModelSpec)
    return kind_of(resolve(m.path))


def kind_problem(spec: QualifySpec, resolve: Callable[[str], Path]) -> Problem | None:
    """``(key, message)`` of a gate, ``llm:``, ``workload:`` or ``optimized`` that does not fit the kind of model,
    or None (the loader raises it as a spec error at that key): the kind's ``qualify_check`` entry answers."""
    kind = spec_kind(spec, resolve)
    problem: Problem | None = entry(kind, "qualify_check")(spec, kind, resolve)
    return problem


def gate_problem(spec: QualifySpec, kind: KindDescriptor) -> Problem | None:
    """A gate the kind does not take, or a ``workload:`` block (a plug-in kind's) on a built-in kind's model."""
    if spec.workload is not None:
        return ("workload",), ("'workload' sets the workload of a plug-in kind's model, and the model is not one: "
                               "drop it (docs/qualify.md)")
    allowed = tuple(g for g in kind.gates if g in GATE_KINDS)
    for gate in spec.gates.active():
        if gate not in allowed:
            return ("gates", gate), (f"gate '{gate}' does not apply: the model is {kind.model_word}; gates here: "
                                     f"{', '.join(allowed)} (docs/qualify.md)")
    return None


def tensor_problem(spec: QualifySpec, kind: KindDescriptor, resolve: Callable[[str], Path]) -> Problem | None:
    """The tensor kind's ``qualify_check``: its gates, and no ``llm:`` block (that is a generative model's)."""
    problem = gate_problem(spec, kind)
    if problem is None and spec.llm is not None:
        return ("llm",), ("'llm' sets the generative workload of an LLM folder, and the model is not one: drop it, "
                          "or point model.path at an LLM folder")
    return problem
