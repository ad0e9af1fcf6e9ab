"""Before a run: is everything the agent needs importable by this interpreter?

A fresh board often lacks numpy or the runtime. Instead of a traceback from deep inside the harness, the agent
answers with one line naming the package, the interpreter, the machine and the fix, as a ``runtime_missing``
result (the host turns it into exit code 3)::

    numpy is not installed for /usr/bin/python3 on pi5-01: run 'edgeopt devices setup pi5-01'
    (or: sudo apt-get install python3-numpy)

The device is named by its host name here; the host side may put the inventory name in its place.
"""

from __future__ import annotations

import socket
import sys
from typing import Any, Dict, Optional

from . import __version__, runtimes
from .protocol import ERROR_RUNTIME_MISSING, STATUS_ERROR, RawRun, Request

# Exit status of an agent that cannot run for a missing dependency (the host's "device error").
EXIT_MISSING = 3
# Runtimes that only come from a vendor (JetPack, macOS): `devices setup` cannot install them, so their own
# message (which names the vendor's package) is kept as it is.
_VENDOR_ONLY = ("tensorrt", "coreml")


def where() -> Dict[str, Any]:
    """The interpreter and machine, for the error result's ``environment``."""
    return {"python_executable": sys.executable, "hostname": socket.gethostname(),
            "python": "%d.%d.%d" % sys.version_info[:3]}


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _setup_hint(host: str, fallback: str) -> str:
    return "run 'edgeopt devices setup %s' (or: %s)" % (host, fallback)


def numpy_problem() -> Optional[str]:
    """One line when numpy cannot be imported here, else None."""
    try:
        import numpy  # noqa: F401
    except ImportError as exc:
        host = socket.gethostname()
        broken = "" if getattr(exc, "name", None) == "numpy" else " (import failed: %s)" % _one_line(exc)
        return "numpy is not installed for %s on %s%s: %s" % (
            sys.executable, host, broken, _setup_hint(host, "sudo apt-get install python3-numpy"))
    return None


def runtime_problem(name: str) -> Optional[str]:
    """One line when runtime ``name`` cannot be loaded here, else None (unknown names: the harness says so)."""
    host = socket.gethostname()
    try:
        runtimes.create(name)
    except KeyError:
        return None
    except (runtimes.RuntimeMissing, ImportError) as exc:
        text = _one_line(exc)
        if name in _VENDOR_ONLY:
            return "%s (%s on %s)" % (text, sys.executable, host)
        fallback = text.split(": ", 1)[1] if ": " in text else text
        return "%s is not installed for %s on %s: %s" % (name, sys.executable, host, _setup_hint(host, fallback))
    return None


def check(request: Request) -> Optional[RawRun]:
    """An error result when numpy or the request's runtime is missing, else None (then the run proceeds)."""
    problem = numpy_problem() or runtime_problem(request.runtime)
    if problem is None:
        return None
    return RawRun(status=STATUS_ERROR, error_kind=ERROR_RUNTIME_MISSING, error=problem, request=request.to_dict(),
                  environment=where(), agent_version=__version__)
