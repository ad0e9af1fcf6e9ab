"""``python -m edgeopt``: the same CLI as the ``edgeopt`` command."""

from .cli.main import run

raise SystemExit(run())
