"""What each offer costs for the scenario: its best configuration, monthly always-on and per run, ranked cheapest
run first, with the first row's energy, owning and price tiers: the CostReport (results/cost.py) the Cost page and
``cost --json`` show, built here in one pass.

Which offers take part is the scenario's filters (``filter_offers``: its GPU type, billing, provider; interactive
serving leaves out spot). Serving rows are the layout search's picks (rent.py ``inference_candidates``), one per
offer in the plan's order (meets the targets first, then the cheapest); training rows are training_search.py's
candidates at the count the plan runs. Each pick carries the error band of its latencies (``with_band``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from ..common.units import SECONDS_PER_HOUR
from ..hardware.catalog import get_gpu
from ..model.arch import ModelArch
from ..model.formats import get_format
from ..perf.bands import perf_bands, serving_bands
from ..perf.calibration import eager_regime
from ..pricing.billing import monthly_always_on, run_cost
from ..pricing.offers import Offer
from ..results.cost import CostReport
from ..results.memory import model_summary
from ..results.plan import InferenceCostRow, Pick, Rejected, TrainingCostRow, layout_label
from ..scenario.deployment import Pricing
from ..scenario.layout import Parallelism
from ..scenario.parts import Job
from ..scenario.scenario import Scenario
from .disaggregated import disaggregated_pick
from .rent import Found, inference_candidates
from .search import ServingAsk
from .site import pick_energy, pick_own, price_tiers
from .training import TrainingCandidate
from .training_search import Trained, training_candidates


@lru_cache(maxsize=256)
def _is_gpu(name: str) -> bool:
    """Whether the catalog's row for this name is a GPU (the catalog is read once: remembered per name)."""
    return get_gpu(name).is_gpu


def filter_offers(offers: list[Offer], pricing: Pricing, gpu: str | None, interactive: bool) -> list[Offer]:
    """The scenario's filters: its GPU type (when one is chosen), billing and provider. Interactive serving leaves out
    interruptible (spot) offers unless the user asks for spot: a reclaimed server drops live users. Accelerators
    that are not GPUs (TPU, Trainium, Inferentia, Gaudi) take part only when the pricing allows them or the
    scenario names one as its GPU; otherwise the offers, and so the answers, are those of a GPU-only catalog."""
    gid = get_gpu(gpu).gpu if gpu else None
    want = (pricing.billing or "").lower()
    out = []
    for o in offers:
        if gid and o.gpu != gid:
            continue
        if not gid and not pricing.allow_accelerators and not _is_gpu(o.gpu):
            continue
        if o.interruptible and interactive and want != "spot":
            continue
        if pricing.provider and o.provider.lower() != pricing.provider.lower():
            continue
        if want == "serverless" and not o.is_serverless:
            continue
        if want == "reserved" and not o.billing_model.startswith("reserved"):
            continue
        if want and want not in ("serverless", "reserved") and o.billing_model != want:
            continue
        out.append(o)
    return out


def offers_for(offers: list[Offer], job: Job, pricing: Pricing, par: Parallelism) -> list[Offer]:
    """The offers the scenario's filters keep (``filter_offers``), for its job."""
    interactive = job.mode == "inference" and job.serving == "interactive"
    return filter_offers(offers, pricing, par.gpu, interactive)


@lru_cache(maxsize=4096)
def _band_text(moe: bool, gpu: str, fmt: str | None = None, eager: bool = False, batch: int = 1) -> str:
    """'TTFT ..., TPOT ...': serving under load (``fmt`` None), else the static batch's regime."""
    if fmt is None:
        b = serving_bands(moe, gpu)
        return f"TTFT {b['ttft_p95_s'].short}, TPOT {b['tpot_mean_s'].short}"
    b = perf_bands(gpu, fmt, moe, eager, batch)
    return f"TTFT {b['ttft_s'].short}, TPOT {b['tpot_s'].short}"


def with_band(ask: ServingAsk, m: ModelArch, p: Pick) -> Pick:
    """The pick (a copy) with the error band of its latencies: serving under load where there is traffic, else
    the static batch's regime (GPU generation x format)."""
    if p.ttft_s is None:
        return p
    if ask.traffic.requests_per_day:
        text = _band_text(m.is_moe, p.gpu)
    else:
        eager = eager_regime(ask.assumptions.engine)  # the band's regime (perf/calibration.py)
        text = _band_text(m.is_moe, p.gpu, p.weights_format, eager, ask.request.batch_or_one)
    return p.model_copy(update={"error_band": text})


