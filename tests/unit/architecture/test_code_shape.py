"""No function longer than :data:`MAX_FUNCTION_LINES` lines; no type or capability sniffing on runners
(``isinstance(.. Runner``, ``hasattr(runner``, ``inspect.signature``): the ``Runner`` protocol declares everything its
callers use."""

from __future__ import annotations

import ast
import re

from tests.unit.architecture.source import (
    MODULES,
)

MAX_FUNCTION_LINES = 80
# Runner\b: isinstance(exc, RunnerError) checks an exception, not a runner.
RUNNER_SNIFFING = re.compile(r"isinstance\(.*Runner\b|hasattr\(runner|inspect\.signature")


def _long_functions() -> list[str]:
    offenders = []
    for module in MODULES.values():
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - start + 1
                if length > MAX_FUNCTION_LINES:
                    offenders.append(f"{module.rel}:{node.lineno} {node.name} ({length} lines)")
    return offenders


def test_no_function_over_80_lines() -> None:
    offenders = _long_functions()
    assert not offenders, f"split into named steps (max {MAX_FUNCTION_LINES} lines): " + "; ".join(offenders)


def test_no_runner_type_or_capability_sniffing() -> None:
    offenders = []
    for module in MODULES.values():
        for number, line in enumerate(module.path.read_text(encoding="utf-8").splitlines(), start=1):
            if RUNNER_SNIFFING.search(line):
                offenders.append(f"{module.rel}:{number}: {line.strip()}")
    assert not offenders, "use the Runner protocol (run/evaluate/probe/describe/close):\n  " + "\n  ".join(offenders)
