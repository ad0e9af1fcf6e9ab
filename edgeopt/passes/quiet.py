"""Silence onnxruntime's quantization loggers (INFO lines per node) while a pass runs; edgeopt reports itself."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

ORT_LOGGERS = ("onnxruntime.quantization", "onnxruntime.quantization.matmul_nbits_quantizer", "root")


@contextmanager
def quiet_ort(level: int = logging.ERROR) -> Iterator[None]:
    """Raise the level of onnxruntime's quantization loggers for the duration of the block, then restore it."""
    loggers = [logging.getLogger(name if name != "root" else None) for name in ORT_LOGGERS]
    before = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(level)
    try:
        yield
    finally:
        for lg, lvl in zip(loggers, before, strict=True):
            lg.setLevel(lvl)
