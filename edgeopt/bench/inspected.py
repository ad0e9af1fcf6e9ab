"""The host-side inspection of a benchmarked ONNX model, once per version of its files.

:func:`edgeopt.bench.api.run_benchmark` inspects an ONNX model (FLOPs, parameters, roofline) before every run:
~0.1 s for PP-OCRv4 rec on this project's CPU. A sweep benchmarks the same files again and again (each level's
first pass, its confirmation rounds, the ranking rounds: ~40 runs on PP-OCRv4 rec, 4 s of host work), so one
analysis is kept per file version: the model file's identity (inode, size, modification time) and the newest
modification time in its folder (external data files sit there), with the target, shapes and batch it was made for.
A file written again gets a new identity and is inspected again.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..analysis import inspect_model
from ..analysis.report import InspectResult
from ..targets import Target

MAX_KEPT = 64
_KEPT: OrderedDict[str, InspectResult] = OrderedDict()
_LOCK = threading.Lock()


def _identity(path: Path) -> list[int]:
    st = path.stat()
    newest = max((e.stat().st_mtime_ns for e in os.scandir(path.parent) if e.is_file()), default=0)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, newest]


def inspect_once(path: Path, *, target: Target, shapes: Mapping[str, Sequence[int]], batch: int) -> InspectResult:
    """:func:`edgeopt.analysis.inspect_model` of ``path``, reused while its files and the arguments are unchanged.

    Raises:
        ModelLoadError, ShapeError: as :func:`edgeopt.analysis.inspect_model` (never kept).
    """
    path = Path(path)
    try:
        ident = _identity(path)
    except OSError:  # gone or unreadable: the analysis says why
        return inspect_model(path, target=target, shapes=shapes, batch=batch)
    key = json.dumps([str(path.resolve()), ident, target.model_dump(mode="json"), dict(shapes), batch],
                     sort_keys=True, default=str)
    with _LOCK:
        hit = _KEPT.get(key)
        if hit is not None:
            _KEPT.move_to_end(key)
            return hit
    info = inspect_model(path, target=target, shapes=shapes, batch=batch)
    with _LOCK:
        _KEPT[key] = info
        while len(_KEPT) > MAX_KEPT:
            _KEPT.popitem(last=False)
    return info
