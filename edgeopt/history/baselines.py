"""``baseline set`` that refuses to mix measurements: a name keeps pointing at runs of one model, runtime and target.

A baseline is what the qualify regression gate trusts; a name moved to a run of another model or runtime would
turn the next gate into a comparison of unrelated numbers. :func:`set_baseline` refuses that (exit code 2) with
the same notes as ``edgeopt compare``, unless ``force`` is given.
"""

from __future__ import annotations

from .identity import RunIdentity, blocking_notes, comparability_notes
from .records import Baseline
from .store import HistoryError, HistoryStore


def baseline_conflicts(store: HistoryStore, name: str, run: int | str) -> list[str]:
    """Why pointing ``name`` at ``run`` would mix models, runtimes or targets (empty when it would not).

    Raises:
        HistoryError: ``run`` does not exist.
    """
    new = RunIdentity.of(store.get(run))
    out: list[str] = []
    for b in store.baselines():
        if b.name != name:
            continue
        old = RunIdentity.of(store.get(b.run_id))
        out.extend(f"{name}@{b.device} (run {b.run_id}): {n}"
                   for n in blocking_notes(comparability_notes(old, new)))
    return out


def set_baseline(store: HistoryStore, name: str, run: int | str, *, force: bool = False) -> Baseline:
    """Point baseline ``name`` at ``run`` unless the name already points at runs of another model/runtime/target.

    Raises:
        HistoryError: an unknown run, a bad name, or a conflict without ``force`` (exit code 2).
    """
    conflicts = [] if force else baseline_conflicts(store, name, run)
    if conflicts:
        raise HistoryError(f"baseline '{name}' would compare unrelated runs: {'; '.join(conflicts)}; use a new name "
                           "(e.g. one per model and runtime) or --force to replace it anyway")
    return store.set_baseline(name, run)
