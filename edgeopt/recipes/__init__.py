"""Recipes: ordered passes with their options, one YAML file each (``recipes/`` or a user's path)."""

from .loader import LoadedRecipe, RecipeError, build_recipe, load_recipe_file
from .registry import builtin_dir, builtin_names, load_recipe, resolve_recipe_path
from .schema import Recipe, RecipeStep

__all__ = [
    "LoadedRecipe",
    "Recipe",
    "RecipeError",
    "RecipeStep",
    "build_recipe",
    "builtin_dir",
    "builtin_names",
    "load_recipe",
    "load_recipe_file",
    "resolve_recipe_path",
]
