"""``edgeopt.benchmark``: measure a model on a target through the device agent (:mod:`.api`), every artifact of an
optimize manifest (:mod:`.manifest`), a batch/threads trade-off (:mod:`.tradeoff`) and a fleet of devices
(:mod:`.fleet`). Only the single benchmark is imported here: the fleet's executor layer runs
:func:`run_benchmark` on its workers."""

from .api import benchmark, run_benchmark

__all__ = ["benchmark", "run_benchmark"]
