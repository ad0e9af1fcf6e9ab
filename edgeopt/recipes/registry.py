"""Where recipes come from: the built-in ``recipes/`` directory (the repository's, or ``<prefix>/share/edgeopt/
recipes`` in a wheel; see :mod:`edgeopt.resources`), or a user's YAML file given by path."""

from __future__ import annotations

import difflib
from pathlib import Path

from ..passes.registry import PassRegistry, load_pass_registry
from ..resources import REPO_ROOT
from ..resources import builtin_dir as shipped_dir
from .loader import LoadedRecipe, RecipeError, load_recipe_file

REPO_RECIPES_DIR = REPO_ROOT / "recipes"
RECIPE_SUFFIXES = (".yaml", ".yml")


def builtin_dir() -> Path:
    """The directory of shipped recipes.

    Raises:
        RecipeError: neither the repository's ``recipes/`` nor ``<prefix>/share/edgeopt/recipes`` exists.
    """
    found = shipped_dir("recipes")
    if found is None:
        raise RecipeError(f"built-in recipes not found (looked for {REPO_RECIPES_DIR} and <prefix>/share/edgeopt/"
                          "recipes); reinstall edgeopt")
    return found


def builtin_names() -> list[str]:
    """Names of the shipped recipes, sorted."""
    return sorted(p.stem for p in builtin_dir().iterdir() if p.suffix in RECIPE_SUFFIXES and p.is_file())


def resolve_recipe_path(recipe: str | Path) -> Path:
    """A built-in recipe's file, or ``recipe`` itself when it is a path to a YAML file.

    Raises:
        RecipeError: neither (the message lists the built-ins with the closest match).
    """
    text = str(recipe)
    as_path = Path(text).expanduser()
    looks_like_path = as_path.suffix in RECIPE_SUFFIXES or "/" in text or "\\" in text
    if looks_like_path:
        if as_path.is_file():
            return as_path
        raise RecipeError(
            f"recipe file {as_path} not found: check the path, or use a built-in name ({', '.join(builtin_names())})"
        )
    names = builtin_names()
    if text in names:
        return next(builtin_dir() / f"{text}{s}" for s in RECIPE_SUFFIXES if (builtin_dir() / f"{text}{s}").is_file())
    close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise RecipeError(
        f"unknown recipe '{text}'{hint}; built-in recipes: {', '.join(names)}; or pass a path to a recipe YAML file"
    )


def load_recipe(recipe: str | Path, registry: PassRegistry | None = None) -> LoadedRecipe:
    """Load a built-in recipe by name or a user recipe by path, with its passes built.

    Raises:
        RecipeError: unknown recipe, or an invalid one (with file and line).
    """
    path = resolve_recipe_path(recipe)
    loaded = load_recipe_file(path, registry or load_pass_registry())
    if path.parent == builtin_dir() and loaded.recipe.name != path.stem:
        raise RecipeError(f"{path}: name '{loaded.recipe.name}' does not match the file name; set name: {path.stem}")
    return loaded
