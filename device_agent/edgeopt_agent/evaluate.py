"""Accuracy on the device: run every evaluation sample through the target runtime and save the outputs.

``python -m edgeopt_agent evaluate --request FILE --result FILE``. The request's ``eval_npz`` holds the inputs
(arrays keyed by input name, samples on axis 0); the outputs are written to ``eval_output`` as an ``.npz`` with
keys ``out0``, ``out1``... (samples on axis 0, in the model's output order), the metric itself is computed on
the host. The timed benchmark loop is not involved: this is a separate command.

Python 3.8, standard library plus numpy and the runtime; never imports edgeopt.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List

import numpy as np

from . import __version__, environment, runtimes, static_shapes
from .inputs import read_npz
from .protocol import ERROR_INPUT, ERROR_RUNTIME, ERROR_RUNTIME_MISSING, STATUS_ERROR, STATUS_OK, RawRun, Request

Progress = Callable[[Dict[str, Any]], None]


def _error(request: Request, kind: str, message: str) -> RawRun:
    return RawRun(status=STATUS_ERROR, error_kind=kind, error=message, request=request.to_dict(),
                  agent_version=__version__)


def _samples(path: str, names: List[str]) -> Dict[str, np.ndarray]:
    data = read_npz(path, "eval data")
    files = list(data)
    missing = [n for n in names if n not in data]
    if missing and len(files) == len(names):  # renamed inputs (e.g. an fp16 cast): match by position
        return {n: data[k] for n, k in zip(names, files)}
    if missing:
        raise ValueError("eval data %s lacks input(s) %s (has %s): key the arrays by input name"
                         % (path, ", ".join(missing), ", ".join(files)))
    arrays = {n: data[n] for n in names}
    if not arrays or any(a.ndim == 0 for a in arrays.values()):
        raise ValueError("eval data %s: each input needs an array of samples (axis 0), not a scalar" % path)
    counts = sorted({len(a) for a in arrays.values()})
    if len(counts) != 1:
        raise ValueError("eval data %s: inputs hold different sample counts %s; give each the same" % (path, counts))
    return arrays


def evaluate(request: Request, emit: Progress) -> RawRun:
    """Run ``request.eval_npz`` through ``request.runtime``; write outputs to ``request.eval_output``.

    Every failure comes back as a ``RawRun`` with ``status="error"``.
    """
    if not request.eval_npz or not request.eval_output:
        return _error(request, ERROR_INPUT, "evaluate needs eval_npz and eval_output in the request")
    if not os.path.isfile(request.eval_npz):
        return _error(request, ERROR_INPUT, "eval data %s not found on the device" % request.eval_npz)
    try:
        rt = runtimes.create(request.runtime)
    except KeyError as exc:
        return _error(request, ERROR_INPUT, str(exc.args[0]))
    except runtimes.RuntimeMissing as exc:
        return _error(request, ERROR_RUNTIME_MISSING, str(exc))
    if getattr(rt, "generative", False):  # an LLM folder: next-token statistics on a text (llm_eval.py)
        from .llm_eval import llm_evaluate

        return llm_evaluate(rt, request, emit)
    step = max(1, int(request.batch))
    rt.expect_inputs(static_shapes.npz_shapes(request.eval_npz, step), step)  # one chunk of samples per inference
    try:
        rt.load(request.model_path, dict(request.runtime_options), request.threads)
    except Exception as exc:  # runtime-specific load failures
        return _error(request, ERROR_RUNTIME, "%s could not load %s: %s"
                      % (request.runtime, request.model_path, str(exc).strip().splitlines()[0] if str(exc) else exc))
    in_infos = rt.inputs()
    try:
        arrays = _samples(request.eval_npz, [i.name for i in in_infos])
    except (OSError, ValueError) as exc:
        return _error(request, ERROR_INPUT, str(exc))
    dtypes = {i.name: np.dtype(i.dtype) for i in in_infos}
    total = len(next(iter(arrays.values())))
    collected = []  # type: List[List[np.ndarray]]
    started = time.perf_counter()
    try:
        for lo in range(0, total, step):
            feeds = {n: np.ascontiguousarray(a[lo:lo + step], dtype=dtypes[n]) for n, a in arrays.items()}
            outs = rt.bind(feeds)()
            collected.append([np.array(o, copy=True) for o in outs])
            if time.perf_counter() - started > request.max_duration_s:
                return _error(request, ERROR_RUNTIME, "evaluation exceeded max_duration_s=%g s after %d of %d samples"
                              % (request.max_duration_s, lo + step, total))
            if request.progress_interval_s > 0 and (lo // step) % 50 == 0:
                emit({"event": "progress", "phase": "evaluate", "done": min(lo + step, total), "total": total})
    except Exception as exc:
        return _error(request, ERROR_RUNTIME, "inference on eval sample failed: %s" % exc)
    outputs = {}  # type: Dict[str, np.ndarray]
    if collected:
        for k in range(len(collected[0])):
            outputs["out%d" % k] = np.concatenate([c[k] for c in collected], axis=0)
    tmp = request.eval_output + ".tmp.npz"
    np.savez(tmp, **outputs)
    os.replace(tmp, request.eval_output)
    out_infos = rt.outputs()
    info = {"name": rt.name, "version": rt.version()}  # type: Dict[str, Any]
    info.update(rt.details())
    return RawRun(
        status=STATUS_OK, request=request.to_dict(), runtime=info, timed_wall_s=time.perf_counter() - started,
        timed_inferences=total,
        outputs=[{"name": o.name, "key": "out%d" % k, "shape": list(outputs["out%d" % k].shape),
                  "dtype": str(outputs["out%d" % k].dtype)} for k, o in enumerate(out_infos) if "out%d" % k in outputs],
        environment=environment.collect({rt.name: rt.version()}), agent_version=__version__,
    )
