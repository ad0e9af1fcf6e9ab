"""The one registry of what edgeopt knows per model format and per runtime: a descriptor each.

A format descriptor (:class:`FormatDescriptor`) says how a file is recognised, which files make up a model,
which pass makes it and which runtimes prove it on the host. A runtime descriptor (:class:`RuntimeDescriptor`)
says which formats it loads, what to install on which board, its execution providers per accelerator kind and
whether the host can run it. Everything that used to be a table or an ``if`` chain per format or runtime
(detection, runtime choice, conversion planning, validation, ``devices check``, the SSH model bundle) asks here.

Built-ins are listed below (lazy ``module:DESCRIPTOR`` paths); third-party packages add theirs through the
``edgeopt.runtimes`` and ``edgeopt.formats`` entry-point groups (:mod:`edgeopt.registry.plugins`). A name registered
twice is an error; an unknown one lists the known ones ("did you mean").
"""

from __future__ import annotations

import functools
from pathlib import Path

from ..config import from_environment
from .flag_spec import Flag
from .format_spec import ConversionSource, FormatDescriptor, read_head
from .kind_spec import GENERATIVE, TENSOR, KindDescriptor, MetricSpec
from .lazy import LazyRegistry, RegistryError
from .plugins import entry_points
from .runtime_spec import ExtraPackage, InstallHint, ProviderRule, RuntimeDescriptor

FORMATS_GROUP = "edgeopt.formats"
RUNTIMES_GROUP = "edgeopt.runtimes"
KINDS_GROUP = "edgeopt.kinds"

# Model kinds: what a format's models are and which agent command measures them (registry/kind_spec.py).
BUILTIN_KINDS: dict[str, str] = {
    "tensor": "edgeopt.registry.kinds.tensor:DESCRIPTOR",
    "generative": "edgeopt.registry.kinds.generative:DESCRIPTOR",
}

# Order matters where formats are tried in turn: a file with no known suffix is matched by content markers in
# this order (TFLite before OpenVINO IR), then read as the fallback format (ONNX).
BUILTIN_FORMATS: dict[str, str] = {
    "onnx": "edgeopt.registry.formats.onnx:DESCRIPTOR",
    "pytorch": "edgeopt.registry.formats.pytorch:DESCRIPTOR",
    "tflite": "edgeopt.registry.formats.tflite:DESCRIPTOR",
    "openvino_ir": "edgeopt.registry.formats.openvino_ir:DESCRIPTOR",
    "coreml": "edgeopt.registry.formats.coreml:DESCRIPTOR",
    "tensorrt_onnx": "edgeopt.registry.formats.tensorrt_onnx:DESCRIPTOR",
    "tensorrt_engine": "edgeopt.registry.formats.tensorrt_engine:DESCRIPTOR",
    # LLM folders, told by their key file (an OpenVINO GenAI or onnxruntime-genai export also holds config.json,
    # so they come before the Hugging Face folder); docs/llm.md.
    "openvino_genai": "edgeopt.registry.formats.openvino_genai:DESCRIPTOR",
    "onnxruntime_genai": "edgeopt.registry.formats.onnxruntime_genai:DESCRIPTOR",
    "gguf": "edgeopt.registry.formats.gguf:DESCRIPTOR",
    "hf_llm": "edgeopt.registry.formats.hf_llm:DESCRIPTOR",
}
# Order is the fallback preference: a detected target (``local``) with no runtime of its own for a format takes
# the first runtime here that loads it.
BUILTIN_RUNTIMES: dict[str, str] = {
    "onnxruntime": "edgeopt.registry.runtimes.onnxruntime:DESCRIPTOR",
    "openvino": "edgeopt.registry.runtimes.openvino:DESCRIPTOR",
    "tflite": "edgeopt.registry.runtimes.tflite:DESCRIPTOR",
    "tensorrt": "edgeopt.registry.runtimes.tensorrt:DESCRIPTOR",
    "coreml": "edgeopt.registry.runtimes.coreml:DESCRIPTOR",
    "null": "edgeopt.registry.runtimes.null:DESCRIPTOR",
    "onnxruntime_genai": "edgeopt.registry.runtimes.onnxruntime_genai:DESCRIPTOR",
    "openvino_genai": "edgeopt.registry.runtimes.openvino_genai:DESCRIPTOR",
    "llama_cpp": "edgeopt.registry.runtimes.llama_cpp:DESCRIPTOR",
}


def _with_plugins(registry: LazyRegistry[object], group: str) -> None:
    for entry in entry_points(group):
        registry.register(entry.name, entry.value, origin=f"entry point in {group}")


@functools.lru_cache(maxsize=8)
def _formats(plugin_path: tuple[Path, ...]) -> LazyRegistry[FormatDescriptor]:
    registry = LazyRegistry("format", FormatDescriptor, BUILTIN_FORMATS)
    _with_plugins(registry, FORMATS_GROUP)  # type: ignore[arg-type]
    return registry


@functools.lru_cache(maxsize=8)
def _runtimes(plugin_path: tuple[Path, ...]) -> LazyRegistry[RuntimeDescriptor]:
    registry = LazyRegistry("runtime", RuntimeDescriptor, BUILTIN_RUNTIMES)
    _with_plugins(registry, RUNTIMES_GROUP)  # type: ignore[arg-type]
    return registry


@functools.lru_cache(maxsize=8)
def _kinds(plugin_path: tuple[Path, ...]) -> LazyRegistry[KindDescriptor]:
    registry = LazyRegistry("model kind", KindDescriptor, BUILTIN_KINDS)
    _with_plugins(registry, KINDS_GROUP)  # type: ignore[arg-type]
    return registry


