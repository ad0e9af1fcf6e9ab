"""Which model kind a path is, and the kind's entry for a task: the one question a command asks before it works.

``edgeopt bench``, ``sweep``, ``optimize``, ``qualify`` and :func:`edgeopt.benchmark` call
``entry(kind_of(model), task)(...)``; the entry is data on the kind's descriptor (a lazy ``module:function``,
:class:`~edgeopt.registry.KindDescriptor` ``bench_cli``, ``bench_api``, ``qualify``, ...), so no stage asks "is
this an LLM?" and a plug-in kind reaches every command its descriptor (or its engine) names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .deploy.io import DEPLOYMENT_FILE, is_deployment, load_deployment
from .registry import KindDescriptor, format_kind, format_registry, get_kind
from .registry.kind_spec import Task
from .registry.lookup import model_kind

__all__ = ["entry", "kind_of", "zoo_kind"]


def kind_of(path: str | Path) -> KindDescriptor:
    """The kind of the model at ``path``: a model file, a model folder, a deployment folder or its
    ``deployment.json`` (the kind of what it deploys: a folder a format claims, else its record's ``format``).
    Told cheaply, before any check (:func:`~edgeopt.registry.lookup.model_kind`); a path that does not exist is
    taken by its suffix, so the kind's engine says it is missing.

    Raises:
        DeploymentError: a deployment whose record cannot be read (exit 2).
    """
    path = Path(path)
    folder = path.parent if path.name == DEPLOYMENT_FILE and path.is_file() else path
    claimed = folder.is_dir() and any(f.directory and f.claims_directory(folder) for f in format_registry().all())
    if claimed:
        return get_kind(model_kind(folder))
    if is_deployment(folder):
        deployment, _ = load_deployment(folder, check_files=False)
        return format_kind(deployment.format)
    return get_kind(model_kind(path))


def zoo_kind(name: str) -> KindDescriptor:
    """The kind of zoo model ``name`` (the format the zoo writes it in). Raises InputError for an unknown name."""
    from .zoo.registry import zoo_format

    return format_kind(zoo_format(name))


def entry(kind: KindDescriptor, task: Task) -> Callable[..., Any]:
    """The kind's entry point for ``task`` (imported now).

    Raises:
        RegistryError: the kind has no entry for the task (an InputError: exit 2), or its path does not load.
    """
    fn: Callable[..., Any] = kind.load_task(task)
    return fn
