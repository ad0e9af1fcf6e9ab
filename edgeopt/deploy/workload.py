"""A deployment's workload: the kind's workload settings it was measured with (``deployment.json``'s ``workload``).

Every kind declares its workload settings as one typed model (:attr:`KindDescriptor.workload
<edgeopt.registry.kind_spec.KindDescriptor.workload>`: a plug-in streaming kind's frame duration, ...). A
deployment records the values it was measured with, by field name, and the record is checked against that model
when it is read (a key the model does not know, a value it refuses, a workload for a kind that takes none: exit 2
naming the file). :func:`recorded_workload` gives the record with the model's defaults filled in, the values a run
of the deployment applies; :func:`edgeopt.deploy.use.deployed_workload` checks a given setting against them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import InputError
from ..registry import KindDescriptor, format_kind
from .schema import Deployment

_FILE = "deployment.json"


def deployment_kind(deployment: Deployment) -> KindDescriptor:
    """The kind of the deployment's model (its format's). Raises RegistryError for a format not registered here."""
    return format_kind(deployment.format)


def workload_problem(deployment: Deployment, record: Path) -> str | None:
    """What is wrong with the deployment's recorded workload (one line naming the file, the key, the value and the
    fix), or None (also when it records none)."""
    if deployment.workload is None:
        return None
    try:
        kind = deployment_kind(deployment)
        model = kind.load_workload()
    except InputError as exc:  # a RegistryError: a format not registered here, a workload model that does not load
        return f"{record}: workload: {exc}; install the plug-in of its kind, or remove workload from {_FILE}"
    if model is None:
        return (f"{record}: workload {_text(deployment.workload)} but kind {kind.name} takes no workload settings; "
                f"remove workload from {_FILE}")
    try:
        model.model_validate(deployment.workload)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(workload)"
        got = f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else ""
        return (f"{record}: workload.{key}: {err['msg']}{got}; kind {kind.name}'s workload fields: "
                f"{', '.join(model.model_fields)}; restore it from the sweep's output or fix that field")
    return None


def recorded_workload(deployment: Deployment, model: type[BaseModel]) -> dict[str, Any]:
    """The recorded workload as ``model`` reads it, its defaults filled in (JSON values, by field name): what a run
    of the deployment applies. The record was checked when it was read (:func:`workload_problem`)."""
    return model.model_validate(deployment.workload or {}).model_dump(mode="json")


def normalized(model: type[BaseModel], base: dict[str, Any], key: str, value: Any) -> Any | None:
    """``value`` of field ``key`` as ``model`` reads it (a CLI string '10' -> 10, a list -> the JSON of a tuple), in
    ``base`` (the other fields' values); None when the model refuses it (the command reports that itself)."""
    try:
        return model.model_validate({**base, key: value}).model_dump(mode="json")[key]
    except ValidationError:
        return None


def _text(workload: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in workload.items()) or "{}"
