"""``edgeopt.optimize``: a recipe's passes on a model for a target (:mod:`.api`), then how faithful each artifact
is (:mod:`.fidelity`, read as a table by :mod:`.fidelity_table`)."""

from .api import MANIFEST, SCHEMA_VERSION, DataInfo, OptimizeResult, optimize, optimize_graph

__all__ = ["MANIFEST", "SCHEMA_VERSION", "DataInfo", "OptimizeResult", "optimize", "optimize_graph"]
