"""Energy, carbon and owning: what a run or a month of serving draws from the grid, what that costs and emits, and
what owning the hardware would cost beside renting it.

    average watts per GPU = TDP x measured power fraction (per GPU and phase, data/power.csv) + the host's share
    energy (kWh)          = GPU-hours x average watts / 1,000 x PUE
    energy cost (USD)     = kWh x electricity price            CO2 (kg) = kWh x grid intensity (g/kWh) / 1,000
    serving, a month      = GPUs x hours a month x average watts / 1,000 x PUE
    per 1M output tokens  = the month's kWh / the month's output tokens x 10^6, the month's output tokens at the
                            scenario's traffic (requests a day x output tokens x days a month), or without a traffic
                            estimate the replicas' capacity busy the utilization's share of the hours

    owning, a month       = server price per GPU x GPUs / (years x 12)
                            + GPUs x average watts x PUE x hours a month x utilization / 1,000 x electricity price
                            + GPUs x (TDP + host watts) / 1,000 x hosting USD per kW-month
    renting, a month      = the rental's price per GPU-hour x GPUs x hours a month x utilization
    break-even (months)   = capex / (renting a month - owning's running costs a month), when renting costs more and
                            that is within the amortisation years (else owning never pays back)
    owning wins above the utilization u where rent x u = capex a month + hosting + power x u

Average power is not TDP: the fractions are measured (MLPerf Power, vendor and benchmark measurements; sources per
row). The region (data/regions.csv) gives the grid intensity, the electricity price and the PUE unless the user
gives them, each with its own source; a region with no published tariff read is priced at the US industrial
average and says so (SiteFigures.price_published, price_note), never silently. Server prices per GPU type come from
data/ownership.csv (each with its source and date).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd
from pydantic import BaseModel, Field

from ..common.data import DATA_DIR
from ..hardware.catalog import GPU

POWER_FILE, REGIONS_FILE, OWNERSHIP_FILE = "power.csv", "regions.csv", "ownership.csv"


@lru_cache(maxsize=1)
def power_table() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / POWER_FILE)


@lru_cache(maxsize=1)
def regions_table() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / REGIONS_FILE)


@lru_cache(maxsize=1)
def ownership_table() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / OWNERSHIP_FILE)


@dataclass(frozen=True)
class PowerDraw:
    """One GPU's average draw in a phase, with where the figure comes from."""

    gpu_watts: float
    host_watts: float
    fraction: float
    source: str

    @property
    def watts(self) -> float:
        return self.gpu_watts + self.host_watts


def power_draw(gpu: GPU, phase: str) -> PowerDraw | None:
    """The GPU's measured average power fraction in ``phase`` (training | serving), else the default row's; None
    for a chip whose vendor publishes no board power (TPUs, Trainium, Inferentia)."""
    if gpu.tdp_w is None:
        return None
    return _power_draw(gpu.gpu, gpu.tdp_w, phase)


@lru_cache(maxsize=512)
def _power_draw(gpu: str, tdp_w: float, phase: str) -> PowerDraw:
    """``power_draw``'s row look-up, remembered (the table is read once; a pandas filter costs ~1 ms an answer)."""
    t = power_table()
    rows = t[(t.gpu == gpu) & (t.phase == phase)]
    if rows.empty:
        rows = t[(t.gpu == "*") & (t.phase == phase)]
    r = rows.iloc[0]
    host = 0.0 if pd.isna(r.host_watts_per_gpu) else float(r.host_watts_per_gpu)
    frac = float(r.power_fraction)
    return PowerDraw(tdp_w * frac, host, frac, str(r.source))


@dataclass(frozen=True)
class SiteFigures:
    """The site's grid, electricity price and PUE, each the user's or the region's. ``price_published`` is False
    where the region has no published tariff (then ``price_note`` says what the price stands in for)."""

    region: str
    label: str
    pue: float
    usd_per_kwh: float
    gco2_per_kwh: float
    source: str
    price_published: bool = True
    price_note: str = ""


# A region with no published tariff read is priced at this region's (named on every page that shows it).
PRICE_STAND_IN_REGION = "us-average"


def region_ids() -> list[str]:
    return [str(r) for r in regions_table().region]


