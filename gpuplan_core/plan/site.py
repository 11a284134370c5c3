"""The answer's energy, carbon, owning and price tiers: the pricing/energy.py arithmetic applied to the pick of a
scenario, at the scenario's site (its region, PUE, electricity price, grid intensity and an owner's costs).

Each function reads a ``SiteAsk``: the site, the prices' terms (hours a month, utilization, spot restarts), the
phase and the traffic's output tokens, built once from the Scenario (a Scenario given is read as its ask)."""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.catalog import get_gpu
from ..pricing.energy import (
    EnergyReport,
    OwnReport,
    PriceTier,
    co2_kg,
    energy_kwh,
    kwh_per_million_tokens,
    monthly_output_tokens,
    own_vs_rent,
    power_draw,
    server_price_per_gpu,
    site_figures,
)
from ..pricing.offers import Offer
from ..results.plan import Pick
from ..scenario.deployment import Pricing
from ..scenario.scenario import Scenario
from ..scenario.site import Site


@dataclass(frozen=True)
class SiteAsk:
    """What the answer's energy, owning and price tiers read of the question."""

    site: Site
    pricing: Pricing
    phase: str  # "serving" or "training"
    requests_per_day: float | None = None
    output_tokens: int = 0

    @classmethod
    def of(cls, sc: Scenario | SiteAsk) -> SiteAsk:
        if isinstance(sc, SiteAsk):
            return sc
        phase = "serving" if sc.job.mode == "inference" else "training"
        return cls(sc.site, sc.pricing, phase, sc.traffic.requests_per_day, sc.request.output_tokens)


def _site(s: Site):
    return site_figures(s.region, s.pue, s.electricity_usd_per_kwh, s.grid_gco2_per_kwh)


def _busy_gpus(p: Pick) -> int:
    """The GPUs that run (a whole node rented for fewer idles the rest): both pools of a disaggregated pick (as
    Pick.running_gpus, read here field by field)."""
    if (d := p.disaggregated) is not None:
        return d.prefill.gpus + d.decode.gpus
    ep = (p.ep or 1) if p.micro_batch is None else 1  # Pick.replica_gpus: an EP serving replica spans ep GPUs
    return p.tp * p.pp * ep * p.replicas


def pick_energy(scenario: Scenario | SiteAsk, p: Pick) -> EnergyReport | None:
    """The pick's energy, cost and CO2 at the site (None for a chip with no published power figure)."""
    ask = SiteAsk.of(scenario)
    gpu, phase = get_gpu(p.gpu), ask.phase
    draw, site = power_draw(gpu, phase), _site(ask.site)
    if draw is None:
        return None
    common = dict(
        phase=phase,
        gpu=gpu.gpu,
        gpus=_busy_gpus(p),
        power_watts_per_gpu=draw.watts,
        power_fraction=draw.fraction,
        host_watts_per_gpu=draw.host_watts,
        power_source=draw.source,
        pue=site.pue,
        region=site.region,
        region_label=site.label,
        electricity_usd_per_kwh=site.usd_per_kwh,
        electricity_price_published=site.price_published,
        electricity_price_note=site.price_note,
        grid_gco2_per_kwh=site.gco2_per_kwh,
        site_source=site.source,
    )
    if phase == "training":
        kwh = energy_kwh(_busy_gpus(p) * (p.wall_hours or 0.0), draw.watts, site.pue)
        return EnergyReport(
            **common, energy_kwh=kwh, energy_cost_usd=kwh * site.usd_per_kwh, co2_kg=co2_kg(kwh, site.gco2_per_kwh)
        )
    monthly = energy_kwh(_busy_gpus(p) * ask.pricing.hours_per_month, draw.watts, site.pue)
    capacity = (p.requests_per_s_per_replica or 0) * p.replicas * ask.output_tokens  # output tokens/s
    tokens, basis = monthly_output_tokens(
        ask.requests_per_day,
        ask.output_tokens,
        ask.pricing.hours_per_month,
        capacity,
        ask.pricing.utilization,
    )
    per_m = None if not tokens else kwh_per_million_tokens(monthly, tokens)
    return EnergyReport(
        **common,
        monthly_energy_kwh=monthly,
        monthly_energy_cost_usd=monthly * site.usd_per_kwh,
        monthly_co2_kg=co2_kg(monthly, site.gco2_per_kwh),
        monthly_output_tokens=tokens,
        output_tokens_basis=basis,
        energy_kwh_per_million_output_tokens=per_m,
        co2_g_per_million_output_tokens=None if per_m is None else per_m * site.gco2_per_kwh,
        tokens_per_kwh=None if not per_m else 1e6 / per_m,
    )


