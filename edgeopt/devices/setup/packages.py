"""What ``edgeopt devices setup`` installs for each runtime, and what it only names (vendor-only runtimes).

Read from the runtime descriptors (``edgeopt/registry/runtimes/*.py``: their ``setup`` rules and
``setup_aliases``), so a new runtime is still one new file. Pip-installable runtimes are installed into the
device's venv; runtimes that only a vendor ships (JetPack's TensorRT and its onnxruntime-gpu, Coral's
libedgetpu + PyCoral, Core ML on macOS) are never attempted: the report names the exact command instead. The
import names checked are the agent probe's ``packages`` keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from ...names import RuntimeName
from ...registry import get_runtime, runtime_registry
from ...targets.schema import Target

NUMPY = "numpy"


@dataclass(frozen=True)
class RuntimeInstall:
    """How one runtime gets onto a device.

    Attributes:
        runtime: the runtime.
        requirements: pip requirements to install into the venv (empty for vendor-only or built-in runtimes).
        vendor: the exact command to run by hand when only a vendor provides it, else None.
        compiles: the requirements are source only: built once per platform and CPU (:mod:`.built_wheels`).
        build_env: the build's environment on the device (e.g. ``CMAKE_ARGS``).
    """

    runtime: RuntimeName
    requirements: tuple[str, ...] = ()
    vendor: str | None = None
    compiles: bool = False
    build_env: tuple[tuple[str, str], ...] = ()


def aliases() -> dict[str, RuntimeName]:
    """``--runtimes`` spellings -> runtime: every registered runtime's name (plug-ins too), its setup aliases and
    its pip names."""
    out: dict[str, RuntimeName] = {}
    for desc in runtime_registry().all():
        runtime = RuntimeName(desc.name)
        for word in (desc.name, *desc.setup_aliases, *(req for rule in desc.setup for req in rule.pip)):
            out.setdefault(word.lower(), runtime)
    return out


def parse_runtimes(text: str | None) -> list[RuntimeName] | None:
    """``"onnxruntime,ai-edge-litert"`` -> runtimes (None when not given: the target's own are used).

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    if text is None:
        return None
    names = aliases()
    out: list[RuntimeName] = []
    for word in (w.strip().lower() for w in text.split(",")):
        if not word:
            continue
        if word not in names:
            raise InputError(f"--runtimes {word!r}: unknown runtime; known: {', '.join(sorted(names))}")
        if names[word] not in out:
            out.append(names[word])
    return out


def install_plan(runtime: RuntimeName, *, target: Target | None, arch: str, python: tuple[int, int]) -> RuntimeInstall:
    """Pip requirements, or the vendor's command, for ``runtime`` on this kind of board (its descriptor's rules)."""
    desc = get_runtime(runtime)
    requirements, vendor = desc.setup_plan(target, arch, python)
    rule = desc.setup_rule(target, arch, python)
    compiles = bool(rule is not None and rule.compiles and requirements)
    env = tuple(sorted(rule.build_env.items())) if rule is not None and compiles else ()
    return RuntimeInstall(runtime, requirements, vendor, compiles, env)
