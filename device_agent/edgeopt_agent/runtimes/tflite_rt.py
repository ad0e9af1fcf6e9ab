"""TensorFlow Lite / LiteRT: ``.tflite`` models on the CPU (XNNPACK) or a Coral Edge TPU.

The interpreter comes from the first package that imports: ``ai_edge_litert`` (LiteRT, current), then
``tflite_runtime`` (the older stand-alone wheel, still what Coral's Debian packages ship), then
``tensorflow.lite``. The one used is reported.

Edge TPU: the delegate ``libedgetpu`` is loaded when the option ``edgetpu`` is true, or, when the option is not
given, whenever the library is found on this machine (a Coral model then runs on the TPU; if the library is
there but no TPU answers, the run goes on on the CPU and says so). ``edgetpu: false`` forces the CPU.

An interpreter is not safe to run from two threads at once: the loading thread's interpreter serves the first
inference, the warm-up and a single-stream timed loop; with several streams each stream thread builds its own
interpreter on its first call.
"""

from __future__ import annotations

import ctypes
import platform
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..protocol import TensorInfo
from .base import Runtime, RuntimeMissing
from .options import Option

_EDGETPU_LIBS = {"Linux": "libedgetpu.so.1", "Darwin": "libedgetpu.1.dylib", "Windows": "edgetpu.dll"}


def _import_interpreter() -> Tuple[str, str, Any]:
    """(package, version, module with Interpreter and load_delegate) of the first interpreter found."""
    try:
        from ai_edge_litert import interpreter as litert

        return "ai_edge_litert", _dist_version("ai-edge-litert", litert), litert
    except ImportError:
        pass
    try:
        from tflite_runtime import interpreter as tflite_runtime

        return "tflite_runtime", _dist_version("tflite-runtime", tflite_runtime), tflite_runtime
    except ImportError:
        pass
    try:
        import tensorflow as tf

        return "tensorflow", str(tf.__version__), _TfLite(tf)
    except ImportError:
        pass
    raise RuntimeMissing(
        "no TFLite interpreter for this Python: pip install ai-edge-litert (or tflite-runtime on older "
        "boards; Coral: the python3-tflite-runtime and libedgetpu1-std packages from Coral's apt repository)"
    )


class _TfLite:
    """``tensorflow.lite`` seen through the same two names the stand-alone packages export."""

    def __init__(self, tf: Any) -> None:
        self.Interpreter = tf.lite.Interpreter
        self.load_delegate = tf.lite.experimental.load_delegate
        self.OpResolverType = getattr(tf.lite.experimental, "OpResolverType", None)


def _dist_version(dist: str, module: Any) -> str:
    try:
        from importlib.metadata import version

        return str(version(dist))
    except Exception:  # not installed as a distribution (e.g. a Debian package): the module may know
        import sys

        top = sys.modules.get(module.__name__.split(".")[0])
        return str(getattr(top, "__version__", "unknown"))


def _edgetpu_library() -> str:
    return _EDGETPU_LIBS.get(platform.system(), "libedgetpu.so.1")


def _edgetpu_loadable(lib: str) -> bool:
    try:
        ctypes.CDLL(lib)
    except OSError:
        return False
    return True


def _shape(detail: Dict[str, Any]) -> List[Any]:
    sig = detail.get("shape_signature")
    dims = sig if sig is not None and len(sig) == len(detail["shape"]) else detail["shape"]
    return [int(d) if int(d) >= 0 else None for d in dims]