def _own_training_layout(
    par: Parallelism, deadline_hours: float | None, cands: list[TrainingCandidate]
) -> tuple[list[TrainingCandidate], list[Rejected]]:
    """The candidates (priced without a deadline) that run the scenario's own layout: its GPU count, tp, pp and ZeRO
    stage, the deadline judged on that count; the others rejected (their GPU type needs another layout)."""
    own, rejected = [], []
    for c in cands:
        if (c.gpus, c.tp, c.pp) != (par.gpus, par.tp, par.pp) or (not par.zero_auto and c.zero_stage != par.zero_stage):
            why = (
                f"does not fit at the scenario's layout ({par.gpus} GPUs, TP {par.tp}, PP {par.pp}, "
                f"ZeRO-{par.zero_stage})"
            )
            rejected.append(
                Rejected(
                    c.gpu,
                    why,
                    c.weights_format,
                    c.offer.offer_id,
                    layout_label(c.gpu, par.tp, par.pp),
                )
            )
            continue
        if deadline_hours and c.wall_hours > deadline_hours * 1.0001:
            c.misses = [f"{c.wall_hours:,.0f} h > deadline {deadline_hours:,.0f} h"]
        own.append(c)
    return own, rejected


def _inference_rows(ask: ServingAsk, m: ModelArch, offers: list[Offer], found: Found) -> dict[str, Any]:
    """Per offer, its best serving configuration (the plan's order: meets the targets first, then the cheapest, of
    equal prices the faster), with a run: a day's requests as one batch job on its replicas, or an hour. The rows
    come cheapest run first (the report's offers, serverless and rejected)."""
    cands, rejected = found.picks, found.rejected
    best: dict[str, Pick] = {}
    for p in sorted(cands, key=lambda p: (bool(p.misses), p.rank_cost, p.ttft_s)):
        best.setdefault(p.offer_id, p)
    by_id = {o.offer_id: o for o in offers}
    rows, serverless = [], []
    rpd, pricing = ask.traffic.requests_per_day, ask.pricing
    for p in best.values():
        o = by_id[p.offer_id]
        p = with_band(ask, m, p)
        if o.is_serverless:  # no per-run cluster: the serverless table
            serverless.append(p)
            continue
        if rpd and (d := p.disaggregated) is not None:  # the split: its pools' smaller capacity, every GPU
            served = min(
                d.prefill.workers * d.prefill.requests_per_s_per_worker,
                d.decode.workers * d.decode.requests_per_s_per_worker,
            )
            runtime, gpus = rpd / served, d.prefill.gpus + d.decode.gpus
        elif rpd and p.requests_per_s_per_replica:
            runtime, gpus = rpd / (p.requests_per_s_per_replica * p.replicas), p.replica_gpus * p.replicas
        else:
            runtime, gpus = SECONDS_PER_HOUR, p.replica_gpus
        rc = run_cost(o, gpus, runtime, pricing.spot_restart_overhead, pricing.hours_per_month)
        rows.append(
            InferenceCostRow(
                **dict(p) | {"run_cost_usd": rc.run_cost_usd},
                run_hours=runtime / 3600,
                run_description="one day's requests as a batch job" if rpd else "one hour",
                monthly_always_on_usd=p.monthly_usd,
                notes=rc.notes,
            )
        )
    rows.sort(key=lambda r: r.run_cost_usd if r.run_cost_usd is not None else math.inf)
    return {"offers": rows, "serverless": serverless, "rejected": rejected}