@lru_cache(maxsize=512)
def site_figures(region: str, pue: float | None, usd_per_kwh: float | None, gco2: float | None) -> SiteFigures:
    """The site's figures: the region's row (read once), each replaced by the user's where given; remembered."""
    t = regions_table()
    rows = t[t.region == region]
    if rows.empty:
        raise ValueError(f"region: {region!r} is not one of {', '.join(region_ids())}")
    r = rows.iloc[0]
    price_source, published, note = str(r.source_price), True, ""
    if usd_per_kwh is None:
        if pd.isna(r.electricity_usd_per_kwh):  # no published tariff read: the stand-in region's, said so
            stand_in = t[t.region == PRICE_STAND_IN_REGION].iloc[0]
            usd_per_kwh, published = float(stand_in.electricity_usd_per_kwh), False
            note = (
                f"no published electricity tariff read for {r.label}: priced at {stand_in.label}'s "
                f"{usd_per_kwh:.4g} USD/kWh until you give yours (Site and owning)"
            )
            price_source = f"{note}; {stand_in.source_price}"
        else:
            usd_per_kwh = float(r.electricity_usd_per_kwh)
    else:
        price_source = "your price"
    return SiteFigures(
        region=region,
        label=str(r.label),
        pue=float(pue if pue is not None else r.pue),
        usd_per_kwh=float(usd_per_kwh),
        gco2_per_kwh=float(gco2 if gco2 is not None else r.grid_gco2_per_kwh),
        source=f"grid: {r.source_grid}; price: {price_source}; PUE: {r.source_pue}",
        price_published=published,
        price_note=note,
    )


def energy_kwh(gpu_hours: float, watts_per_gpu: float, pue: float) -> float:
    """GPU-hours x average watts / 1,000 x PUE."""
    return gpu_hours * watts_per_gpu / 1000 * pue


def co2_kg(kwh: float, gco2_per_kwh: float) -> float:
    return kwh * gco2_per_kwh / 1000


def kwh_per_million_tokens(monthly_kwh: float, monthly_output_tokens: float) -> float:
    """The month's kWh / the month's output tokens x 10^6: multiplied back by the month's tokens / 10^6, the
    month's kWh."""
    if monthly_output_tokens <= 0:
        return math.inf
    return monthly_kwh / monthly_output_tokens * 1e6


def monthly_output_tokens(
    requests_per_day: float | None,
    output_tokens: int,
    hours_per_month: float,
    capacity_tokens_per_s: float | None,
    utilization: float,
) -> tuple[float | None, str]:
    """(The month's output tokens, how they are counted): at the traffic, requests a day x output tokens x days a
    month; without a traffic estimate, the replicas' capacity (output tokens/s) x seconds a month x the utilization
    (the busy share); None when neither is known."""
    days = hours_per_month / 24
    if requests_per_day:
        return requests_per_day * output_tokens * days, (
            f"{requests_per_day:,.0f} requests a day x {output_tokens:,} output tokens x {days:.4g} days"
        )
    if capacity_tokens_per_s:
        tokens = capacity_tokens_per_s * hours_per_month * 3600 * utilization
        return tokens, f"the replicas' capacity busy {utilization:.0%} of {hours_per_month:g} hours (no traffic given)"
    return None, ""


def server_price_per_gpu(gpu: GPU) -> tuple[float, str] | None:
    """(USD per GPU, source) of buying a server of this GPU type, where a public figure exists."""
    return _server_price(gpu.gpu)


@lru_cache(maxsize=512)
def _server_price(gpu: str) -> tuple[float, str] | None:
    t = ownership_table()
    rows = t[t.gpu == gpu]
    if rows.empty:
        return None
    r = rows.iloc[0]
    return float(r.server_usd_per_gpu), f"{r.source} ({r.basis}, {r.as_of})"


@dataclass(frozen=True)
class OwnVsRent:
    """Owning the GPUs against renting them, a month at a time (USD)."""

    capex_usd: float
    monthly_capex_usd: float
    monthly_power_usd: float
    monthly_hosting_usd: float
    monthly_rent_usd: float
    break_even_months: float | None  # None: owning never pays back at this utilization
    break_even_utilization: float | None  # owning wins above this share of busy hours; None: never up to 100%

    @property
    def monthly_own_usd(self) -> float:
        return self.monthly_capex_usd + self.monthly_power_usd + self.monthly_hosting_usd


