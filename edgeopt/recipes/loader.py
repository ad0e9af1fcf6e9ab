"""Load a recipe file and build its passes; every problem is a :class:`RecipeError` naming ``file:line``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError, SchemaProblem
from ..passes.base import Pass, PassUnavailableError
from ..passes.convert import CONVERTERS
from ..passes.registry import PassRegistry, PassRegistryError
from .schema import Recipe
from .yaml_lines import Path_, line_of, read_yaml_with_lines

_SCHEMA_HINT = "see docs/recipes.md"


class RecipeError(InputError):
    """A recipe is unknown, unreadable, or names an unknown pass or option."""


@dataclass(frozen=True)
class LoadedRecipe:
    """A validated recipe with its passes built (configs validated, not yet resolved for a target)."""

    recipe: Recipe
    passes: list[Pass[Any]]
    source: str  # the file it came from, or "<python>"
    converters: dict[str, Pass[Any]] = field(default_factory=dict)  # configured conversion passes, by name


def load_recipe_file(path: Path, registry: PassRegistry) -> LoadedRecipe:
    """Read, validate and build the recipe in ``path``.

    Raises:
        RecipeError: unreadable file, bad YAML, unknown keys, unknown passes or options (with file and line),
            or a pass that is not available here.
    """
    data, lines = read_yaml_with_lines(path, "recipe", RecipeError)
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a mapping with name, description and passes ({_SCHEMA_HINT})")
    return build_recipe(data, registry, source=str(path), lines=lines)


def build_recipe(
    data: Mapping[str, Any] | Recipe,
    registry: PassRegistry,
    *,
    source: str = "<python>",
    lines: Mapping[Path_, int] | None = None,
) -> LoadedRecipe:
    """Validate ``data`` (a mapping as in YAML, or a :class:`Recipe`) and build its passes.

    Raises:
        RecipeError: as :func:`load_recipe_file`; ``lines`` (key path -> line) adds line numbers.
    """
    line_map = dict(lines or {})

    def where(path: Path_) -> str:
        line = line_of(line_map, path)
        return f"{source}:{line}" if line is not None else source

    try:
        recipe = data if isinstance(data, Recipe) else Recipe.model_validate(dict(data))
    except ValidationError as exc:
        p = SchemaProblem.of(exc, unknown_first=True)
        raise RecipeError(f"{where(p.loc)}: {_describe(p, p.loc, 'recipe', Recipe.model_fields)}") from exc
    passes: list[Pass[Any]] = []
    for i, step in enumerate(recipe.passes):
        try:
            cls = registry.get(step.pass_name)
        except PassRegistryError as exc:
            raise RecipeError(f"{where(('passes', i, 'pass'))}: {exc}") from exc
        except PassUnavailableError as exc:
            raise RecipeError(f"{where(('passes', i, 'pass'))}: {exc}") from exc
        try:
            config = cls.parse_config(step.config)
        except ValidationError as exc:
            p = SchemaProblem.of(exc, unknown_first=True)
            fields = _fields_at(cls.config_class.model_fields, p.loc[:-1])
            raise RecipeError(
                f"{where(('passes', i, 'config', *p.loc))}: {_describe(p, p.loc, f'pass {step.pass_name!r}', fields)}"
            ) from exc
        passes.append(cls(config))
    converters: dict[str, Pass[Any]] = {}
    for name, options in recipe.convert.items():
        if name not in CONVERTERS.values():
            raise RecipeError(f"{where(('convert', name))}: '{name}' is not a conversion pass; use one of "
                              f"{', '.join(sorted(CONVERTERS.values()))}")
        try:
            cls = registry.get_class(name)  # availability is checked when the format is planned
            config = cls.parse_config(options)
        except PassRegistryError as exc:
            raise RecipeError(f"{where(('convert', name))}: {exc}") from exc
        except ValidationError as exc:
            p = SchemaProblem.of(exc, unknown_first=True)
            fields = _fields_at(cls.config_class.model_fields, p.loc[:-1])
            raise RecipeError(f"{where(('convert', name, *p.loc))}: "
                              f"{_describe(p, p.loc, f'pass {name!r}', fields)}") from exc
        converters[name] = cls(config)
    return LoadedRecipe(recipe=recipe, passes=passes, source=source, converters=converters)


def _fields_at(fields: Mapping[str, Any], loc: tuple[Any, ...]) -> Mapping[str, Any]:
    """The fields of the nested model at ``loc`` (for ``advanced.x`` errors), else the top-level ones."""
    for key in loc:
        info = fields.get(str(key))
        annotation = getattr(info, "annotation", None)
        nested = getattr(annotation, "model_fields", None)
        if nested is None:
            return fields
        fields = nested
    return fields


def _describe(p: SchemaProblem, loc: tuple[Any, ...], what: str, fields: Mapping[str, Any]) -> str:
    key = ".".join(str(part) for part in loc)
    if p.kind == "extra_forbidden":
        return (f"unknown option '{key}' for {what}{p.did_you_mean(fields)}; known: {', '.join(fields)} "
                f"({_SCHEMA_HINT}, docs/passes.md)")
    if p.kind == "missing":
        return f"{what} is missing '{key}'; add it ({_SCHEMA_HINT})"
    return f"invalid '{key}' for {what}: {p.msg}{p.got}; fix that value"
