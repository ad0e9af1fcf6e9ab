"""Core ML through coremltools: ``.mlpackage`` (ML program) or ``.mlmodel``, on macOS only.

Core ML's prediction API exists only on macOS (coremltools on Linux can build and inspect models, not run
them), so on any other system this runtime reports itself missing with that reason. ``compute_units`` picks
where Core ML may run the model: ``ALL`` (default: CPU, GPU and Neural Engine), ``CPU_ONLY``, ``CPU_AND_GPU``,
``CPU_AND_NE``. Core ML decides per layer within that set; it does not say which unit ran what.
"""

from __future__ import annotations

import platform
from typing import Any, Callable, Dict, List

from ..protocol import TensorInfo
from .base import Runtime, RuntimeMissing
from .options import Option

_COMPUTE_UNITS = ("ALL", "CPU_ONLY", "CPU_AND_GPU", "CPU_AND_NE")
# Core ML ArrayFeatureType.ArrayDataType names -> numpy dtype names.
_ARRAY_DTYPES = {"FLOAT32": "float32", "FLOAT16": "float16", "DOUBLE": "float64", "FLOAT64": "float64",
                 "INT32": "int32", "INT8": "int8", "UINT8": "uint8"}


def _missing_reason(system: str) -> str:
    return ("Core ML prediction exists only on macOS (this is %s): benchmark .mlpackage/.mlmodel models on a Mac "
            "(edgeopt bench --host user@mac), or pick another format for this device" % (system or "unknown"))


class CoreMlRuntime(Runtime):
    name = "coreml"
    formats = ("coreml",)
    profile_unsupported = ("Core ML's Python API (coremltools) reports no per-layer times; on the Mac, use Xcode "
                           "Instruments' Core ML template or Xcode's Core ML performance report")
    option_schema = (
        Option("compute_units", "str", "where Core ML may run the model", default="ALL", choices=_COMPUTE_UNITS,
               fold="upper"),
    )

    def __init__(self) -> None:
        system = platform.system()
        if system != "Darwin":
            raise RuntimeMissing(_missing_reason(system))
        try:
            import coremltools
        except ImportError:
            raise RuntimeMissing("coremltools is not installed for this Python: pip install coremltools") from None
        self._ct = coremltools
        self._model: Any = None
        self._inputs: List[TensorInfo] = []
        self._outputs: List[TensorInfo] = []
        self._facts: Dict[str, Any] = {}

    def version(self) -> str:
        return str(self._ct.__version__)

    def _feature(self, feature: Any) -> TensorInfo:
        kind = feature.type.WhichOneof("Type")
        if kind != "multiArrayType":
            raise ValueError("feature %r is of Core ML type %s; the agent feeds and reads arrays only: convert "
                             "with ct.TensorType inputs and outputs" % (feature.name, kind))
        array = feature.type.multiArrayType
        enum = self._ct.proto.FeatureTypes_pb2.ArrayFeatureType.ArrayDataType
        dtype = _ARRAY_DTYPES.get(enum.Name(array.dataType), "float32")
        shape: List[Any] = [int(d) for d in array.shape]
        if array.WhichOneof("ShapeFlexibility") == "shapeRange":
            ranges = array.shapeRange.sizeRanges
            shape = [int(r.lowerBound) if r.upperBound == r.lowerBound else None for r in ranges]
        return TensorInfo(name=feature.name, shape=shape, dtype=dtype)

    def load(self, model_path: str, options: Dict[str, Any], threads: int) -> None:
        self.check_options(options)
        units = str(options.get("compute_units") or "ALL").upper()
        compute_unit = getattr(self._ct.ComputeUnit, units, None)
        if compute_unit is None:
            raise ValueError("compute_units %s needs a newer coremltools (have %s): pip install -U coremltools"
                             % (units, self.version()))
        self._model = self._ct.models.MLModel(model_path, compute_units=compute_unit)
        spec = self._model.get_spec()
        self._inputs = [self._feature(f) for f in spec.description.input]
        self._outputs = [self._feature(f) for f in spec.description.output]
        self._facts = {"compute_units": units, "model_type": spec.WhichOneof("Type"),
                       "spec_version": int(spec.specificationVersion), "macos": platform.mac_ver()[0]}
        if threads > 0:
            self._facts["threads_ignored"] = "Core ML schedules its own threads"

    def inputs(self) -> List[TensorInfo]:
        return list(self._inputs)

    def outputs(self) -> List[TensorInfo]:
        return list(self._outputs)

    def bind(self, feeds: Dict[str, Any]) -> Callable[[], Any]:
        data = dict(feeds)
        names = [o.name for o in self._outputs]
        predict = self._model.predict

        def infer() -> Any:
            result = predict(data)
            return [result[n] for n in names]

        return infer

    def details(self) -> Dict[str, Any]:
        return dict(self._facts)