def _training_rows(
    sc: Scenario, m: ModelArch, offers: list[Offer], fixed_layout: bool, trained: Trained | None = None
) -> dict[str, Any]:
    """Per training offer its run (cheapest first), what cannot run, and the job's size (FLOPs, tokens, the MFU of
    the cheapest run, the tokens' note). ``trained``: the training search of these offers (not with
    ``fixed_layout``), read as it is."""
    job = sc.with_(deadline_hours=None) if fixed_layout else sc
    cands, rejected, summary = trained if trained and not fixed_layout else training_candidates(m, job, offers)
    if fixed_layout:
        cands, not_own = _own_training_layout(sc.parallelism, sc.training.deadline_hours, cands)
        rejected += not_own
    training_rows = [
        TrainingCostRow(
            **c.model_dump(exclude={"meets_target"}),
            monthly_always_on_usd=monthly_always_on(c.offer, c.gpus, sc.pricing.hours_per_month),
            gpu_hours=c.gpu_hours,
            notes=c.why,
        )
        for c in cands
        if not c.alternative_to  # the nearest count that runs, not the count asked: a near miss of the plan, not a row
    ]
    training_rows.sort(key=lambda r: r.run_cost_usd if r.run_cost_usd is not None else math.inf)
    cheapest = min(training_rows, key=lambda r: r.run_cost_usd or math.inf, default=None)
    summary["mfu"] = cheapest.mfu if cheapest is not None else summary.get("mfu")
    first = training_rows[0] if training_rows else None
    hours = {"gpu_hours": None if first is None else first.gpu_hours, "wall_hours": first and first.wall_hours}
    return {"offers": training_rows, "rejected": rejected, "serverless": [], **summary, **hours}


def _first_row_site(sc: Scenario, first: Pick, offers: list[Offer]) -> dict[str, Any]:
    """The cheapest row's energy (the keys of its phase), the site figures they use, owning and price tiers."""
    out: dict[str, Any] = {"own": pick_own(sc, first), "price_tiers": price_tiers(sc, first, offers)}
    if (e := pick_energy(sc, first)) is None:
        return out
    if e.phase == "training":
        keys = ("energy_kwh", "energy_cost_usd", "co2_kg")
    else:
        keys = (
            "monthly_energy_kwh",
            "monthly_energy_cost_usd",
            "monthly_co2_kg",
            "energy_kwh_per_million_output_tokens",
        )
    keys += ("power_watts_per_gpu", "pue", "electricity_usd_per_kwh", "grid_gco2_per_kwh")
    return out | {k: getattr(e, k) for k in keys}


def cost_rows(
    sc: Scenario,
    offers: list[Offer],
    fixed_layout: bool = False,
    *,
    found: Found | None = None,
    trained: Trained | None = None,
) -> dict[str, Any]:
    """The cost report's rows (``offers``: per offer its best configuration, meets the targets if any does, cheapest
    run first), ``serverless``, ``rejected`` and the job's size, as the report's keys, without the first row's site
    figures (the answer reads the rows alone). ``fixed_layout`` and ``found``: as ``cost_table``'s; ``trained``: the
    training search of the kept offers (``training_candidates``), read as it is."""
    m = sc.model()
    kept = offers_for(offers, sc.job, sc.pricing, sc.parallelism)
    if sc.job.mode != "inference":
        return _training_rows(sc, m, kept, fixed_layout, trained)
    if fixed_layout or found is None:
        found = inference_candidates(m, sc, kept, [get_format(sc.formats.weights_format).name], fixed=fixed_layout)
    if not fixed_layout and (pd := disaggregated_pick(m, sc, kept, found)) is not None:
        found = found._replace(picks=[*found.picks, pd])  # its offer's row is the split, as the answer's pick
    parts = _inference_rows(ServingAsk.of(sc), m, kept, found)
    rows = parts["offers"]
    cheapest = min(r.monthly_always_on_usd for r in rows) if rows else None
    return parts | {"gpu_hours": None, "wall_hours": None, "cheapest_monthly_usd": cheapest}


def cost_table(
    sc: Scenario, offers: list[Offer], fixed_layout: bool = False, *, found: Found | None = None
) -> CostReport:
    """Per offer: its best configuration (meets the targets if any does, the cheapest first): monthly always-on,
    and per run (a day's requests as a batch job on the replicas, or an hour without traffic), with the first
    row's energy, owning and price tiers: the report the Cost page shows. ``fixed_layout``: only the scenario's own
    layout is priced (Compare prices exactly what it shows fitting): serving, a replica of its tp x pp (as many
    replicas as the traffic needs, one without a traffic estimate), not the layout search; training, its GPU count
    at its tp, pp and ZeRO stage, not more GPUs to meet a deadline. ``found``: as ``recommend``'s (not with
    ``fixed_layout``). The pricing file's problems, growth and the answer block are api.cost_report's."""
    parts = cost_rows(sc, offers, fixed_layout, found=found)
    out = {**model_summary(sc).model_dump(), "mode": sc.job.mode, "hours_per_month": sc.pricing.hours_per_month}
    if parts["offers"]:
        out |= _first_row_site(sc, parts["offers"][0], offers)
    return CostReport(**out, **parts)
