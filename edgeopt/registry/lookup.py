"""Model file formats: what a file is (by suffix, checked against its content) and which runtime runs it.

``edgeopt bench`` uses this to pick the agent runtime when none is given: the first runtime in the target's
``runtimes`` preference list that loads the model's format (for a detected target such as ``local``, any
runtime that loads it), and, for a runtime with execution providers (ONNX Runtime), those that suit the
target's accelerator.

Every function here is a thin question to the descriptors of :mod:`edgeopt.registry`; nothing per format or
per runtime is written here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, ModelLoadError
from ..names import ModelFormat, RuntimeName
from ..targets.schema import Target
from . import (
    FormatDescriptor,
    delivering_runtime,
    find_runtime,
    format_for_suffix,
    format_registry,
    get_format,
    get_runtime,
    loaders,
    read_head,
    runtime_loads,
)

__all__ = [
    "ModelFormat", "choose_runtime", "default_onnxruntime_providers", "default_runtime", "detect_format",
    "format_of_kind", "model_digest", "model_files", "model_kind", "runtime_installed_here", "runtimes_for",
]


def _detected_by_content(head: bytes) -> FormatDescriptor:
    """For a file with no known suffix: the first format whose marker the content carries, else the fallback."""
    formats = format_registry().all()
    found = next((f for f in formats if f.marker(head)), None)
    return found or next(f for f in formats if f.fallback)


def _detect_directory(path: Path) -> ModelFormat:
    """A directory with no format suffix: the first directory format that claims it (an LLM folder), checked."""
    desc = next((f for f in format_registry().all() if f.directory and f.claims_directory(path)), None)
    if desc is None:
        suffixes = sorted(s for f in format_registry().all() for s in f.suffixes)
        raise ModelLoadError(
            f"{path} is a directory but no model folder: pass a model file ({', '.join(suffixes)}) or an LLM folder "
            "(Hugging Face config.json + safetensors + tokenizer, onnxruntime-genai genai_config.json, or "
            "OpenVINO GenAI openvino_model.xml); docs/llm.md")
    desc.check_directory(path)
    return ModelFormat(desc.name)


def detect_format(path: str | Path) -> ModelFormat:
    """The format of the model at ``path``, from its suffix, checked against its content where it has a marker.

    A file with no known suffix is TFLite or OpenVINO IR when its content says so, otherwise ONNX (which has no
    marker; loading it then says whether it really is ONNX).

    Raises:
        ModelLoadError: missing file, a suffix whose content does not match, or an IR without its ``.bin``.
    """
    path = Path(path)
    if not path.exists():
        raise ModelLoadError(f"model {path} not found: check the path")
    desc = format_for_suffix(path)
    if desc is not None and desc.directory:
        desc.check_directory(path)
        return ModelFormat(desc.name)
    if path.is_dir():
        return _detect_directory(path)
    head = read_head(path)
    desc = desc or _detected_by_content(head)
    desc.check_file(path, head)
    return ModelFormat(desc.name)


def model_kind(path: str | Path) -> str:
    """The model kind a command treats ``path`` as (its format's ``kind``), told cheaply, before any check: by suffix,
    or for a folder by the format whose ``entry_file`` it holds. A folder no format claims is taken as the kind of the
    folder formats (so that kind's branch says what is missing); any other file as the fallback format's kind (ONNX:
    loading says whether it is one). Commands dispatch on this, never on "is it a directory" (a GGUF is one file)."""
    path = Path(path)
    formats = format_registry().all()
    desc = format_for_suffix(path)
    if desc is None and path.is_dir():
        desc = next((f for f in formats if f.directory and f.claims_directory(path)), None)
        folder_kinds = {f.kind for f in formats if f.entry_file}
        if desc is None and len(folder_kinds) == 1:
            return folder_kinds.pop()
    if desc is None:
        desc = next(f for f in formats if f.fallback)
    return desc.kind


def format_of_kind(path: str | Path, kind: str, *, deployable: bool = False) -> str | None:
    """The registered format of model kind ``kind`` that ``path`` is in (a folder by the format whose ``entry_file``
    it holds, a file by its suffix), else None. ``deployable``: only a format some registered runtime delivers (one
    an agent runtime loads: not a Hugging Face source folder, which ``optimize`` exports first). A kind's own engine
    validates its input with this; commands dispatch on :func:`model_kind` (edgeopt.dispatch), never on it."""
    path = Path(path)
    if path.is_dir():
        desc = next((f for f in format_registry().all() if f.directory and f.claims_directory(path)), None)
    else:
        desc = format_for_suffix(path) if path.is_file() else None
    if desc is None or desc.kind != kind:
        return None
    if deployable and (not desc.deployable or delivering_runtime(desc.name) is None):
        return None
    return desc.name


def model_files(path: str | Path, fmt: ModelFormat | str) -> list[Path]:
    """Every file that makes up the model (what a runner must copy): IR .xml + .bin, ONNX external data, a
    package's files."""
    return get_format(get_format(fmt).file_format).files(Path(path))


def model_digest(path: str | Path, fmt: ModelFormat | str) -> tuple[str, int]:
    """(hex SHA-256, total size in bytes) over :func:`model_files`; for a directory the relative paths count."""
    path = Path(path)
    files = model_files(path, fmt)
    digest = hashlib.sha256()
    size = 0
    for f in files:
        if len(files) > 1:
            rel = f.relative_to(path) if path.is_dir() else Path(f.name)
            digest.update(rel.as_posix().encode() + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):  # noqa: B023 - fh is bound for this loop only
                digest.update(chunk)
        size += f.stat().st_size
    return digest.hexdigest(), size


def runtimes_for(fmt: ModelFormat | str) -> list[RuntimeName]:
    """Runtimes that load ``fmt``, in the fallback order (never ``null``)."""
    return [RuntimeName(r.name) for r in loaders(fmt)]


def runtime_installed_here(runtime: RuntimeName | str) -> bool:
    """Whether ``runtime``'s library is importable by this Python (a cheap check: nothing is imported)."""
    return get_runtime(runtime).installed_here()


def target_candidates(fmt: ModelFormat | str, target: Target) -> list[RuntimeName]:
    """The target's runtimes that load ``fmt`` and may be picked without --runtime, in its order of preference."""
    fmt_name = str(getattr(fmt, "value", fmt))
    return [r for r in target.runtimes if runtime_loads(r, fmt_name) and get_runtime(r).auto_select]


def default_runtime(
    fmt: ModelFormat | str, target: Target, *, installed: Callable[[RuntimeName], bool] | None = None
) -> RuntimeName:
    """The runtime to run a ``fmt`` model on ``target``: the first in its preference list that loads ``fmt``.

    Args:
        fmt: the model's format.
        target: the device target; its ``runtimes`` list is the order of preference.
        installed: for a local run, tells whether a runtime is installed here; the first preferred runtime
            that is installed wins (when none is, the first preferred one is returned and the agent says what
            to install). None (a remote device): no check.

    Raises:
        InputError: no runtime of the target loads ``fmt`` (a detected target such as ``local`` falls back to
            any runtime that loads it).
    """
    fmt_name = str(getattr(fmt, "value", fmt))
    candidates = target_candidates(fmt_name, target)
    if not candidates and target.detect:
        candidates = runtimes_for(fmt_name)
    if not candidates:
        loaders_text = ", ".join(r.value for r in runtimes_for(fmt_name))
        if not loaders_text:
            desc = get_format(fmt_name)
            fix = ("it is a source format: run edgeopt optimize on it for the target first" if not desc.deployable
                   else "install the runtime that loads it (edgeopt devices check lists the runtimes)")
            raise InputError(f"no registered runtime loads {fmt_name} models ({desc.summary}): {fix}")
        raise InputError(
            f"target {target.name} runs {', '.join(r.value for r in target.runtimes)}, none of which loads "
            f"{fmt_name} models: convert the model for this target, or pass --runtime ({loaders_text})"
        )
    if installed is not None:
        for runtime in candidates:
            if installed(runtime):
                return runtime
    return candidates[0]


def default_onnxruntime_providers(target: Target, available: Sequence[str] | None = None) -> list[str]:
    """ONNX Runtime execution providers for ``target``, most preferred first, always ending with the CPU.

    NVIDIA GPU targets (Jetson) prefer TensorRT then CUDA; Intel GPU targets (``intel-nuc``) prefer OpenVINO;
    every other target uses the CPU provider (the rules are the ``onnxruntime`` descriptor's ``providers``).

    Args:
        target: the device target.
        available: providers of the onnxruntime build that will run (``onnxruntime.get_available_providers()``
            for a local run); None when unknown (a remote device): the full preferred list is returned and the
            agent drops what its build lacks (runtime option ``providers_fallback``).
    """
    return get_runtime(RuntimeName.ONNXRUNTIME.value).preferred_providers(target, available)


def choose_runtime(
    fmt: ModelFormat | str,
    target: Target,
    runtime: str | None,
    runtime_options: Mapping[str, Any] | None,
    *,
    local: bool,
) -> tuple[str, dict[str, Any]]:
    """The agent runtime and its options for a run: the user's choice, or the target's default for ``fmt``.

    For a runtime with execution providers (ONNX Runtime) and no user-given providers, the target's preferred
    ones are filled in: filtered to this machine's build for a local run; for a remote run the whole list goes
    with ``providers_fallback: true`` so the agent drops what its build lacks (and reports it).

    Raises:
        InputError: the runtime named does not load ``fmt``, or no runtime of the target does; an option the
            runtime's schema does not know, or a bad value (checked here, before anything is sent).
    """
    fmt_name = str(getattr(fmt, "value", fmt))
    options = dict(runtime_options or {})
    if runtime is None:
        name = default_runtime(fmt_name, target, installed=runtime_installed_here if local else None).value
    else:
        name = runtime
        desc = find_runtime(name)
        if desc is not None and not runtime_loads(name, fmt_name):
            loaders_text = ", ".join(r.value for r in runtimes_for(fmt_name))
            raise InputError(f"--runtime {name} does not load {fmt_name} models: use one of {loaders_text}, "
                             "or leave --runtime out to pick one from the target")
    desc = find_runtime(name)
    if desc is not None:
        desc.check_options(options)
    key = desc.providers_option if desc is not None else None
    if desc is not None and key and key not in options:
        available = desc.available_providers() if local else None
        providers = desc.preferred_providers(target, available)
        if providers != [desc.fallback_provider]:
            options[key] = providers
            if not local:
                options[f"{key}_fallback"] = True
    return name, options
