"""TensorRT (Jetson, NVIDIA GPUs): builds an engine from ONNX on the device, caches it, runs it with cuda-python.

An engine is specific to the GPU and the TensorRT version it was built with, so the agent builds it where it
runs: from an ``.onnx`` file, with the ``fp16`` / ``int8`` builder flags asked for (INT8 needs a QDQ model or the
layers without scales stay in higher precision; the per-layer precisions in the result show what happened).
The serialized engine is cached next to the model (or in ``engine_cache_dir``), keyed by the model's SHA-256,
the precision flags, the batch profile and the TensorRT version; a rerun of the same model only deserializes.
An ``.engine`` / ``.plan`` file is loaded as it is.

Execution uses the name-based tensor API (TensorRT >= 8.5: JetPack 5.1 and later) and ``cuda-python`` for
memory and streams (no pycuda, no torch). Each thread that runs inferences gets its own execution context,
CUDA stream and device buffers.

Requires: the ``tensorrt`` Python package (JetPack's ``python3-libnvinfer``, or ``pip install tensorrt`` on
x86) and ``cuda-python`` matching the CUDA version of the device.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..protocol import TensorInfo
from .base import LayerProfiler, ProfileUnsupported, Runtime, RuntimeMissing
from .options import Option
from .tensorrt_engine import _atomic_write, _sha256, engine_cache_path, summarize_layers


def _import_cudart() -> Any:
    try:
        from cuda.bindings import runtime as cudart  # cuda-python >= 12.6

        return cudart
    except ImportError:
        pass
    try:
        from cuda import cudart  # older cuda-python

        return cudart
    except ImportError:
        raise RuntimeMissing(
            "cuda-python is not installed for this Python: pip install 'cuda-python==X.Y.*' with X.Y the "
            "device's CUDA version (nvcc --version; JetPack 6: 12.x, JetPack 5: 11.4)"
        ) from None


class _Slot:
    """One thread's execution context, CUDA stream and buffers."""

    def __init__(self, context: Any, stream: Any) -> None:
        self.context = context
        self.stream = stream
        self.inputs: List[Tuple[int, Any, int]] = []  # (device ptr, host array, nbytes)
        self.outputs: List[Tuple[int, Any, int]] = []
        self.shapes: Dict[str, Tuple[int, ...]] = {}


