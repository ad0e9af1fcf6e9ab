"""Cost and CO2 per million inferences, and the plain statement when they derive from an estimate."""

import pytest
from pydantic import ValidationError

from edgeopt.errors import InputError
from edgeopt.qualify.costs import CostSettings, cost_per_million


def test_arithmetic():
    # 36 mJ x 1e6 = 36 kJ = 0.01 kWh
    c = cost_per_million(36.0, source="measured", settings=CostSettings(price_per_kwh=0.25, carbon_g_per_kwh=400))
    assert c.kwh_per_million == pytest.approx(0.01)
    assert c.cost_per_million == pytest.approx(0.0025) and c.co2_g_per_million == pytest.approx(4.0)
    assert c.source == "measured" and not c.note.startswith("ESTIMATE") and "0.25 EUR/kWh" in c.note


def test_estimates_and_unusual_grids_are_said_so():
    c = cost_per_million(36.0, source="estimate")
    assert c.note.startswith("ESTIMATE") and c.carbon_g_per_kwh == 450 and c.price_per_kwh == 0.30
    odd = cost_per_million(1.0, source="measured", settings=CostSettings(carbon_g_per_kwh=10))
    assert "outside the typical 50-800" in odd.note


def test_bad_values():
    with pytest.raises(InputError):
        cost_per_million(-1.0, source="measured")
    with pytest.raises(InputError):
        cost_per_million(float("nan"), source="measured")
    with pytest.raises(ValidationError):
        CostSettings(carbon_g_per_kwh=-5)
    with pytest.raises(ValidationError):
        CostSettings(price_per_kwh=-0.1)
