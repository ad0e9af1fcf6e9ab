"""Executors of a fleet run, by name: ``local`` (a thread pool, the default) and ``ray`` / ``ray://ADDRESS``.

Ray is imported only when its executor is used (the ``[ray]`` extra).
"""

from __future__ import annotations

from ...errors import InputError
from .base import STUCK_GRACE_S, DeviceEvents, Executor
from .local_pool import LocalExecutor

EXECUTORS = ("local", "ray", "ray://HOST:PORT")


def make_executor(spec: str | Executor) -> Executor:
    """The executor ``spec`` names (an executor object is returned as it is).

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    if not isinstance(spec, str):
        return spec
    text = spec.strip()
    if text == "local":
        return LocalExecutor()
    if text == "ray" or text.startswith("ray://"):
        from .ray_exec import RayExecutor

        return RayExecutor(None if text == "ray" else text)
    raise InputError(f"--executor {spec!r}: use one of {', '.join(EXECUTORS)}")


__all__ = ["EXECUTORS", "STUCK_GRACE_S", "DeviceEvents", "Executor", "LocalExecutor", "make_executor"]