class TensorRtRuntime(Runtime):
    name = "tensorrt"
    formats = ("onnx", "tensorrt_onnx", "tensorrt_engine")
    packages = (("tensorrt", ("tensorrt", "tensorrt-cu12", "tensorrt-cu11", "tensorrt_libs")),)
    #: Suffixes of a serialized engine (loaded as it is, never built); the host's ``tensorrt_engine`` format
    #: recognises a file by them too.
    engine_suffixes = (".engine", ".plan", ".trt")
    option_schema = (
        Option("fp16", "bool", "let the builder pick FP16 kernels", default=False),
        Option("int8", "bool", "let the builder pick INT8 kernels (needs a QDQ model)", default=False),
        Option("batch", "int", "batch of the optimization profile for a dynamic leading dim", default=1),
        Option("workspace_mb", "int", "builder workspace limit, MiB (default: TensorRT's)"),
        Option("engine_cache_dir", "str", "where built engines are cached (default: next to the model)",
               path=True),
        Option("rebuild", "bool", "build the engine even when a cached one matches", default=False),
        Option("dla_core", "int", "build for this DLA core (Jetson AGX/NX), GPU fallback on"),
    )
    profile_unsupported = ""  # IProfiler on the execution context (tensorrt_profile.py)

    def __init__(self) -> None:
        try:
            import tensorrt
        except ImportError:
            raise RuntimeMissing(
                "tensorrt is not importable by this Python: on Jetson it comes with JetPack "
                "(sudo apt install python3-libnvinfer; in a venv use --system-site-packages); "
                "on x86 with an NVIDIA GPU: pip install tensorrt; plus pip install cuda-python"
            ) from None
        self._trt = tensorrt
        self._cudart = _import_cudart()
        self._engine: Any = None
        self._runtime: Any = None  # must outlive the engine it deserialized
        self._logger: Any = None
        self._local = threading.local()
        self._names: List[str] = []
        self._input_names: List[str] = []
        self._facts: Dict[str, Any] = {}
        self._primary: Optional[_Slot] = None
        self._layers: Optional[Dict[str, Any]] = None
        self._lock = threading.Lock()

    def version(self) -> str:
        return str(self._trt.__version__)

    # ---- CUDA helpers -------------------------------------------------------------------------------------
    def _cuda(self, result: Any, what: str) -> Any:
        err = result[0]
        if err != self._cudart.cudaError_t.cudaSuccess:
            raise RuntimeError("CUDA %s failed: %s" % (what, err))
        return result[1] if len(result) == 2 else None

    # ---- build and cache ----------------------------------------------------------------------------------
    def _cache_path(self, model_path: str, options: Dict[str, Any], precision: str, batch: int) -> str:
        return engine_cache_path(model_path, self._facts["model_sha256"], precision, batch, self.version(),
                                 cache_dir=options.get("engine_cache_dir"), dla_core=options.get("dla_core"))

    def _build(self, model_path: str, options: Dict[str, Any], batch: int) -> bytes:
        trt = self._trt
        builder = trt.Builder(self._logger)
        flags = 0
        explicit = getattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH", None)
        if explicit is not None and int(self.version().split(".")[0]) < 10:
            flags = 1 << int(explicit)  # TensorRT 8: explicit batch must be asked for; 10 has only that
        network = builder.create_network(flags)
        parser = trt.OnnxParser(network, self._logger)
        if hasattr(parser, "parse_from_file"):
            ok = parser.parse_from_file(model_path)  # resolves external weights next to the model
        else:
            with open(model_path, "rb") as fh:
                ok = parser.parse(fh.read())
        if not ok:
            errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
            raise RuntimeError("TensorRT's ONNX parser refused %s: %s" % (model_path, errors[0] if errors else "?"))
        config = builder.create_builder_config()
        if options.get("workspace_mb"):
            config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(options["workspace_mb"]) << 20)
        for flag, fix in (("fp16", "convert the ONNX to FP16 first (ModelOpt AutoCast)"),
                          ("int8", "quantize the ONNX with QDQ nodes first")):
            if not options.get(flag):
                continue
            if not hasattr(trt.BuilderFlag, flag.upper()):  # TensorRT 11: strongly typed networks only
                raise ValueError("TensorRT %s has no %s builder flag (precision comes from the model's types): %s "
                                 "and build without %s" % (self.version(), flag.upper(), fix, flag))
            config.set_flag(getattr(trt.BuilderFlag, flag.upper()))
        if options.get("fp16") and not getattr(builder, "platform_has_fast_fp16", True):
            self._facts["fp16_note"] = "this GPU has no fast FP16: layers may stay FP32"
        if options.get("dla_core") is not None:
            config.default_device_type = trt.DeviceType.DLA
            config.DLA_core = int(options["dla_core"])
            config.set_flag(trt.BuilderFlag.GPU_FALLBACK)
        if hasattr(trt, "ProfilingVerbosity"):
            config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED  # per-layer precision in the inspector
        dynamic = False
        profile = builder.create_optimization_profile()
        for i in range(network.num_inputs):
            tensor = network.get_input(i)
            shape = list(tensor.shape)
            if any(d < 0 for d in shape[1:]):
                raise ValueError("input %r of %s has dynamic dims %s beyond the batch axis: export the ONNX with "
                                 "static shapes for TensorRT" % (tensor.name, model_path, shape))
            if shape and shape[0] < 0:
                dynamic = True
                fixed = shape[1:]
                profile.set_shape(tensor.name, [1] + fixed, [batch] + fixed, [batch] + fixed)
        if dynamic:
            config.add_optimization_profile(profile)
        t0 = time.perf_counter()
        serialized = builder.build_serialized_network(network, config)
        self._facts["build_time_s"] = round(time.perf_counter() - t0, 3)
        if serialized is None:
            raise RuntimeError("TensorRT could not build an engine from %s (its log on stderr says why)" % model_path)
        return bytes(serialized)

    def _engine_bytes(self, model_path: str, options: Dict[str, Any]) -> bytes:
        if model_path.lower().endswith(self.engine_suffixes):
            self._facts["engine_cache"] = "not used (a prebuilt engine file)"
            self._facts["engine_path"] = model_path
            with open(model_path, "rb") as fh:
                return fh.read()
        fp16, int8 = bool(options.get("fp16")), bool(options.get("int8"))
        precision = "int8-fp16" if (int8 and fp16) else "int8" if int8 else "fp16" if fp16 else "fp32"
        batch = int(options.get("batch") or 1)
        if batch < 1:
            raise ValueError("batch must be >= 1 (got %d)" % batch)
        self._facts.update({"precision_flags": precision, "model_sha256": _sha256(model_path), "profile_batch": batch})
        path = self._cache_path(model_path, options, precision, batch)
        self._facts["engine_path"] = path
        if os.path.isfile(path) and not options.get("rebuild"):
            self._facts["engine_cache"] = "hit"
            try:
                with open(path + ".json") as fh:
                    self._facts["cached_build"] = json.load(fh)
            except (OSError, ValueError):
                pass
            with open(path, "rb") as fh:
                return fh.read()
        data = self._build(model_path, options, batch)
        self._facts["engine_cache"] = "miss (built)"
        try:
            _atomic_write(path, data)
            meta = {"model_sha256": self._facts["model_sha256"], "precision_flags": precision,
                    "profile_batch": batch, "tensorrt": self.version(),
                    "build_time_s": self._facts["build_time_s"], "built_at": time.time()}
            _atomic_write(path + ".json", json.dumps(meta).encode("utf-8"))
        except OSError as exc:
            self._facts["engine_cache"] = "miss (not cached: %s; set engine_cache_dir)" % exc
        return data

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self.check_options(options)
        trt = self._trt
        self._logger = trt.Logger(trt.Logger.WARNING)
        data = self._engine_bytes(model_path, options)
        self._facts["engine_size_bytes"] = len(data)
        runtime = trt.Runtime(self._logger)
        engine = runtime.deserialize_cuda_engine(data)
        if engine is None and self._facts.get("engine_cache") == "hit":  # a stale or damaged cache entry: rebuild
            data = self._engine_bytes(model_path, dict(options, rebuild=True))
            self._facts["engine_cache"] = "stale (rebuilt)"
            self._facts["engine_size_bytes"] = len(data)
            engine = runtime.deserialize_cuda_engine(data)
        if engine is None:
            raise RuntimeError("TensorRT %s could not deserialize the engine %s (built by another TensorRT version "
                               "or GPU?): pass rebuild: true" % (self.version(), self._facts.get("engine_path")))
        if not hasattr(engine, "num_io_tensors"):
            raise RuntimeError("TensorRT %s is older than 8.5: the agent needs the name-based tensor API "
                               "(JetPack 5.1 or later)" % self.version())
        self._runtime = runtime
        self._engine = engine
        self._names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
        self._input_names = [n for n in self._names if engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        for name in self._names:
            self._np_dtype(name)  # refuse types numpy cannot hold before any inference
        self._primary = self._new_slot()
        self._local.slot = self._primary

    # ---- tensors ------------------------------------------------------------------------------------------
    def _np_dtype(self, name: str) -> Any:
        import numpy as np

        dtype = self._engine.get_tensor_dtype(name)
        try:
            return np.dtype(self._trt.nptype(dtype))
        except TypeError:
            raise ValueError("tensor %r has TensorRT type %s, which numpy cannot hold: keep model I/O in "
                             "fp32/fp16/int8/int32" % (name, dtype)) from None

    def _info(self, name: str) -> TensorInfo:
        shape = [int(d) if int(d) >= 0 else None for d in self._engine.get_tensor_shape(name)]
        return TensorInfo(name=name, shape=shape, dtype=self._np_dtype(name).name)

    def inputs(self) -> List[TensorInfo]:
        return [self._info(n) for n in self._input_names]

    def outputs(self) -> List[TensorInfo]:
        return [self._info(n) for n in self._names if n not in self._input_names]

    # ---- execution ----------------------------------------------------------------------------------------
    def _new_slot(self) -> _Slot:
        context = self._engine.create_execution_context()
        if context is None:
            raise RuntimeError("TensorRT could not create an execution context (out of GPU memory?)")
        stream = self._cuda(self._cudart.cudaStreamCreate(), "cudaStreamCreate")
        return _Slot(context, stream)

    def _prepare(self, slot: _Slot, feeds: Dict[str, Any]) -> None:
        """Set input shapes, (re)allocate device buffers and bind their addresses for ``feeds``."""
        import numpy as np

        shapes = {n: tuple(np.shape(feeds[n])) for n in self._input_names}
        if slot.shapes == shapes and slot.inputs:
            slot.inputs = [(ptr, np.ascontiguousarray(feeds[n], dtype=self._np_dtype(n)), nbytes)
                           for (ptr, _, nbytes), n in zip(slot.inputs, self._input_names)]
            return
        cudart = self._cudart
        for ptr, _, _ in slot.inputs + slot.outputs:
            self._cuda(cudart.cudaFree(ptr), "cudaFree")
        slot.inputs, slot.outputs = [], []
        for name in self._input_names:
            arr = np.ascontiguousarray(feeds[name], dtype=self._np_dtype(name))
            if not slot.context.set_input_shape(name, list(arr.shape)):
                raise ValueError("input %r shape %s is outside the engine's profile (built for batch %s): pass "
                                 "the runtime option batch" % (name, list(arr.shape), self._facts.get("profile_batch")))
            nbytes = max(int(arr.nbytes), 1)
            ptr = self._cuda(cudart.cudaMalloc(nbytes), "cudaMalloc")
            slot.context.set_tensor_address(name, ptr)
            slot.inputs.append((ptr, arr, nbytes))
        for name in self._names:
            if name in self._input_names:
                continue
            shape = [int(d) for d in slot.context.get_tensor_shape(name)]
            if any(d < 0 for d in shape):
                raise ValueError("output %r has a data-dependent shape %s, which this runtime does not handle"
                                 % (name, shape))
            host = np.empty(shape, dtype=self._np_dtype(name))
            nbytes = max(int(host.nbytes), 1)
            ptr = self._cuda(cudart.cudaMalloc(nbytes), "cudaMalloc")
            slot.context.set_tensor_address(name, ptr)
            slot.outputs.append((ptr, host, nbytes))
        slot.shapes = shapes

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        primary = self._primary
        if primary is None:
            raise RuntimeError("tensorrt: bind() before load()")
        self._prepare(primary, feeds)
        local = self._local
        cudart = self._cudart
        h2d = cudart.cudaMemcpyKind.cudaMemcpyHostToDevice
        d2h = cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost
        ok = cudart.cudaError_t.cudaSuccess

        def slot_for_thread() -> _Slot:
            slot = self._new_slot()
            self._prepare(slot, feeds)
            local.slot = slot
            return slot

        def infer() -> Any:
            slot = getattr(local, "slot", None)
            if slot is None:
                slot = slot_for_thread()
            stream = slot.stream
            for ptr, arr, nbytes in slot.inputs:
                err = cudart.cudaMemcpyAsync(ptr, arr.ctypes.data, nbytes, h2d, stream)[0]
                if err != ok:
                    raise RuntimeError("CUDA host-to-device copy failed: %s" % err)
            if not slot.context.execute_async_v3(int(stream)):
                raise RuntimeError("TensorRT execute_async_v3 failed (see the TensorRT log on stderr)")
            for ptr, host, nbytes in slot.outputs:
                err = cudart.cudaMemcpyAsync(host.ctypes.data, ptr, nbytes, d2h, stream)[0]
                if err != ok:
                    raise RuntimeError("CUDA device-to-host copy failed: %s" % err)
            err = cudart.cudaStreamSynchronize(stream)[0]
            if err != ok:
                raise RuntimeError("CUDA stream synchronize failed: %s" % err)
            return [host for _, host, _ in slot.outputs]

        return infer

    def profile(self, model_path: str, options: Dict[str, Any], threads: int) -> LayerProfiler:
        """Load as usual, then set an ``IProfiler`` on the primary execution context (single stream only)."""
        from .tensorrt_profile import TrtProfiler, inspector_facts

        if not hasattr(self._trt, "IProfiler"):
            raise ProfileUnsupported("TensorRT %s has no IProfiler in its Python API: use trtexec --dumpProfile"
                                     % self.version())
        self.load(model_path, options, threads)
        facts: Dict[str, Dict[str, str]] = {}
        try:
            text = self._engine.create_engine_inspector().get_engine_information(self._trt.LayerInformationFormat.JSON)
            facts = inspector_facts(json.loads(text))
        except Exception:  # the inspector only adds tactics and precisions: profile without them
            facts = {}
        provider = "DLA%d" % int(options["dla_core"]) if options.get("dla_core") is not None else "GPU"
        if self._primary is None:
            raise RuntimeError("tensorrt: no execution context after load()")
        return TrtProfiler(self._trt, self._primary.context, facts, provider)

    def _layer_info(self) -> Dict[str, Any]:
        trt = self._trt
        if not hasattr(self._engine, "create_engine_inspector"):
            return {"available": False, "reason": "TensorRT %s has no engine inspector" % self.version()}
        try:
            inspector = self._engine.create_engine_inspector()
            if self._primary is not None and self._primary.inputs:
                inspector.execution_context = self._primary.context  # concrete shapes: real formats
            text = inspector.get_engine_information(trt.LayerInformationFormat.JSON)
            return summarize_layers(json.loads(text))
        except Exception as exc:  # the inspector is a diagnostic: never fail a run over it
            return {"available": False, "reason": "engine inspector failed: %s" % exc}

    def details(self) -> Dict[str, Any]:
        out = dict(self._facts)
        if self._engine is not None:
            with self._lock:
                if self._layers is None:
                    self._layers = self._layer_info()
            out["layer_precisions"] = self._layers
        return out
