"""ONNX Runtime: threads and execution providers configurable; the providers really used are reported."""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Set

from .. import onnx_signature, static_shapes
from ..protocol import TensorInfo
from .base import LayerProfiler, Runtime, RuntimeMissing
from .options import Option

# ONNX Runtime's type strings -> numpy dtype names.
_ORT_DTYPES = {
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(double)": "float64",
    "tensor(int8)": "int8",
    "tensor(uint8)": "uint8",
    "tensor(int16)": "int16",
    "tensor(uint16)": "uint16",
    "tensor(int32)": "int32",
    "tensor(uint32)": "uint32",
    "tensor(int64)": "int64",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}



def _info(arg: Any) -> TensorInfo:
    shape = [d if isinstance(d, int) and d >= 0 else (d if isinstance(d, str) else None) for d in arg.shape]
    return TensorInfo(name=arg.name, shape=shape, dtype=_ORT_DTYPES.get(arg.type, arg.type))


class OnnxRuntime(Runtime):
    name = "onnxruntime"
    formats = ("onnx",)
    packages = (("onnxruntime", ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino", "onnxruntime-directml",
                                 "onnxruntime-training")),)
    profile_unsupported = ""  # session profiling (onnxruntime_profile.py)
    option_schema = (
        Option("providers", "list", "execution providers, most preferred first (default: the target's)",
               default=["CPUExecutionProvider"]),
        Option("providers_fallback", "bool", "drop asked-for providers this build lacks instead of failing",
               default=False),
        Option("graph_optimization_level", "str", "ONNX Runtime's graph optimizations", default="all",
               choices=("disable", "basic", "extended", "all")),
        Option("inter_op_threads", "int", "threads that run independent nodes at once (parallel execution mode)"),
        Option("execution_mode", "str", "run independent nodes one after another or in parallel",
               default="sequential", choices=("sequential", "parallel")),
        static_shapes.SCHEMA,
    )

    def __init__(self) -> None:
        try:
            import onnxruntime
        except ImportError:
            raise RuntimeMissing(
                "onnxruntime is not installed for this Python: pip install onnxruntime"
            ) from None
        self._ort = onnxruntime
        self._session: Any = None
        self._requested: List[str] = []
        self._dropped: List[str] = []
        self._static: Dict[str, Any] = {}

    def version(self) -> str:
        return str(self._ort.__version__)

    def _session_options(self, options: Dict[str, Any], threads: int) -> Any:
        self.check_options(options)
        ort = self._ort
        so = ort.SessionOptions()
        if threads > 0:
            so.intra_op_num_threads = threads
        if options.get("inter_op_threads"):
            so.inter_op_num_threads = int(options["inter_op_threads"])
        level = options.get("graph_optimization_level", "all")
        levels = {
            "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        }
        if level not in levels:
            raise ValueError("graph_optimization_level %r: use one of %s" % (level, ", ".join(levels)))
        so.graph_optimization_level = levels[level]
        if options.get("execution_mode") == "parallel":
            so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        return so

    def _providers(self, options: Dict[str, Any]) -> List[str]:
        available = self._ort.get_available_providers()
        requested = list(options.get("providers") or ["CPUExecutionProvider"])
        asked = list(requested)
        missing = [p for p in requested if p not in available]
        self._dropped = []
        if missing and options.get("providers_fallback"):
            # The host asked for the target's preferred providers without knowing this build: keep what exists.
            self._dropped = missing
            requested = [p for p in requested if p in available] or ["CPUExecutionProvider"]
            missing = []
        if missing:
            raise ValueError(
                "execution provider(s) %s not available in this onnxruntime build (available: %s)"
                % (", ".join(missing), ", ".join(available))
            )
        self._requested = asked
        return requested

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        so = self._session_options(options, threads)
        providers = self._providers(options)
        self._open(model_path, options, so, providers)

    def profile(self, model_path: str, options: Dict[str, Any], threads: int) -> LayerProfiler:
        """Load with ``SessionOptions.enable_profiling``: the session writes a Chrome-trace JSON, parsed at the end."""
        from .onnxruntime_profile import OrtProfiler

        so = self._session_options(options, threads)
        providers = self._providers(options)
        profiler = OrtProfiler()
        so.enable_profiling = True
        so.profile_file_prefix = profiler.prefix
        try:
            self._open(model_path, options, so, providers)
        except BaseException:
            profiler.cleanup()
            raise
        profiler.attach(self._session)
        return profiler

    def _open(self, model_path: str, options: Dict[str, Any], so: Any, providers: List[str]) -> None:
        """Build the session, for the run's input shapes where they are known (static_shapes.py)."""
        self._static = self._free_dims(model_path, static_shapes.enabled(options), so)
        self._session = self._ort.InferenceSession(model_path, sess_options=so, providers=providers)
        self._static["static"] = not static_shapes.dynamic(self.inputs())

    def _free_dims(self, model_path: str, on: bool, so: Any) -> Dict[str, Any]:
        """Override the symbolic dims of the model's inputs with the run's values (static_shapes.py).

        ONNX Runtime fixes free dims by symbol name, before the session is built: one value per symbol. A symbol
        used with two different values, and an unnamed dim, stay dynamic (the report names them)."""
        try:
            declared = [TensorInfo(name=n, shape=list(d) if d is not None else [], dtype="")
                        for n, d in onnx_signature.graph_inputs(model_path)]
        except (OSError, onnx_signature.SignatureError) as exc:
            return static_shapes.report(False, None, "could not read the model's inputs (%s)" % exc)
        shapes, skipped = static_shapes.decide(declared, on, self.run_shapes)
        if shapes is None:
            return skipped
        values: Dict[str, int] = {}
        clashing: Set[str] = set()
        left: List[str] = []
        for info in declared:
            for axis, dim in enumerate(info.shape):
                want = shapes[info.name][axis]
                if dim is None:
                    left.append("%s[%d] (unnamed)" % (info.name, axis))
                elif isinstance(dim, str) and values.setdefault(dim, want) != want:
                    clashing.add(dim)
        left += ["symbol %r (one name, several sizes)" % d for d in sorted(clashing)]
        overrides = {k: v for k, v in values.items() if k not in clashing}
        for symbol, value in sorted(overrides.items()):
            so.add_free_dimension_override_by_name(symbol, int(value))
        reason = "dynamic dims left: %s" % ", ".join(left) if left else ""
        return static_shapes.report(bool(overrides), shapes, reason, overrides=overrides)

    def inputs(self) -> List[TensorInfo]:
        return [_info(a) for a in self._session.get_inputs()]

    def outputs(self) -> List[TensorInfo]:
        return [_info(a) for a in self._session.get_outputs()]

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        return functools.partial(self._session.run, None, feeds)

    def details(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "providers_requested": self._requested,
            "providers_used": list(self._session.get_providers()) if self._session is not None else [],
        }
        if self._dropped:
            out["providers_unavailable"] = list(self._dropped)
        out["static_shapes"] = dict(self._static)
        return out
