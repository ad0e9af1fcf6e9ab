"""Executors of a fleet run, by name: ``local`` (a thread pool, the default) and ``ray`` / ``ray://ADDRESS``.

Ray is imported only when its executor is used (the ``[ray]`` extra).
"""

from __future__ import annotations

from ...config import Settings, from_environment
from ...errors import InputError
from .base import STUCK_GRACE_S, DeviceEvents, Executor
from .local_pool import LocalExecutor

EXECUTORS = ("local", "ray", "ray:auto", "ray:HOST:PORT", "ray://HOST:PORT")


def make_executor(spec: str | Executor, settings: Settings | None = None) -> Executor:
    """The executor ``spec`` names (an executor object is returned as it is).

    ``ray`` joins ``RAY_ADDRESS`` when it is set, else starts a local cluster for the run; ``ray:auto`` joins the
    cluster ``ray start`` runs on this machine; ``ray:HOST:PORT`` a cluster's GCS; ``ray://HOST:PORT`` Ray Client.

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    if not isinstance(spec, str):
        return spec
    text = spec.strip()
    if text == "local":
        return LocalExecutor()
    if text == "ray" or text.startswith("ray:"):
        from .ray_exec import RayExecutor

        if text == "ray":
            address = (settings or from_environment()).ray_address
            return RayExecutor(address, name="ray")
        return RayExecutor(text if text.startswith("ray://") else text[4:], name=text)
    raise InputError(f"--executor {spec!r}: use one of {', '.join(EXECUTORS)}")


__all__ = ["EXECUTORS", "STUCK_GRACE_S", "DeviceEvents", "Executor", "LocalExecutor", "make_executor"]
