"""Retention of a generative model on the device: teacher-forced next-token statistics and greedy generations.

The ``evaluate`` command on an LLM folder (a generative runtime) comes here. ``request.eval_npz`` holds the
held-out text and the settings (keys in ``SETTINGS``, each a scalar array): ``text`` (the UTF-8 bytes, uint8),
and optionally ``kl_ids`` (``[windows, window - 1, K]`` token ids: the reference's top-K, at which this model's
log-probabilities are read so the host can compare distributions without shipping whole vocabularies). The text
is tokenized by the folder's own tokenizer; the first ``windows`` non-overlapping windows of ``window`` tokens run
teacher-forced from an empty cache; the first ``prompts`` windows' first ``prompt_tokens`` tokens are also
continued greedily for ``gen_tokens`` tokens. Written to ``request.eval_output`` (``.npz``):

- ``tokens`` ``[windows, window]`` int32: the ids fed (the host checks candidate and reference agree);
- ``top_ids``/``top_logp`` ``[windows, window - 1, top_k]``: each position's most likely next tokens, best first,
  and their log-probabilities;
- ``target_logp`` ``[windows, window - 1]``: log-probability of the true next token (perplexity);
- ``kl_ids``/``kl_logp`` ``[windows, window - 1, K]``: the ids given (else this model's own top-K) and their
  log-probabilities;
- ``greedy`` ``[prompts, gen_tokens]`` int32: the greedy continuations.

Python 3.8, standard library plus numpy and the runtime; never imports edgeopt. Metrics are the host's job.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List

import numpy as np

from . import __version__, environment
from .inputs import read_npz
from .protocol import ERROR_INPUT, ERROR_RUNTIME, STATUS_ERROR, STATUS_OK, RawRun, Request

Progress = Callable[[Dict[str, Any]], None]
# Settings read from the eval npz (scalar arrays) and their defaults.
SETTINGS = {"window": 64, "windows": 8, "top_k": 5, "kl_top": 2048, "prompts": 2, "prompt_tokens": 16,
            "gen_tokens": 16}


class _Refused(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _settings(data: Dict[str, Any]) -> Dict[str, int]:
    out = {}
    for key, default in SETTINGS.items():
        value = int(np.asarray(data[key]).reshape(-1)[0]) if key in data else default
        if value < 1:
            raise _Refused(ERROR_INPUT, "eval setting %s must be >= 1 (got %d)" % (key, value))
        out[key] = value
    if out["window"] < 2:
        raise _Refused(ERROR_INPUT, "eval setting window must be >= 2 (got %d)" % out["window"])
    return out


def _log_softmax(logits: Any) -> Any:
    x = np.asarray(logits, dtype=np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def _top(logp: Any, k: int) -> Any:
    """Indices of the ``k`` largest values per row, best first (ties: lower id first)."""
    return np.argsort(-logp, axis=-1, kind="stable")[:, :k]


def _windows(ids: List[int], s: Dict[str, int]) -> List[List[int]]:
    count = min(s["windows"], len(ids) // s["window"])
    if count == 0:
        raise _Refused(ERROR_INPUT, "the eval text is %d tokens long; one window needs %d: give a longer text or a "
                       "smaller window" % (len(ids), s["window"]))
    return [ids[i * s["window"]:(i + 1) * s["window"]] for i in range(count)]


def _score(rt: Any, windows: List[List[int]], s: Dict[str, int], given: Any) -> Dict[str, Any]:
    arrays: Dict[str, List[Any]] = {k: [] for k in ("top_ids", "top_logp", "target_logp", "kl_ids", "kl_logp")}
    for w, ids in enumerate(windows):
        logp = _log_softmax(rt.logits(ids))[:-1]  # the last position predicts past the window
        rows = np.arange(len(ids) - 1)
        top = _top(logp, min(s["top_k"], logp.shape[-1]))
        kl_ids = given[w] if given is not None else _top(logp, min(s["kl_top"], logp.shape[-1]))
        arrays["top_ids"].append(top)
        arrays["top_logp"].append(np.take_along_axis(logp, top, axis=-1))
        arrays["target_logp"].append(logp[rows, np.asarray(ids[1:])])
        arrays["kl_ids"].append(kl_ids)
        arrays["kl_logp"].append(np.take_along_axis(logp, np.asarray(kl_ids, dtype=np.int64), axis=-1))
    out = {k: np.stack(v) for k, v in arrays.items()}
    for key in ("top_ids", "kl_ids"):
        out[key] = out[key].astype(np.int32)
    for key in ("top_logp", "target_logp", "kl_logp"):
        out[key] = out[key].astype(np.float32)
    return out


def _given_ids(data: Dict[str, Any], windows: List[List[int]]) -> Any:
    if "kl_ids" not in data:
        return None
    given = np.asarray(data["kl_ids"], dtype=np.int64)
    if given.ndim != 3 or given.shape[0] < len(windows) or given.shape[1] != len(windows[0]) - 1:
        raise _Refused(ERROR_INPUT, "eval kl_ids has shape %s; expected [%d, %d, K] (the reference's windows)"
                       % (list(given.shape), len(windows), len(windows[0]) - 1))
    return given[:len(windows)]


def _compute(rt: Any, request: Request, emit: Progress) -> Dict[str, Any]:
    data = read_npz(request.eval_npz, "eval data")
    if "text" not in data:
        raise _Refused(ERROR_INPUT, "eval data %s has no 'text' array (the held-out text as UTF-8 bytes)"
                       % request.eval_npz)
    s = _settings(data)
    text = np.asarray(data["text"], dtype=np.uint8).tobytes().decode("utf-8", errors="replace")
    windows = _windows(rt.tokenize(text), s)
    out = _score(rt, windows, s, _given_ids(data, windows))
    emit({"event": "progress", "phase": "evaluate", "done": len(windows), "total": len(windows)})
    prompts = [w[:min(s["prompt_tokens"], len(w))] for w in windows[:s["prompts"]]]
    out["greedy"] = np.asarray([rt.greedy(p, s["gen_tokens"]) for p in prompts], dtype=np.int32)
    out["tokens"] = np.asarray(windows, dtype=np.int32)
    return out


def llm_evaluate(rt: Any, request: Request, emit: Progress) -> RawRun:
    """Score ``request.model_path`` (an LLM folder) on the request's text; every failure is an error ``RawRun``."""
    started = time.perf_counter()
    try:
        rt.load_scoring(request.model_path, dict(request.runtime_options), request.threads)
    except Exception as exc:  # runtime-specific load failures
        text = str(exc).strip().splitlines()
        return _error(request, ERROR_RUNTIME, "%s could not load %s: %s"
                      % (rt.name, request.model_path, text[0] if text else type(exc).__name__))
    try:
        out = _compute(rt, request, emit)
    except _Refused as exc:
        return _error(request, exc.kind, str(exc))
    except (OSError, ValueError) as exc:
        return _error(request, ERROR_INPUT, str(exc))
    except Exception as exc:  # a runtime failure mid-scoring
        return _error(request, ERROR_RUNTIME, "%s: scoring failed: %s" % (rt.name, str(exc).strip()[:300]))
    tmp = request.eval_output + ".tmp.npz"
    np.savez(tmp, **out)
    os.replace(tmp, request.eval_output)
    info = {"name": rt.name, "version": rt.version()}  # type: Dict[str, Any]
    info.update(rt.details())
    return RawRun(status=STATUS_OK, request=request.to_dict(), runtime=info,
                  timed_wall_s=time.perf_counter() - started, timed_inferences=int(out["tokens"].shape[0]),
                  outputs=[{"name": k, "key": k, "shape": list(v.shape), "dtype": str(v.dtype)}
                           for k, v in out.items()],
                  environment=environment.collect({rt.name: rt.version()}), agent_version=__version__)


def _error(request: Request, kind: str, message: str) -> RawRun:
    return RawRun(status=STATUS_ERROR, error_kind=kind, error=message, request=request.to_dict(),
                  agent_version=__version__)
