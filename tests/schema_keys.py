"""Recursive key paths of a JSON result, with the JSON types seen at each: the shape a schema test pins.

``levels[].recipe`` is the key ``recipe`` of every element of the list ``levels`` (the union over elements); a list
of scalars is a leaf (an empty one has the same shape). Free-form dicts whose keys are data, not schema (a quantizer
config, a level's details), are leaves named in ``leaves``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Dicts whose keys are data (quantizer options, extra facts, level names), not part of the schema.
FREE_FORM = ("config", "details", "runtime_options", "shapes", "temperature_c", "environment.runtimes",
             "sensor_facts", "extra", "beaten_by", "dominated_by",
             # the INT8 search's range repair record: keyed by calibration method and tensor name, and its rows
             # depend on how far the repair went on the data (docs/sweep.md, "Repairs before float")
             "range_repair",
             # the INT8 search's cost gate (keyed by runtime, its decisions by the steps that ran) and its seconds per
             # phase (keyed by the phases that ran): docs/sweep.md, "The cost gate"
             "cost_gate", "phase_seconds",
             # a float set's costliest nodes by the per-layer profile (node -> ms): docs/sweep.md
             "costliest")


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def key_types(doc: Any, *, leaves: Iterable[str] = FREE_FORM) -> dict[str, list[str]]:
    """``{path: sorted JSON types}`` of every key under ``doc`` (list elements merged under ``[]``)."""
    stop = tuple(leaves)
    seen: dict[str, set[str]] = {}

    def walk(value: Any, path: str) -> None:
        if path:
            seen.setdefault(path, set()).add(json_type(value))
        last = path.rsplit(".", 1)[-1].removesuffix("[]")
        if path and (last in stop or path in stop):
            return
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, (dict, list)):
                    walk(item, f"{path}[]")

    walk(doc, "")
    return {k: sorted(v) for k, v in sorted(seen.items())}
