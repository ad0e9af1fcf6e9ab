"""Model file formats: what a file is (by suffix, checked against its content) and which runtime runs it.

``edgeopt bench`` uses this to pick the agent runtime when none is given: the first runtime in the target's
``runtimes`` preference list that loads the model's format (for a detected target such as ``local``, any
runtime that loads it), and, for ONNX Runtime, the execution providers that suit the target.
"""

from __future__ import annotations

import hashlib
import importlib.util
import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from .enums import RuntimeName
from .errors import InputError, ModelLoadError
from .targets.schema import Target


class ModelFormat(str, Enum):
    """What a model file is. Values match ``passes.base.ArtifactFormat`` where both name the same thing."""

    ONNX = "onnx"
    OPENVINO_IR = "openvino_ir"  # model.xml + model.bin
    TFLITE = "tflite"
    TENSORRT_ENGINE = "tensorrt_engine"  # a serialized engine: specific to one GPU and TensorRT version
    COREML = "coreml"  # .mlpackage directory or .mlmodel file


# Which formats each runtime loads (the agent's runtimes; ``null`` loads anything and is never picked).
RUNTIME_FORMATS: dict[RuntimeName, frozenset[ModelFormat]] = {
    RuntimeName.ONNXRUNTIME: frozenset({ModelFormat.ONNX}),
    RuntimeName.OPENVINO: frozenset({ModelFormat.ONNX, ModelFormat.OPENVINO_IR}),
    RuntimeName.TFLITE: frozenset({ModelFormat.TFLITE}),
    RuntimeName.TENSORRT: frozenset({ModelFormat.ONNX, ModelFormat.TENSORRT_ENGINE}),
    RuntimeName.COREML: frozenset({ModelFormat.COREML}),
    RuntimeName.NULL: frozenset(ModelFormat),
}

# Order used for a detected target (``local``) when its own list has no runtime for the format.
_FALLBACK_ORDER = (RuntimeName.ONNXRUNTIME, RuntimeName.OPENVINO, RuntimeName.TFLITE, RuntimeName.TENSORRT,
                   RuntimeName.COREML)

_SUFFIXES = {
    ".onnx": ModelFormat.ONNX,
    ".xml": ModelFormat.OPENVINO_IR,
    ".tflite": ModelFormat.TFLITE,
    ".engine": ModelFormat.TENSORRT_ENGINE,
    ".plan": ModelFormat.TENSORRT_ENGINE,
    ".mlpackage": ModelFormat.COREML,
    ".mlmodel": ModelFormat.COREML,
}

_TFLITE_ID = b"TFL3"  # flatbuffer file identifier, bytes 4..8 of every .tflite file

CPU_EP = "CPUExecutionProvider"
# Target keywords -> ONNX Runtime execution providers preferred before the CPU, in order. A keyword matches the
# target's name or accelerator (case-insensitive; not the description, which for ``local`` is this CPU's name).
_EP_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("jetson", "nvidia", "cuda", "ampere", "maxwell", "volta"),
     ("TensorrtExecutionProvider", "CUDAExecutionProvider")),
    (("intel", "iris", "openvino"), ("OpenVINOExecutionProvider",)),
)


def _head(path: Path, n: int = 1024) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model {path} ({exc.strerror}): check the path and permissions") from None


def _is_tflite(head: bytes) -> bool:
    return len(head) >= 8 and head[4:8] == _TFLITE_ID


def _is_ir_xml(head: bytes) -> bool:
    return b"<net" in head


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
    suffix = path.suffix.lower()
    fmt = _SUFFIXES.get(suffix)
    if fmt is ModelFormat.COREML:
        if suffix == ".mlpackage" and not (path.is_dir() and (path / "Manifest.json").is_file()):
            raise ModelLoadError(f"{path} is not a Core ML package (a directory with Manifest.json): "
                                 "pass the .mlpackage directory coremltools saved")
        return fmt
    if path.is_dir():
        raise ModelLoadError(f"{path} is a directory, not a model file: pass the model file "
                             f"({', '.join(sorted(_SUFFIXES))})")
    head = _head(path)
    if fmt is ModelFormat.TFLITE and not _is_tflite(head):
        raise ModelLoadError(f"{path} is not a TFLite flatbuffer (no {_TFLITE_ID.decode()} identifier): "
                             "re-export it with the TFLite/LiteRT converter")
    if fmt is None:  # no known suffix: a marker decides; ONNX has none, so the rest is read as ONNX
        if _is_tflite(head):
            fmt = ModelFormat.TFLITE
        elif _is_ir_xml(head):
            fmt = ModelFormat.OPENVINO_IR
        else:
            return ModelFormat.ONNX
    if fmt is ModelFormat.OPENVINO_IR:
        if not _is_ir_xml(head):
            raise ModelLoadError(f"{path} is not an OpenVINO IR .xml (no <net> element): pass the .xml that "
                                 "openvino.save_model wrote")
        if not path.with_suffix(".bin").is_file():
            raise ModelLoadError(f"OpenVINO IR {path} has no weights file {path.with_suffix('.bin').name} next to "
                                 "it: keep the .xml and .bin together")
    return fmt


