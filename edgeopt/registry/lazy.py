"""A registry of named descriptors held as lazy ``module:attribute`` paths (imported on first use).

A name registered twice is an error (nothing silently shadows a built-in); an unknown name lists the known
ones with the closest match. Built-ins come first, in their declared order, then entry points.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from ..errors import InputError

T = TypeVar("T")


class RegistryError(InputError):
    """A name is unknown or registered twice, or a registered path does not load the right kind of object."""


class LazyRegistry(Generic[T]):
    """Objects of ``kind`` by name, imported on first use and checked to be instances of ``base``.

    Args:
        kind: what the registry holds, for messages ("runtime", "format").
        base: the class every registered object must be an instance of.
        builtins: name -> ``module:attribute`` of the built-in objects.

    A subclass may hold another kind of object (the pass registry holds classes): it overrides :meth:`_check` and
    sets ``error`` to its own :class:`RegistryError` subclass.
    """

    error: type[RegistryError] = RegistryError

    def __init__(self, kind: str, base: type[T], builtins: Mapping[str, str]) -> None:
        self.kind = kind
        self._base = base
        self._paths: dict[str, str] = {}
        self._origins: dict[str, str] = {}
        self._loaded: dict[str, T] = {}
        for name, path in builtins.items():
            self.register(name, path)

    def register(self, name: str, path: str, *, origin: str = "built-in") -> None:
        """Add ``name``. Raises RegistryError when it is taken or ``path`` is not ``module:attribute``."""
        if name in self._paths:
            raise self.error(
                f"{self.kind} '{name}' is registered twice: {self._paths[name]} ({self._origins[name]}) and {path} "
                f"({origin}); rename one of them or uninstall the package that provides it"
            )
        if ":" not in path:
            raise self.error(f"{self.kind} '{name}' path {path!r} ({origin}) is not 'package.module:attribute'")
        self._paths[name] = path
        self._origins[name] = origin

    def names(self) -> list[str]:
        """Registered names: built-ins in their order, then plug-ins."""
        return list(self._paths)

    def get(self, name: str) -> T:
        """The object registered as ``name``.

        Raises:
            RegistryError: unknown name (with "did you mean"), or the path does not load a ``base`` instance
                whose ``name`` is ``name``.
        """
        key = str(getattr(name, "value", name))
        self._check_known(key)
        if key not in self._loaded:
            self._loaded[key] = self._load(key)
        return self._loaded[key]

    def find(self, name: str) -> T | None:
        """The object registered as ``name``, or None when the name is unknown."""
        key = str(getattr(name, "value", name))
        return self.get(key) if key in self._paths else None

    def all(self) -> list[T]:
        """Every registered object, in :meth:`names` order (imports them all)."""
        return [self.get(name) for name in self._paths]

    def _load(self, name: str) -> T:
        path = self._paths[name]
        module_name, _, attr = path.partition(":")
        try:
            obj: Any = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise self.error(
                f"{self.kind} '{name}' ({path}, {self._origins[name]}) could not be loaded: {type(exc).__name__}: "
                f"{exc}; reinstall edgeopt or the package that registers it"
            ) from exc
        self._check(name, path, obj)
        return obj

    def _check(self, name: str, path: str, obj: Any) -> None:
        """Refuse a loaded object that is not a ``base`` instance named ``name``."""
        if not isinstance(obj, self._base):
            raise self.error(f"{self.kind} '{name}' ({path}) is not a {self._base.__name__}: register an instance")
        if getattr(obj, "name", name) != name:
            raise self.error(f"{self.kind} '{name}' ({path}) is named '{getattr(obj, 'name', '')}': register it "
                             "under its own name")

    def _check_known(self, name: str) -> None:
        if name not in self._paths:
            close = difflib.get_close_matches(name, self._paths, n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            kinds = f"{self.kind}es" if self.kind.endswith("s") else f"{self.kind}s"
            raise self.error(f"unknown {self.kind} '{name}'{hint}; known {kinds}: {', '.join(self.names())}")

    def __contains__(self, name: object) -> bool:
        return str(getattr(name, "value", name)) in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
