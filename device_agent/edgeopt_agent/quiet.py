"""Wait until the other runtimes resident in a served agent stop using the CPU, before a run is timed.

A served agent keeps the models of earlier requests loaded (loaded.py), and with them their runtimes' thread
pools. ONNX Runtime's intra-op workers spin after a session's last inference (``session.intra_op.allow_spinning``,
on by default): ~55 ms of CPU per worker, measured here on the 224x224 text-orientation classifier at 2 threads,
stretched over ~200 ms of wall time on a loaded machine. A level timed right after another kept ORT session ran
shares the cores with that spinning thread: on 2 cores FP32's ORT run read 1.16-1.36x slower after another ORT
session's run than after its own (paired, in one process: docs/sweep.md "Sessions of other levels"), and a sweep's
ranking, whose round order put the FP32 ORT level after an ORT level every time, called FP16 (1.3x slower in fresh
processes) a tie with it (issue 32). A deployment runs its one model in its own process: no other session spins
beside it.

So before a run in a served agent with other models kept, the agent waits until its own process is quiet: this
process's CPU time (every thread: the runtimes' pools included, ``time.process_time``) below :data:`QUIET_SHARE` of
one core in :data:`QUIET_WINDOWS` windows in a row (on a loaded machine a spinning thread can go a whole window
without a core, so one quiet window is not proof), at most :data:`MAX_WAIT_S`. Other processes' load does not count
(that is cpu_share.py's), so the wait ends on a busy machine too. Standard library only.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict

WINDOW_S = 0.01  # one look: this long asleep, then this process's CPU time over it
QUIET_SHARE = 0.1  # of one core: a spinning worker uses ~1 (an idle process ~0)
QUIET_WINDOWS = 3  # quiet windows in a row that end the wait
MAX_WAIT_S = 1.0  # a pool that never rests (a runtime's background thread) does not stall the run longer


def wait_quiet(window_s: float = WINDOW_S, quiet_share: float = QUIET_SHARE, windows: int = QUIET_WINDOWS,
               max_wait_s: float = MAX_WAIT_S, cpu: Callable[[], float] = time.process_time,
               clock: Callable[[], float] = time.perf_counter,
               sleep: Callable[[float], None] = time.sleep) -> Dict[str, Any]:
    """Sleep in windows of ``window_s`` until ``windows`` in a row in which this process used under ``quiet_share``
    of one core, or ``max_wait_s`` has passed.

    Returns:
        ``waited_s`` (wall time spent), ``quiet`` (False: ``max_wait_s`` ran out first) and ``cpu_share`` (this
        process's CPU share of one core in the last window): the run's ``environment["quiesce"]``.
    """
    start = clock()
    calm = 0
    while True:
        c0, w0 = cpu(), clock()
        sleep(window_s)
        share = (cpu() - c0) / max(clock() - w0, 1e-9)
        calm = calm + 1 if share < quiet_share else 0
        waited = clock() - start
        if calm >= windows or waited >= max_wait_s:
            return {"waited_s": round(waited, 4), "quiet": calm >= windows, "cpu_share": round(share, 3)}