def kind_registry() -> LazyRegistry[KindDescriptor]:
    """Built-in and plug-in model kinds (cached per ``EDGEOPT_PLUGIN_PATH`` value)."""
    return _kinds(from_environment().plugin_path)


def get_kind(name: str) -> KindDescriptor:
    """The descriptor of model kind ``name``. Raises RegistryError when unknown."""
    return kind_registry().get(name)


def builtin_kind(name: str) -> KindDescriptor:
    """The descriptor of built-in kind ``name``, read without the plug-ins (what a module declares at import, e.g. the
    qualify spec's block of a built-in kind). Raises RegistryError when it is not a built-in."""
    return LazyRegistry("model kind", KindDescriptor, BUILTIN_KINDS).get(name)


def format_kind(fmt: str) -> KindDescriptor:
    """The kind of a ``fmt`` model (the format's ``kind``)."""
    return get_kind(get_format(str(getattr(fmt, "value", fmt))).kind)


def runtimes_of_kind(kind: str) -> list[RuntimeDescriptor]:
    """Every registered runtime that serves ``kind``, in registry order."""
    return [r for r in runtime_registry().all() if r.serves(kind)]


def exporting_runtimes(kind: str) -> list[RuntimeDescriptor]:
    """Runtimes of ``kind`` whose models edgeopt exports itself (an ``exporter`` with ``levels``): what an LLM
    ``optimize`` and sweep build."""
    return [r for r in runtimes_of_kind(kind) if r.exporter is not None and r.levels]


def delivering_runtime(fmt: str) -> RuntimeDescriptor | None:
    """The runtime whose native format ``fmt`` is (its ``delivers``) among those that load it, or None."""
    name = str(getattr(fmt, "value", fmt))
    return next((r for r in runtime_registry().all() if r.delivers == name and runtime_loads(r.name, name)), None)


def format_registry() -> LazyRegistry[FormatDescriptor]:
    """Built-in and plug-in formats (cached per ``EDGEOPT_PLUGIN_PATH`` value).

    Raises:
        RegistryError: an entry point reuses a name.
    """
    return _formats(from_environment().plugin_path)


def runtime_registry() -> LazyRegistry[RuntimeDescriptor]:
    """Built-in and plug-in runtimes (cached per ``EDGEOPT_PLUGIN_PATH`` value).

    Raises:
        RegistryError: an entry point reuses a name.
    """
    return _runtimes(from_environment().plugin_path)


def format_names() -> list[str]:
    """Every registered format name (built-ins first)."""
    return format_registry().names()


def runtime_names() -> list[str]:
    """Every registered runtime name (built-ins first, in fallback order)."""
    return runtime_registry().names()


def get_format(name: str) -> FormatDescriptor:
    """The descriptor of format ``name`` (a ``ModelFormat`` works too). Raises RegistryError when unknown."""
    return format_registry().get(name)


def get_runtime(name: str) -> RuntimeDescriptor:
    """The descriptor of runtime ``name`` (a ``RuntimeName`` works too). Raises RegistryError when unknown."""
    return runtime_registry().get(name)


def find_runtime(name: str) -> RuntimeDescriptor | None:
    """The descriptor of runtime ``name``, or None when no runtime of that name is registered."""
    return runtime_registry().find(name)


def runtime_loads(runtime: str, fmt: str) -> bool:
    """Whether ``runtime`` loads ``fmt``: its descriptor lists the format, or the format names the runtime."""
    desc = get_runtime(runtime)
    if desc.loads(fmt):
        return True
    found = format_registry().find(fmt)
    return found is not None and desc.name in found.loaded_by


def loaders(fmt: str, *, auto_only: bool = True) -> list[RuntimeDescriptor]:
    """Runtimes that load ``fmt``, in fallback order; ``auto_only`` leaves out those never picked (null)."""
    return [r for r in runtime_registry().all()
            if runtime_loads(r.name, fmt) and (r.auto_select or not auto_only)]


def format_for_suffix(path: Path) -> FormatDescriptor | None:
    """The format whose suffixes name ``path`` (no content check), or None."""
    suffix = path.suffix.lower()
    return next((f for f in format_registry().all() if suffix in f.suffixes), None)


def files_by_suffix(path: Path) -> list[Path]:
    """Every file of the model at ``path``, its format told by the suffix alone (no content check): a directory's
    files; the file and its format's companions (ONNX external data, an IR ``.bin``); an unknown suffix alone."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    desc = format_for_suffix(path)
    return desc.files(path) if desc is not None else [path]


def converters() -> dict[str, str]:
    """Format name -> the pass that makes it, for every format with a converter."""
    return {f.name: f.converter for f in format_registry().all() if f.converter}


__all__ = [
    "BUILTIN_FORMATS", "BUILTIN_KINDS", "BUILTIN_RUNTIMES", "FORMATS_GROUP", "GENERATIVE", "KINDS_GROUP",
    "RUNTIMES_GROUP", "TENSOR",
    "ConversionSource", "ExtraPackage", "Flag", "FormatDescriptor", "InstallHint", "KindDescriptor", "LazyRegistry",
    "MetricSpec", "ProviderRule", "RegistryError", "RuntimeDescriptor", "builtin_kind", "converters",
    "delivering_runtime", "exporting_runtimes", "files_by_suffix", "find_runtime", "format_for_suffix", "format_kind",
    "format_names", "format_registry", "get_format", "get_kind", "get_runtime", "kind_registry", "loaders",
    "read_head", "runtime_loads", "runtime_names", "runtime_registry", "runtimes_of_kind",
]