def pick_own(scenario: Scenario | SiteAsk, p: Pick) -> OwnReport | None:
    """Owning the pick's GPUs (None where no server price is known and the user gave none)."""
    ask = SiteAsk.of(scenario)
    gpu, own = get_gpu(p.gpu), ask.site
    if own.server_usd_per_gpu is not None:
        price, source = own.server_usd_per_gpu, "your price"
    elif (known := server_price_per_gpu(gpu)) is not None:
        price, source = known
    else:
        return None
    draw, site = power_draw(gpu, ask.phase), _site(own)
    if draw is None:
        return None
    o = own_vs_rent(
        p.gpus,
        price,
        own.amortisation_years,
        draw.watts,
        gpu.tdp_w + draw.host_watts,
        site.pue,
        site.usd_per_kwh,
        own.hosting_usd_per_kw_month,
        p.price_per_gpu_hour_usd,
        ask.pricing.hours_per_month,
        own.own_utilization,
    )
    return OwnReport(
        gpu=gpu.gpu,
        gpus=p.gpus,
        server_usd_per_gpu=price,
        server_price_source=source,
        amortisation_years=own.amortisation_years,
        utilization=own.own_utilization,
        capex_usd=o.capex_usd,
        monthly_own_usd=o.monthly_own_usd,
        monthly_capex_usd=o.monthly_capex_usd,
        monthly_power_usd=o.monthly_power_usd,
        monthly_hosting_usd=o.monthly_hosting_usd,
        monthly_rent_usd=o.monthly_rent_usd,
        rent_usd_per_gpu_hour=p.price_per_gpu_hour_usd,
        break_even_months=o.break_even_months,
        break_even_utilization=o.break_even_utilization,
    )


COMMITMENT = {
    "on_demand": "none: by the hour",
    "spot": "none, but the machines can be reclaimed (restarts from checkpoints)",
    "reserved": "a term commitment (see the offer's source)",
}


def price_tiers(scenario: Scenario | SiteAsk, p: Pick, offers: list[Offer]) -> list[PriceTier]:
    """For the pick's GPU type: the cheapest offer of each billing model (serverless aside), at the pick's GPUs."""
    pricing = SiteAsk.of(scenario).pricing
    best: dict[str, Offer] = {}
    for o in offers:
        ep = (p.ep or 1) if p.micro_batch is None else 1  # an EP serving replica's ep GPUs share one machine
        if o.gpu != p.gpu or o.is_serverless or o.layout_problem(p.tp, 1, ep):
            continue
        if p.gpus > o.machine_gpus and not o.fast_network:  # a coupled job across machines needs RDMA
            continue
        cur = best.get(o.billing_model)
        if cur is None or o.price_per_gpu_hour_usd < cur.price_per_gpu_hour_usd:
            best[o.billing_model] = o
    out = []
    for bm in ("on_demand", "spot", "reserved"):
        if bm not in best:
            continue
        o = best[bm]
        eff = o.price_per_gpu_hour_usd * (1 + pricing.spot_restart_overhead if bm == "spot" else 1)
        out.append(
            PriceTier(
                billing_model=bm,
                offer_id=o.offer_id,
                provider=o.provider,
                price_per_gpu_hour_usd=o.price_per_gpu_hour_usd,
                effective_usd_per_gpu_hour=eff,
                monthly_usd=eff * p.gpus * pricing.hours_per_month,
                commitment=COMMITMENT.get(bm, bm),
            )
        )
    return out
