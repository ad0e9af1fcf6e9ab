"""``user@host[:port]`` (and ``user@[v6addr]:port``) from the command line into a checked :class:`SshAddress`."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError
from .schema import DEFAULT_PYTHON, DEFAULT_WORKDIR, SshAddress

_FORM = re.compile(r"^(?P<user>[^@\s]+)@(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\s\[\]]+))(?::(?P<port>\d+))?$")
_EXAMPLE = "write USER@ADDRESS[:PORT], e.g. --host pi@192.168.1.50 or --host root@[fe80::1%eth0]:2222"


def parse_host(
    text: str, *, key: Path | None = None, python: str | None = None, workdir: str | None = None
) -> SshAddress:
    """Parse ``--host`` into an address, with the other connection flags.

    Args:
        text: ``user@host``, ``user@host:port`` or ``user@[ipv6]:port``.
        key: private key file (``--key``).
        python: interpreter on the device (``--python``; default /usr/bin/python3).
        workdir: agent directory on the device (default ``.cache/edgeopt`` under the login's home).

    Raises:
        InputError: a malformed value; the message shows the expected form.
    """
    m = _FORM.match(text.strip())
    if not m:
        raise InputError(f"--host {text!r}: {_EXAMPLE}")
    host = m.group("v6") or m.group("host")
    try:
        return SshAddress(
            host=host,
            port=int(m.group("port") or 22),
            user=m.group("user"),
            key=key,
            python=python or DEFAULT_PYTHON,
            workdir=workdir or DEFAULT_WORKDIR,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        flag = {"python": "--python", "workdir": "--workdir", "key": "--key"}.get(field, "--host")
        shown = text if flag == "--host" else err.get("input")
        raise InputError(f"{flag} {shown!r}: bad {field}: {err['msg']}; {_EXAMPLE if flag == '--host' else ''}"
                         .rstrip("; ")) from None
