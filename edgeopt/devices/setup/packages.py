"""What ``edgeopt devices setup`` installs for each runtime, and what it only names (vendor-only runtimes).

Pip-installable runtimes are installed into the device's venv; runtimes that only a vendor ships (JetPack's
TensorRT and its onnxruntime-gpu, Coral's libedgetpu + PyCoral, Core ML on macOS) are never attempted: the
report names the exact command instead. The import names checked are the agent probe's ``packages`` keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...enums import RuntimeName
from ...errors import InputError
from ...targets.schema import Target
from ..check import install_hint

# --runtimes spellings -> runtime: the runtime names, plus the pip package names users know them by.
ALIASES: dict[str, RuntimeName] = {
    **{r.value: r for r in RuntimeName},
    "ai-edge-litert": RuntimeName.TFLITE, "litert": RuntimeName.TFLITE, "tflite-runtime": RuntimeName.TFLITE,
    "onnxruntime-gpu": RuntimeName.ONNXRUNTIME, "trt": RuntimeName.TENSORRT,
}
NUMPY = "numpy"


@dataclass(frozen=True)
class RuntimeInstall:
    """How one runtime gets onto a device.

    Attributes:
        runtime: the runtime.
        requirements: pip requirements to install into the venv (empty for vendor-only or built-in runtimes).
        vendor: the exact command to run by hand when only a vendor provides it, else None.
    """

    runtime: RuntimeName
    requirements: tuple[str, ...] = ()
    vendor: str | None = None


def parse_runtimes(text: str | None) -> list[RuntimeName] | None:
    """``"onnxruntime,ai-edge-litert"`` -> runtimes (None when not given: the target's own are used).

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    if text is None:
        return None
    out: list[RuntimeName] = []
    for word in (w.strip().lower() for w in text.split(",")):
        if not word:
            continue
        if word not in ALIASES:
            raise InputError(f"--runtimes {word!r}: unknown runtime; known: {', '.join(sorted(ALIASES))}")
        if ALIASES[word] not in out:
            out.append(ALIASES[word])
    return out


def _kind(target: Target | None, arch: str) -> str:
    if target is not None and target.accelerator.startswith("edgetpu"):
        return "coral"
    if target is not None and (target.name.startswith("jetson") or
                               (arch == "aarch64" and target.accelerator.startswith("gpu"))):
        return "jetson"
    return "generic"


def install_plan(runtime: RuntimeName, *, target: Target | None, arch: str, python: tuple[int, int]) -> RuntimeInstall:
    """Pip requirements, or the vendor's command, for ``runtime`` on this kind of board."""
    kind = _kind(target, arch)
    if runtime is RuntimeName.NULL:
        return RuntimeInstall(runtime)
    if runtime in (RuntimeName.TENSORRT, RuntimeName.COREML):
        return RuntimeInstall(runtime, vendor=install_hint(runtime, target))
    if runtime is RuntimeName.ONNXRUNTIME:
        if kind == "jetson":
            return RuntimeInstall(runtime, vendor=install_hint(runtime, target))
        return RuntimeInstall(runtime, ("onnxruntime",))
    if runtime is RuntimeName.TFLITE:
        if kind == "coral":
            return RuntimeInstall(runtime, vendor="sudo apt-get install libedgetpu1-std python3-pycoral "
                                                  "(Coral's apt repository: https://coral.ai/software/#debian-packages)")
        return RuntimeInstall(runtime, ("ai-edge-litert",) if python >= (3, 9) else ("tflite-runtime",))
    if runtime is RuntimeName.OPENVINO:
        return RuntimeInstall(runtime, ("openvino",))
    return RuntimeInstall(runtime, vendor=install_hint(runtime, target))
