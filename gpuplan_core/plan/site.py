"""The answer's energy, carbon, owning and price tiers: the pricing/energy.py arithmetic applied to the pick of a
scenario, at the scenario's site (its region, PUE, electricity price, grid intensity and an owner's costs)."""

from __future__ import annotations

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
from ..scenario.scenario import Scenario


def _site(sc: Scenario):
    s = sc.site
    return site_figures(s.region, s.pue, s.electricity_usd_per_kwh, s.grid_gco2_per_kwh)


def _busy_gpus(p: Pick) -> int:
    """The GPUs that run (a whole node rented for fewer idles the rest)."""
    return p.tp * p.pp * p.replicas


def pick_energy(sc: Scenario, p: Pick) -> EnergyReport | None:
    """The pick's energy, cost and CO2 at the site (None for a chip with no published power figure)."""
    gpu = get_gpu(p.gpu)
    phase = "serving" if sc.job.mode == "inference" else "training"
    draw, site = power_draw(gpu, phase), _site(sc)
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
    monthly = energy_kwh(_busy_gpus(p) * sc.pricing.hours_per_month, draw.watts, site.pue)
    capacity = (p.requests_per_s_per_replica or 0) * p.replicas * sc.request.output_tokens  # output tokens/s
    tokens, basis = monthly_output_tokens(
        sc.traffic.requests_per_day,
        sc.request.output_tokens,
        sc.pricing.hours_per_month,
        capacity,
        sc.pricing.utilization,
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


def pick_own(sc: Scenario, p: Pick) -> OwnReport | None:
    """Owning the pick's GPUs (None where no server price is known and the user gave none)."""
    gpu = get_gpu(p.gpu)
    if sc.site.server_usd_per_gpu is not None:
        price, source = sc.site.server_usd_per_gpu, "your price"
    elif (known := server_price_per_gpu(gpu)) is not None:
        price, source = known
    else:
        return None
    phase = "serving" if sc.job.mode == "inference" else "training"
    draw, site = power_draw(gpu, phase), _site(sc)
    if draw is None:
        return None
    o = own_vs_rent(
        p.gpus,
        price,
        sc.site.amortisation_years,
        draw.watts,
        gpu.tdp_w + draw.host_watts,
        site.pue,
        site.usd_per_kwh,
        sc.site.hosting_usd_per_kw_month,
        p.price_per_gpu_hour_usd,
        sc.pricing.hours_per_month,
        sc.site.own_utilization,
    )
    return OwnReport(
        gpu=gpu.gpu,
        gpus=p.gpus,
        server_usd_per_gpu=price,
        server_price_source=source,
        amortisation_years=sc.site.amortisation_years,
        utilization=sc.site.own_utilization,
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


def price_tiers(sc: Scenario, p: Pick, offers: list[Offer]) -> list[PriceTier]:
    """For the pick's GPU type: the cheapest offer of each billing model (serverless aside), at the pick's GPUs."""
    best: dict[str, Offer] = {}
    for o in offers:
        if o.gpu != p.gpu or o.is_serverless or o.layout_problem(p.tp, 1):
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
        eff = o.price_per_gpu_hour_usd * (1 + sc.pricing.spot_restart_overhead if bm == "spot" else 1)
        out.append(
            PriceTier(
                billing_model=bm,
                offer_id=o.offer_id,
                provider=o.provider,
                price_per_gpu_hour_usd=o.price_per_gpu_hour_usd,
                effective_usd_per_gpu_hour=eff,
                monthly_usd=eff * p.gpus * sc.pricing.hours_per_month,
                commitment=COMMITMENT.get(bm, bm),
            )
        )
    return out
