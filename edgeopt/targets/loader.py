"""Read one target YAML file into a :class:`Target`; every failure becomes a one-line :class:`TargetError`."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import SchemaProblem, TargetError
from ..yamlio import YamlLimitError, read_text, safe_load
from .schema import Target

TARGET_SUFFIXES = (".yaml", ".yml")
_SCHEMA_HINT = "see docs/targets.md for the schema"


def load_target_file(path: Path) -> Target:
    """Parse and validate one target file.

    Args:
        path: a ``<name>.yaml`` file.

    Returns:
        The validated target.

    Raises:
        TargetError: the file cannot be read, is not valid YAML, does not match the schema, or its ``name``
            differs from its file stem.
    """
    try:
        text = read_text(path)
        data: Any = _parsed(text)
    except OSError as exc:
        raise TargetError(f"{path}: cannot read target file ({_one_line(str(exc))}); check the path") from exc
    except YamlLimitError as exc:
        raise TargetError(f"{path}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise TargetError(f"{path}: {_yaml_problem(exc)}; fix the YAML syntax there") from exc
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}, not a mapping"
        raise TargetError(f"{path}: the file is {kind}; write a mapping of target keys ({_SCHEMA_HINT})")
    try:
        target = Target.model_validate(data)
    except ValidationError as exc:
        raise TargetError(f"{path}: {_first_error(exc)} ({_SCHEMA_HINT})") from exc
    if target.name != path.stem:
        raise TargetError(
            f"{path}: name '{target.name}' does not match the file name; "
            f"rename the file to '{target.name}{path.suffix}' or set name: {path.stem}"
        )
    return target


def _parsed(text: str) -> Any:
    """``safe_load(text)``, parsed once per process per distinct text: every benchmark, optimize and profile call
    loads the registry again (~12 files, ~25 ms of pure-Python YAML per load, most of the registry's cost); the
    file is still read each time, so an edited file is parsed anew. A deep copy, so no caller changes the cache."""
    return copy.deepcopy(_parsed_once(text))


@functools.lru_cache(maxsize=64)
def _parsed_once(text: str) -> Any:
    return safe_load(text)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        problem = exc.problem or exc.context or "syntax error"
        return f"YAML syntax error at line {mark.line + 1}, column {mark.column + 1}: {_one_line(problem)}"
    return f"YAML error: {_one_line(str(exc))}"


def _first_error(exc: ValidationError) -> str:
    """The first offending key path, pydantic's message, the bad value and the fix; '(+N more)' if more."""
    p = SchemaProblem.of(exc)
    where, fix = (f"key '{p.key}'", "fix that key") if p.key else ("target", "fix the file")
    shown = p.got if p.key and p.kind != "missing" else ""
    return f"invalid {where}: {p.msg}{shown}{p.more}; {fix}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