def own_vs_rent(
    gpus: int,
    server_usd_per_gpu: float,
    years: float,
    watts_per_gpu: float,
    peak_watts_per_gpu: float,
    pue: float,
    usd_per_kwh: float,
    hosting_usd_per_kw_month: float,
    rent_usd_per_gpu_hour: float,
    hours_per_month: float,
    utilization: float,
) -> OwnVsRent:
    """The module docstring's owning and renting months, for ``gpus`` GPUs busy ``utilization`` of the hours."""
    capex = server_usd_per_gpu * gpus
    capex_m = capex / (years * 12)
    power_full = gpus * watts_per_gpu / 1000 * pue * hours_per_month * usd_per_kwh  # busy every hour
    hosting = gpus * peak_watts_per_gpu / 1000 * hosting_usd_per_kw_month
    rent_full = rent_usd_per_gpu_hour * gpus * hours_per_month
    rent, power = rent_full * utilization, power_full * utilization
    saving = rent - power - hosting
    months = capex / saving if saving > 0 else None
    if months is not None and months > years * 12:  # not within the hardware's life
        months = None
    margin = rent_full - power_full
    u_star = (capex_m + hosting) / margin if margin > 0 else None
    return OwnVsRent(
        capex, capex_m, power, hosting, rent, months, u_star if u_star is not None and u_star <= 1 else None
    )


# ---- typed results (the answer carries them; cost --json flattens the energy keys) ----------------------------


class EnergyReport(BaseModel):
    """What the answer draws and emits: a training run's total, or a month of serving and per 1M output tokens."""

    phase: str = Field(description="training | serving")
    gpu: str
    gpus: int = Field(description="GPUs drawing power (the layout's, busy the whole run or month)")
    power_watts_per_gpu: float = Field(description="average: TDP x the measured fraction + the host's share")
    power_fraction: float = Field(description="average board power / TDP in this phase (measured, data/power.csv)")
    host_watts_per_gpu: float
    power_source: str
    pue: float
    region: str
    region_label: str
    electricity_usd_per_kwh: float
    electricity_price_published: bool = Field(
        True, description="False: the region has no published tariff; the price stands in (electricity_price_note)"
    )
    electricity_price_note: str = Field("", description="what a stand-in price stands in for, in words")
    grid_gco2_per_kwh: float
    site_source: str
    energy_kwh: float | None = Field(None, description="training: the run's kWh (GPU-hours x watts x PUE)")
    energy_cost_usd: float | None = Field(None, description="training: kWh x electricity price")
    co2_kg: float | None = Field(None, description="training: kWh x grid intensity")
    monthly_energy_kwh: float | None = Field(None, description="serving: the always-on GPUs' kWh a month")
    monthly_energy_cost_usd: float | None = None
    monthly_co2_kg: float | None = None
    monthly_output_tokens: float | None = Field(
        None, description="serving: the month's output tokens (at the traffic, else the capacity x utilization)"
    )
    output_tokens_basis: str = Field("", description="serving: how the month's output tokens are counted, in words")
    energy_kwh_per_million_output_tokens: float | None = Field(
        None, description="serving: the month's kWh / the month's output tokens x 10^6"
    )
    co2_g_per_million_output_tokens: float | None = None
    tokens_per_kwh: float | None = Field(None, description="serving: output tokens per kWh")


class OwnReport(BaseModel):
    """Owning the answer's GPUs beside renting them (USD)."""

    gpu: str
    gpus: int
    server_usd_per_gpu: float
    server_price_source: str
    amortisation_years: float
    utilization: float = Field(description="share of hours the hardware is busy")
    capex_usd: float
    monthly_own_usd: float = Field(description="amortisation + power + hosting a month")
    monthly_capex_usd: float
    monthly_power_usd: float
    monthly_hosting_usd: float
    monthly_rent_usd: float = Field(description="the rental's price x GPUs x hours a month x utilization")
    rent_usd_per_gpu_hour: float
    break_even_months: float | None = Field(
        None, description="capex / monthly saving; None: not within the amortisation years at this use"
    )
    break_even_utilization: float | None = Field(None, description="owning wins above this share of busy hours")

    def cumulative(self, months: int) -> list[tuple[int, float, float]]:
        """(month, owning so far, renting so far): the purchase up front, then each month's running costs."""
        run = self.monthly_power_usd + self.monthly_hosting_usd
        return [(m, self.capex_usd + run * m, self.monthly_rent_usd * m) for m in range(months + 1)]


class PriceTier(BaseModel):
    """The cheapest offer of one billing model for the answer's GPU type."""

    billing_model: str
    offer_id: str
    provider: str
    price_per_gpu_hour_usd: float
    effective_usd_per_gpu_hour: float = Field(description="spot: x (1 + restart overhead); others as priced")
    monthly_usd: float = Field(description="the answer's GPUs x effective price x hours a month")
    commitment: str = Field(description="what the price binds you to, in words")
