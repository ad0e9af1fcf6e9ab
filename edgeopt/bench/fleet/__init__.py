"""``fleet_benchmark``: one model on many devices at once through the fleet's executor layer (:mod:`edgeopt.fleet`),
one row per device plus the fleet's view (medians, spread, outliers; docs/fleet.md)."""

from .aggregate import DEFAULT_OUTLIER_PCT, aggregate, conditions
from .api import default_deadline_s, fleet_benchmark

__all__ = ["DEFAULT_OUTLIER_PCT", "aggregate", "conditions", "default_deadline_s", "fleet_benchmark"]
