"""``edgeopt sweep MODEL --devices SELECTION``: the sweep's host side once (:mod:`.host`), then one measuring job per
device (:mod:`.job`) on the fleet's executor layer (:mod:`edgeopt.fleet`); :func:`fleet_sweep` is the entry. The
driver (:mod:`.drive`) and the result (:mod:`.result`) serve every model kind's fleet sweep."""

from .api import fleet_sweep
from .result import FleetSweepResult, FleetSweepRow

__all__ = ["FleetSweepResult", "FleetSweepRow", "fleet_sweep"]
