"""Static shapes where the run is static: the concrete input shapes of a run, known before the model loads.

When every input of a run has a known shape (fixed by the model, ``--shape``, the inputs or eval ``.npz``, or the
batch for a dynamic leading dim), the runtimes compile the model for exactly those shapes: OpenVINO reshapes the
model before ``compile_model``, ONNX Runtime overrides the free (symbolic) dims by name. The runtime option
``static_shapes: false`` keeps the model dynamic (to benchmark the dynamic model on purpose). What was done is
reported in ``runtime.static_shapes`` of the result (docs/runtimes.md, "Static shapes").

Python 3.8, standard library plus numpy; never imports edgeopt.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from .inputs import InputSpecError, read_npz, resolve_shape
from .protocol import TensorInfo
from .runtimes.options import Option

OPTION = "static_shapes"


def _problem(value: Any) -> Optional[str]:
    try:
        enabled({OPTION: value})
    except ValueError as exc:
        return str(exc)
    return None


def enabled(options: Dict[str, Any]) -> bool:
    """The runtime option (default true); a non-boolean value is refused.

    Raises:
        ValueError: ``static_shapes`` is not true or false.
    """
    value = options.get(OPTION, True)
    if not isinstance(value, bool):
        raise ValueError("static_shapes %r: use true (compile for the run's input shapes, the default) or false "
                         "(keep the model's dynamic dims)" % (value,))
    return value



#: The option in the schema of every runtime that compiles for fixed shapes (onnxruntime, openvino).
SCHEMA = Option(OPTION, "bool", "compile for the run's input shapes (true) or keep the model's dynamic dims",
                default=True, validate=_problem)

def npz_shapes(path: Optional[str], batch: int = 0) -> Dict[str, List[int]]:
    """Input shapes a run with this ``.npz`` feeds: each array's own shape, or with ``batch`` > 0 one chunk of
    ``batch`` samples (the eval command's step; nothing when the samples do not split evenly into chunks)."""
    if not path:
        return {}
    try:
        shapes = {k: [int(d) for d in a.shape] for k, a in read_npz(path).items() if k != "labels"}
    except InputSpecError:
        return {}  # the run itself reports the bad file
    if batch <= 0:
        return shapes
    if any(not s or s[0] % batch for s in shapes.values()):
        return {}
    return {k: [batch] + s[1:] for k, s in shapes.items()}


def plan(declared: Sequence[TensorInfo], shapes: Dict[str, List[int]], batch: int
         ) -> Tuple[Optional[Dict[str, List[int]]], str]:
    """The concrete shape of every input for this run, or None with the reason it cannot be fixed.

    ``shapes`` is keyed by input name; when none of its names is an input but it holds one shape per input,
    they are taken in order (an fp16 artifact whose inputs were renamed by a cast).
    """
    names = [i.name for i in declared]
    if shapes and not set(shapes) & set(names) and len(shapes) == len(names):
        shapes = dict(zip(names, shapes.values()))
    out = {}  # type: Dict[str, List[int]]
    for info in declared:
        try:
            out[info.name] = resolve_shape(info, shapes, batch)
        except InputSpecError as exc:
            return None, str(exc)
    return out, ""


def decide(declared: Sequence[TensorInfo], on: bool, run_shapes: Optional[Tuple[Dict[str, List[int]], int]]
           ) -> Tuple[Optional[Dict[str, List[int]]], Dict[str, Any]]:
    """Whether a runtime compiles the model static: the shapes to compile for, or None with the
    ``runtime.static_shapes`` report saying why not (the same decisions and words for every runtime).

    Args:
        declared: the model's inputs as the runtime reads them.
        on: the ``static_shapes`` runtime option (:func:`enabled`).
        run_shapes: the run's ``(shapes, batch)``, None when not given before loading.
    """
    if not dynamic(declared):
        return None, report(False, None, "the model's inputs are static")
    if not on:
        return None, report(False, None, "runtime option static_shapes: false")
    if run_shapes is None:
        return None, report(False, None, "the run's input shapes were not given before loading")
    shapes, why = plan(declared, *run_shapes)
    if shapes is None:
        return None, report(False, None, why)
    return shapes, {}


def dynamic(declared: Sequence[TensorInfo]) -> bool:
    """True when some input dim is not a fixed integer."""
    return any(not isinstance(d, int) or d < 0 for i in declared for d in i.shape)


def report(applied: bool, shapes: Optional[Dict[str, List[int]]], reason: str, **extra: Any) -> Dict[str, Any]:
    """The ``runtime.static_shapes`` block of a result."""
    out = {"applied": applied, "reason": reason}  # type: Dict[str, Any]
    if shapes is not None:
        out["shapes"] = {k: list(v) for k, v in shapes.items()}
    out.update(extra)
    return out
