"""A deployment's runtime options are data: checked against the runtime's option schema, and never a path.

``deployment.json``'s ``runtime_options`` used to be applied as is. An OpenVINO ``cache_dir`` set to an absolute
path (the file hashes untouched) made ``edgeopt bench <folder>`` and qualify ``optimized: <folder>`` write the
compiled blob there, on the host and on the device; ``../../X`` created a directory at the filesystem root. Now
every option is checked against the runtime's schema (:meth:`RuntimeDescriptor.check_options`) when the record is
read, and an option the schema marks as naming a path (``Option(path=True)``: OpenVINO ``cache_dir``, TensorRT
``engine_cache_dir``) is refused from a deployment file: a file chooses what runs, never where edgeopt writes
(docs/reliability.md, "Untrusted files"). On the command line such an option stays the user's choice
(``--runtime-option cache_dir=DIR --override-deployment``), and a sweep leaves it out of the folder it ships.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..registry import find_runtime, runtime_names
from .schema import Deployment

_FILE = "deployment.json"


def path_options(runtime: str) -> tuple[str, ...]:
    """The options of ``runtime`` that name a path (none for a runtime unknown here or without a schema)."""
    desc = find_runtime(runtime)
    if desc is None:
        return ()
    return tuple(o.name for o in desc.agent_class().option_schema or () if getattr(o, "path", False))


def shippable_options(runtime: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` without the ones that name a path: a cache directory is this machine's choice, not part of
    what was measured, and a deployment that names one would be refused where it is used."""
    drop = set(path_options(runtime))
    return {k: v for k, v in options.items() if k not in drop}


def measured_options(runtime: str, reported: Mapping[str, Any]) -> dict[str, Any]:
    """The runtime's own options (its schema's names, none naming a path) at the values its agent reported for a
    run (``runtime`` details: llama.cpp's ``n_ctx``, ``n_batch``, ``cache_type``, ...): what a deployment records
    so that it runs with the settings it was measured with, not with whatever a later agent's defaults are. Empty
    for a runtime unknown here or without a schema, or one that reports none of its options."""
    desc = find_runtime(runtime)
    if desc is None:
        return {}
    names = {o.name for o in desc.agent_class().option_schema or ()}
    return shippable_options(runtime, {k: v for k, v in reported.items() if k in names and v is not None})


def _may_be_path(value: Any) -> bool:
    """Whether an option value of a runtime without a schema could name a file or directory: a string with a path
    separator, a leading ``~`` or ``.``, or such a string inside a list or mapping."""
    if isinstance(value, str):
        return "/" in value or "\\" in value or value.startswith(("~", "."))
    if isinstance(value, Mapping):
        return any(_may_be_path(k) or _may_be_path(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_may_be_path(v) for v in value)
    return False


def options_problem(deployment: Deployment, record: Path) -> str | None:
    """What is wrong with the deployment's runtime and its options (one line naming the file, the option, the
    value and the fix), or None.

    Order: an unknown runtime, then an option naming a path (for a runtime without an option schema: any value
    that may name one), then anything the runtime's schema refuses (an unknown option, a value of the wrong type
    or outside its choices).
    """
    desc = find_runtime(deployment.runtime)
    if desc is None:
        return (f"{record}: runtime {deployment.runtime!r} is not registered here (known: "
                f"{', '.join(runtime_names())}); install the plug-in that provides it, or use a deployment for one "
                "of those")
    options = deployment.runtime_options
    for name in path_options(deployment.runtime):
        value = options.get(name)
        if value is not None:
            return (f"{record}: runtime_options.{name} {str(value)!r} names a path, which a deployment file may not "
                    f"set (edgeopt would write there); remove {name} from {_FILE}, and to use a directory of your "
                    f"own pass --runtime-option {name}=DIR --override-deployment")
    if desc.agent_class().option_schema is None:  # no schema says which options name a path: any that may is refused
        for name, value in options.items():
            if _may_be_path(value):
                return (f"{record}: runtime_options.{name} {str(value)[:200]!r} may name a path, and runtime "
                        f"{deployment.runtime!r} declares no option schema to say it does not (edgeopt could write "
                        f"there); remove {name} from {_FILE}, or pass --runtime-option {name}=VALUE "
                        "--override-deployment (docs/runtimes.md: declare an option schema with path=True)")
    try:
        desc.check_options(options)
    except InputError as exc:
        problem = str(exc).removeprefix("--runtime-option: ")
        return f"{record}: runtime_options: {problem}; restore it from the sweep's output or fix that option"
    return None