def _quant(detail: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    scale, zero_point = detail.get("quantization") or (0.0, 0)
    if not scale:
        return None
    return {"name": detail["name"], "dtype": _dtype(detail), "scale": float(scale), "zero_point": int(zero_point)}


def _dtype(detail: Dict[str, Any]) -> str:
    import numpy as np

    return np.dtype(detail["dtype"]).name


class TfliteRuntime(Runtime):
    name = "tflite"
    formats = ("tflite",)
    # pycoral: the Edge TPU delegate's Python side (Coral boards)
    packages = (("ai_edge_litert", ("ai-edge-litert", "ai-edge-litert-nightly")),
                ("tflite_runtime", ("tflite-runtime", "tflite_runtime")), ("pycoral", ("pycoral",)))
    profile_unsupported = ("the TFLite/LiteRT Python Interpreter has no per-op profiler; on the device, run "
                           "TFLite's benchmark_model binary with --enable_op_profiling=true for per-op times")
    option_schema = (
        Option("edgetpu", "bool", "load the Edge TPU delegate (default: when libedgetpu is found; false: CPU)"),
        Option("edgetpu_device", "str", "which Edge TPU, e.g. usb:0 or pci:0 (default: the first)"),
        Option("xnnpack", "bool", "the XNNPACK CPU delegate (false: the reference kernels)", default=True),
    )

    def __init__(self) -> None:
        self._package, self._version, self._mod = _import_interpreter()
        self._path = ""
        self._kwargs: Dict[str, Any] = {}
        self._local = threading.local()
        self._primary: Any = None
        self._edgetpu: Dict[str, Any] = {}
        self._shapes: Dict[int, List[int]] = {}

    def version(self) -> str:
        return self._version

    def _delegates(self, options: Dict[str, Any]) -> List[Any]:
        wanted = options.get("edgetpu")
        lib = _edgetpu_library()
        if wanted is False:
            self._edgetpu = {"used": False, "reason": "edgetpu: false"}
            return []
        if not _edgetpu_loadable(lib):  # checked first: a failed load_delegate leaves a half-made Delegate behind
            if wanted:
                raise RuntimeError(
                    "the Edge TPU library %s is not installed: install libedgetpu1-std from Coral's apt repository "
                    "and plug in the Edge TPU, or pass edgetpu: false" % lib)
            self._edgetpu = {"used": False, "reason": "libedgetpu not found"}
            return []
        delegate_options = {}
        if options.get("edgetpu_device"):
            delegate_options["device"] = str(options["edgetpu_device"])
        try:
            delegate = self._mod.load_delegate(lib, delegate_options)
        except (ValueError, OSError, RuntimeError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if wanted:
                raise RuntimeError(
                    "cannot load the Edge TPU delegate %s (%s): install libedgetpu1-std from Coral's apt "
                    "repository and plug in the Edge TPU, or pass edgetpu: false" % (lib, reason)) from None
            self._edgetpu = {"used": False, "reason": "%s found but not loadable: %s" % (lib, reason)}
            return []
        self._edgetpu = {"used": True, "library": lib, "device": delegate_options.get("device", "default")}
        return [delegate]

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self.check_options(options)
        kwargs: Dict[str, Any] = {"model_path": model_path}
        if threads > 0:
            kwargs["num_threads"] = int(threads)
        delegates = self._delegates(options)
        if delegates:
            kwargs["experimental_delegates"] = delegates
        if options.get("xnnpack") is False:
            resolver = getattr(self._mod, "OpResolverType", None)
            if resolver is None:
                raise ValueError("xnnpack: false needs an interpreter with OpResolverType (tflite_runtime >= 2.5)")
            kwargs["experimental_op_resolver_type"] = resolver.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        self._path = model_path
        self._kwargs = kwargs
        try:
            interp = self._mod.Interpreter(**kwargs)
            interp.allocate_tensors()
        except (ValueError, RuntimeError) as exc:
            if "edgetpu-custom-op" in str(exc):
                raise RuntimeError(
                    "%s is compiled for the Edge TPU but no Edge TPU delegate is loaded: install libedgetpu1-std "
                    "and plug in the TPU, or benchmark the CPU model (before edgetpu_compiler)" % model_path
                ) from None
            raise
        self._primary = interp
        self._local.interp = interp

    def inputs(self) -> List[TensorInfo]:
        return [TensorInfo(name=d["name"], shape=_shape(d), dtype=_dtype(d))
                for d in self._primary.get_input_details()]

    def outputs(self) -> List[TensorInfo]:
        return [TensorInfo(name=d["name"], shape=_shape(d), dtype=_dtype(d))
                for d in self._primary.get_output_details()]

    def _interpreter(self) -> Any:
        """This thread's interpreter, resized like the primary one (built on a stream thread's first call)."""
        interp = self._mod.Interpreter(**self._kwargs)
        for index, shape in self._shapes.items():
            interp.resize_tensor_input(index, shape)
        interp.allocate_tensors()
        self._local.interp = interp
        return interp

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        import numpy as np

        details = self._primary.get_input_details()
        ordered = [(d["index"], np.ascontiguousarray(feeds[d["name"]])) for d in details]
        resized = False
        for d, (index, arr) in zip(details, ordered):
            if list(d["shape"]) != list(arr.shape):
                self._primary.resize_tensor_input(index, list(arr.shape))
                self._shapes[index] = list(arr.shape)
                resized = True
        if resized:
            self._primary.allocate_tensors()
        out_indexes = [d["index"] for d in self._primary.get_output_details()]
        local = self._local
        make = self._interpreter

        def infer() -> Any:
            interp = getattr(local, "interp", None)
            if interp is None:
                interp = make()
            for index, arr in ordered:
                interp.set_tensor(index, arr)
            interp.invoke()
            return [interp.get_tensor(i) for i in out_indexes]

        return infer

    def details(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"package": self._package, "edgetpu": dict(self._edgetpu)}
        if self._kwargs.get("num_threads"):
            out["num_threads"] = self._kwargs["num_threads"]
        if "experimental_op_resolver_type" in self._kwargs:
            out["xnnpack"] = False
        if self._primary is not None:
            quant = [q for q in (_quant(d) for d in self._primary.get_input_details()) if q]
            quant_out = [q for q in (_quant(d) for d in self._primary.get_output_details()) if q]
            if quant or quant_out:
                out["quantization"] = {"inputs": quant, "outputs": quant_out}
        return out
