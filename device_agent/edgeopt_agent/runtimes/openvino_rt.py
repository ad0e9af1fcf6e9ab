"""OpenVINO: ONNX or IR (.xml + .bin) compiled for CPU, GPU, NPU or AUTO; the devices really used are reported.

Each thread that runs inferences gets its own ``InferRequest`` (one request is not safe to run from two threads
at once): the loading thread's request serves the first inference, the warm-up and a single-stream timed loop;
with several streams each stream thread creates its request on its first call.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import static_shapes
from ..protocol import TensorInfo
from .base import LayerProfiler, Runtime, RuntimeMissing
from .options import Option

_DEVICES = ("CPU", "GPU", "NPU", "AUTO")
_HINTS = ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT")
_PRECISIONS = ("f32", "f16", "bf16")


def _device_ok(device: str) -> bool:
    """CPU, GPU.1, NPU, AUTO, AUTO:GPU,CPU, HETERO:GPU,CPU, MULTI:...: the plugin name decides."""
    head = device.split(":", 1)[0].split(".", 1)[0]
    return head in _DEVICES or head in ("HETERO", "MULTI", "BATCH")


def _shape(port: Any) -> List[Any]:
    return [d.get_length() if d.is_static else None for d in port.get_partial_shape()]


def _dtype(port: Any) -> str:
    try:
        return str(port.get_element_type().to_dtype())
    except Exception:  # element types numpy has no dtype for (e.g. u4): shown by OpenVINO's own name
        return str(port.get_element_type().get_type_name())


def _name(port: Any, index: int, kind: str) -> str:
    try:
        return str(port.get_any_name())
    except RuntimeError:  # an unnamed port (possible in hand-made IR)
        return "%s_%d" % (kind, index)


def _names(model_ports: Any, compiled_ports: Any, kind: str) -> List[str]:
    """Port names as the model file states them. Compiling can merge a tensor's names into the port (an FP16
    model's input ``x`` gains the name of the Cast that OpenVINO folded into it), and ``get_any_name`` then picks
    any of them: the read model's name is the one users and eval data know."""
    if len(model_ports) != len(compiled_ports):
        return [_name(p, i, kind) for i, p in enumerate(compiled_ports)]
    return [_name(p, i, kind) for i, p in enumerate(model_ports)]


