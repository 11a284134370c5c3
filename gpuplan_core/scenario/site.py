"""Where the hardware runs and what owning it costs: the site's region (grid carbon intensity, electricity price,
PUE) and the owner's server price, amortisation and hosting. Every default is sourced in data/regions.csv and
data/ownership.csv (None: the region's or GPU type's sourced default)."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..pricing.energy import region_ids
from .parts import Part


class Site(Part):
    """The data centre's region and an owner's costs."""

    region: str = Field(
        "us-virginia",
        min_length=1,
        max_length=60,
        description="Where the machines run: sets the grid's carbon intensity, the electricity price and the PUE "
        "(data/regions.csv, each with its source). Default: Northern Virginia, the largest data-centre market, "
        "with all three figures published.",
    )
    pue: float | None = Field(
        None, ge=1, le=3, description="Power usage effectiveness: facility power / IT power. None: the region's."
    )
    electricity_usd_per_kwh: float | None = Field(
        None, gt=0, le=5, description="Electricity price in USD per kWh. None: the region's."
    )
    grid_gco2_per_kwh: float | None = Field(
        None, ge=0, le=1500, description="Grid carbon intensity in grams of CO2 per kWh. None: the region's."
    )
    server_usd_per_gpu: float | None = Field(
        None,
        gt=0,
        le=10_000_000,
        description="Owning: a server's purchase price per GPU, host included. None: the GPU type's sourced default.",
    )
    amortisation_years: float = Field(
        5.0,
        ge=0.5,
        le=15,
        description="Owning: years the purchase is spread over, straight line (Epoch AI assumes 5 for servers "
        "bought from 2023).",
    )
    hosting_usd_per_kw_month: float = Field(
        184.06,
        ge=0,
        le=10_000,
        description="Owning: colocation (space, cooling, network) per kW of contracted IT load a month (CBRE North "
        "America data-centre trends H2 2024); electricity is billed on top.",
    )
    own_utilization: float = Field(
        1.0,
        ge=0.05,
        le=1,
        description="Owning vs renting: the share of hours the hardware is busy (renting by the hour pays only "
        "for those; owning pays for every hour).",
    )

    @field_validator("region")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in region_ids():
            raise ValueError(f"region: {v!r} is not one of {', '.join(region_ids())}")
        return v
