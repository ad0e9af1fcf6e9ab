"""Energy cost and CO2 of running a model a million times, from its energy per inference.

``kWh per million inferences = energy_mj x 1e6 / 1000 (J) / 3.6e6 (J per kWh)``; cost = kWh x price per kWh;
CO2 = kWh x grid carbon intensity. Grid intensity ranges from about 50 g CO2/kWh (hydro/nuclear-heavy grids) to
about 800 (coal-heavy); the world average is near 450. When the energy figure is an ESTIMATE (from the target's
TDP, no power sensor), so are the cost and the CO2, and :class:`CostEstimate` says so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError

JOULES_PER_KWH = 3.6e6
INFERENCES = 1_000_000
TYPICAL_CARBON_G_PER_KWH = (50.0, 800.0)
DEFAULT_PRICE_PER_KWH = 0.30
DEFAULT_CARBON_G_PER_KWH = 450.0


class CostSettings(BaseModel):
    """Electricity price and grid carbon intensity (the spec's ``costs:`` block)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    price_per_kwh: float = Field(default=DEFAULT_PRICE_PER_KWH, ge=0, description="Electricity price per kWh.")
    currency: str = Field(default="EUR", min_length=1, max_length=8,
        description="Currency of the price (a label only).")
    carbon_g_per_kwh: float = Field(default=DEFAULT_CARBON_G_PER_KWH, ge=0, le=2000,
        description="Grid carbon intensity, g CO2 per kWh (typical 50-800; world average about 450).")


class CostEstimate(BaseModel):
    """Energy, cost and CO2 per million inferences."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    energy_per_inference_mj: float
    kwh_per_million: float = Field(description="kWh for one million inferences.")
    cost_per_million: float = Field(description="Electricity cost of one million inferences, in `currency`.")
    currency: str
    co2_g_per_million: float = Field(description="Grams of CO2 for one million inferences.")
    price_per_kwh: float
    carbon_g_per_kwh: float
    source: Literal["measured", "estimate"] = Field(description="Where the energy figure came from.")
    note: str = Field(description="What the numbers assume; says ESTIMATE when they derive from one.")


def cost_per_million(
    energy_per_inference_mj: float,
    *,
    source: Literal["measured", "estimate"],
    settings: CostSettings | None = None,
) -> CostEstimate:
    """Cost and CO2 of one million inferences at ``energy_per_inference_mj``.

    Raises:
        InputError: a negative or non-finite energy figure.
    """
    s = settings or CostSettings()
    if not energy_per_inference_mj >= 0 or energy_per_inference_mj == float("inf"):
        raise InputError(f"energy per inference {energy_per_inference_mj!r} mJ: needs a finite value >= 0")
    kwh = energy_per_inference_mj * 1e-3 * INFERENCES / JOULES_PER_KWH
    low, high = TYPICAL_CARBON_G_PER_KWH
    parts = [f"{s.price_per_kwh:g} {s.currency}/kWh, {s.carbon_g_per_kwh:g} g CO2/kWh, device energy only "
             "(no cooling, networking or idle time between requests)"]
    if not low <= s.carbon_g_per_kwh <= high:
        parts.append(f"carbon intensity outside the typical {low:g}-{high:g} g/kWh range: check it")
    if source == "estimate":
        parts.insert(0, "ESTIMATE: derived from an estimated energy per inference (target TDP, no power sensor)")
    return CostEstimate(
        energy_per_inference_mj=energy_per_inference_mj,
        kwh_per_million=kwh,
        cost_per_million=kwh * s.price_per_kwh,
        currency=s.currency,
        co2_g_per_million=kwh * s.carbon_g_per_kwh,
        price_per_kwh=s.price_per_kwh,
        carbon_g_per_kwh=s.carbon_g_per_kwh,
        source=source,
        note="; ".join(parts),
    )