def model_files(path: str | Path, fmt: ModelFormat) -> list[Path]:
    """Every file that makes up the model (what a runner must copy): IR .xml + .bin, a package's files."""
    path = Path(path)
    if fmt is ModelFormat.OPENVINO_IR:
        return [path, path.with_suffix(".bin")]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path]


def model_digest(path: str | Path, fmt: ModelFormat) -> tuple[str, int]:
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


def runtimes_for(fmt: ModelFormat) -> list[RuntimeName]:
    """Runtimes that load ``fmt``, in the fallback order (never ``null``)."""
    return [r for r in _FALLBACK_ORDER if fmt in RUNTIME_FORMATS[r]]


def _installed_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def runtime_installed_here(runtime: RuntimeName) -> bool:
    """Whether ``runtime``'s library is importable by this Python (a cheap check: nothing is imported)."""
    if runtime is RuntimeName.NULL:
        return True
    if runtime is RuntimeName.TFLITE:
        return any(_installed_module(m) for m in ("ai_edge_litert", "tflite_runtime", "tensorflow"))
    if runtime is RuntimeName.TENSORRT:
        return _installed_module("tensorrt") and _installed_module("cuda")
    if runtime is RuntimeName.COREML:
        return platform.system() == "Darwin" and _installed_module("coremltools")
    return _installed_module(runtime.value)


def default_runtime(
    fmt: ModelFormat, target: Target, *, installed: Callable[[RuntimeName], bool] | None = None
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
    candidates: list[RuntimeName] = [
        r for r in target.runtimes if fmt in RUNTIME_FORMATS[r] and r is not RuntimeName.NULL
    ]
    if not candidates and target.detect:
        candidates = runtimes_for(fmt)
    if not candidates:
        loaders = ", ".join(r.value for r in runtimes_for(fmt))
        raise InputError(
            f"target {target.name} runs {', '.join(r.value for r in target.runtimes)}, none of which loads "
            f"{fmt.value} models: convert the model for this target, or pass --runtime ({loaders})"
        )
    if installed is not None:
        for runtime in candidates:
            if installed(runtime):
                return runtime
    return candidates[0]


def _matches(target: Target, keywords: Iterable[str]) -> bool:
    text = " ".join((target.name, target.accelerator)).lower()
    return any(k in text for k in keywords)


def default_onnxruntime_providers(target: Target, available: Sequence[str] | None = None) -> list[str]:
    """ONNX Runtime execution providers for ``target``, most preferred first, always ending with the CPU.

    Jetson (NVIDIA) targets prefer TensorRT then CUDA; Intel targets (``intel-nuc``) prefer OpenVINO; every
    other target uses the CPU provider.

    Args:
        target: the device target.
        available: providers of the onnxruntime build that will run (``onnxruntime.get_available_providers()``
            for a local run); None when unknown (a remote device): the full preferred list is returned and the
            agent drops what its build lacks (runtime option ``providers_fallback``).
    """
    preferred: list[str] = []
    for keywords, providers in _EP_RULES:
        if _matches(target, keywords):
            preferred.extend(p for p in providers if p not in preferred)
    preferred.append(CPU_EP)
    if available is None:
        return preferred
    return [p for p in preferred if p in available] or [CPU_EP]


def choose_runtime(
    fmt: ModelFormat,
    target: Target,
    runtime: str | None,
    runtime_options: Mapping[str, Any] | None,
    *,
    local: bool,
) -> tuple[str, dict[str, Any]]:
    """The agent runtime and its options for a run: the user's choice, or the target's default for ``fmt``.

    For ONNX Runtime without user-given ``providers``, the target's preferred execution providers are filled
    in: filtered to this machine's build for a local run; for a remote run the whole list goes with
    ``providers_fallback: true`` so the agent drops what its build lacks (and reports it).

    Raises:
        InputError: the runtime named does not load ``fmt``, or no runtime of the target does.
    """
    options = dict(runtime_options or {})
    if runtime is None:
        name = default_runtime(fmt, target, installed=runtime_installed_here if local else None).value
    else:
        name = runtime
        known = {r.value: r for r in RuntimeName}
        if name in known and fmt not in RUNTIME_FORMATS[known[name]]:
            loaders = ", ".join(r.value for r in runtimes_for(fmt))
            raise InputError(f"--runtime {name} does not load {fmt.value} models: use one of {loaders}, "
                             "or leave --runtime out to pick one from the target")
    if name == RuntimeName.ONNXRUNTIME.value and "providers" not in options:
        available: list[str] | None = None
        if local:
            import onnxruntime

            available = list(onnxruntime.get_available_providers())
        providers = default_onnxruntime_providers(target, available)
        if providers != [CPU_EP]:
            options["providers"] = providers
            if not local:
                options["providers_fallback"] = True
    return name, options