class OpenVinoRuntime(Runtime):
    name = "openvino"
    formats = ("onnx", "openvino_ir")
    packages = (("openvino", ("openvino",)),)
    profile_unsupported = ""  # PERF_COUNT + get_profiling_info (openvino_profile.py)
    option_schema = (
        Option("device", "str", "OpenVINO device: CPU, GPU, NPU or AUTO (also GPU.1, AUTO:GPU,CPU, HETERO:...)",
               default="CPU", fold="upper"),
        Option("performance_hint", "str", "OpenVINO's performance hint", default="LATENCY", choices=_HINTS,
               fold="upper"),
        Option("inference_precision", "str", "precision of float layers (default: the device's, bf16 on AMX CPUs)",
               choices=_PRECISIONS, fold="lower"),
        Option("cache_dir", "str", "directory of OpenVINO's compiled-model cache", path=True),
        Option("num_streams", "str", "parallel inference streams: an integer or AUTO"),
        static_shapes.SCHEMA,
    )

    def __init__(self) -> None:
        try:
            import openvino
        except ImportError:
            raise RuntimeMissing(
                "openvino is not installed for this Python: pip install openvino "
                "(Intel CPUs, iGPUs and NPUs; arm64 wheels run on the CPU plugin only)"
            ) from None
        if not hasattr(openvino, "Core"):
            raise RuntimeMissing("openvino %s is too old for the agent: pip install 'openvino>=2023.1'"
                                 % getattr(openvino, "__version__", "?"))
        self._ov = openvino
        self._core: Any = None
        self._compiled: Any = None
        self._local = threading.local()
        self._requested: Dict[str, Any] = {}
        self._input_names: List[str] = []
        self._output_names: List[str] = []
        self._static: Dict[str, Any] = {}

    def version(self) -> str:
        return str(self._ov.get_version()).split("-", 1)[0]

    def _config(self, options: Dict[str, Any], threads: int) -> Tuple[str, Dict[str, Any]]:
        self.check_options(options)
        device = str(options.get("device") or "CPU").upper()
        if not _device_ok(device):
            raise ValueError("device %r: use one of %s (or AUTO:GPU,CPU)" % (device, ", ".join(_DEVICES)))
        hint = str(options.get("performance_hint") or "LATENCY").upper()
        config: Dict[str, Any] = {"PERFORMANCE_HINT": hint}
        head = device.split(":", 1)[0].split(".", 1)[0]
        if threads > 0 and head == "CPU":  # a CPU-plugin property: GPU and NPU plugins refuse it
            config["INFERENCE_NUM_THREADS"] = int(threads)
        precision = options.get("inference_precision")
        if precision is not None:
            config["INFERENCE_PRECISION_HINT"] = str(precision).lower()
        if options.get("num_streams") is not None:
            config["NUM_STREAMS"] = str(options["num_streams"])
        return device, config

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self._compile(model_path, options, threads, {})

    def _compile(self, model_path: str, options: Dict[str, Any], threads: int, extra: Dict[str, Any]) -> None:
        device, config = self._config(options, threads)
        config.update(extra)
        head = device.split(":", 1)[0].split(".", 1)[0]
        if model_path.lower().endswith(".xml"):
            weights = os.path.splitext(model_path)[0] + ".bin"
            if not os.path.isfile(weights):
                raise ValueError("OpenVINO IR %s has no weights file %s next to it: copy the .bin with the .xml"
                                 % (model_path, weights))

        core = self._ov.Core()
        if options.get("cache_dir"):
            core.set_property({"CACHE_DIR": str(options["cache_dir"])})
        available = list(core.available_devices)
        if head in ("CPU", "GPU", "NPU") and not any(d.split(".", 1)[0] == head for d in available):
            raise ValueError("OpenVINO device %s is not available here (available: %s): install its driver "
                             "or pass --ov-device CPU" % (device, ", ".join(available) or "none"))
        model = core.read_model(model_path)
        self._static = self._reshape(model, static_shapes.enabled(options))
        if not self._static["applied"] and "reshape_error" in self._static:
            model = core.read_model(model_path)  # a failed reshape may leave the model half changed
        self._compiled = core.compile_model(model, device, config)
        self._input_names = _names(model.inputs, self._compiled.inputs, "input")
        self._output_names = _names(model.outputs, self._compiled.outputs, "output")
        self._static["static"] = not static_shapes.dynamic(self.inputs())
        self._core = core
        self._requested = {"device_requested": device, "config": dict(config), "devices_available": available}
        if threads > 0 and head != "CPU":
            self._requested["threads_ignored"] = "threads apply to the CPU plugin only"
        self._local.request = self._compiled.create_infer_request()

    def profile(self, model_path: str, options: Dict[str, Any], threads: int) -> LayerProfiler:
        """Compile with ``PERF_COUNT``: each inference's ``get_profiling_info()`` is kept after ``record()``."""
        from .openvino_profile import OvProfiler

        self._compile(model_path, options, threads, {"PERF_COUNT": True})
        device = str(self._requested.get("device_requested", "CPU"))
        return OvProfiler(self._request, self._compiled, device)

    def _reshape(self, model: Any, on: bool) -> Dict[str, Any]:
        """Reshape ``model`` to the run's input shapes when all are known (static_shapes.py); what was done."""
        declared = [TensorInfo(name=_name(p, i, "input"), shape=_shape(p), dtype="")
                    for i, p in enumerate(model.inputs)]
        shapes, skipped = static_shapes.decide(declared, on, self.run_shapes)
        if shapes is None:
            return skipped
        try:
            model.reshape({port: self._ov.PartialShape(shapes[info.name])
                           for port, info in zip(model.inputs, declared)})
        except Exception as exc:  # a graph with shapes baked into Reshape nodes: compile it dynamic instead
            text = str(exc).strip().splitlines()
            return static_shapes.report(False, None, "OpenVINO could not reshape the model; compiled dynamic",
                                        reshape_error=text[0] if text else type(exc).__name__)
        return static_shapes.report(True, shapes, "")

    def inputs(self) -> List[TensorInfo]:
        return [TensorInfo(name=self._input_names[i], shape=_shape(p), dtype=_dtype(p))
                for i, p in enumerate(self._compiled.inputs)]

    def outputs(self) -> List[TensorInfo]:
        return [TensorInfo(name=self._output_names[i], shape=_shape(p), dtype=_dtype(p))
                for i, p in enumerate(self._compiled.outputs)]

    def _request(self) -> Any:
        req = getattr(self._local, "request", None)
        if req is None:
            req = self._compiled.create_infer_request()
            self._local.request = req
        return req

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        # Inputs by position, in the compiled model's order: names may be missing or duplicated in IR.
        names = [info.name for info in self.inputs()]
        ordered = [feeds[n] for n in names]
        local = self._local
        make = self._request

        def infer() -> Any:
            req = getattr(local, "request", None)
            if req is None:
                req = make()
            return req.infer(ordered, share_inputs=True).to_tuple()

        return infer

    def _property(self, key: str) -> Optional[Any]:
        try:
            value = self._compiled.get_property(key)
        except Exception:  # a property this device or version does not expose
            return None
        if isinstance(value, (list, tuple)):
            return [str(v) for v in value]
        if hasattr(value, "get_type_name"):  # an element type (INFERENCE_PRECISION_HINT): "f32", "bf16"
            return str(value.get_type_name())
        return value if isinstance(value, (int, float, bool)) else str(value)

    def details(self) -> Dict[str, Any]:
        if self._compiled is None:
            return {}
        out = dict(self._requested)
        out["static_shapes"] = dict(self._static)
        out["devices_used"] = self._property("EXECUTION_DEVICES")
        out["performance_hint"] = self._property("PERFORMANCE_HINT")
        out["inference_num_threads"] = self._property("INFERENCE_NUM_THREADS")
        out["inference_precision"] = self._property("INFERENCE_PRECISION_HINT")
        out["num_streams"] = self._property("NUM_STREAMS")
        out["optimal_infer_requests"] = self._property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
        names: Dict[str, str] = {}
        for dev in self._requested.get("devices_available", []):
            try:
                names[dev] = str(self._core.get_property(dev, "FULL_DEVICE_NAME"))
            except Exception:
                continue
        out["device_names"] = names
        return out
