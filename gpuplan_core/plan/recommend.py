"""The recommendation, and the costs per offer the Cost page shows.

The rule: rent the least expensive configuration that fits the COMPLETE memory budget and meets the latency
target (p95 TTFT and mean TPOT) or the completion-time target. Inference candidates come from search.py (every
GPU x format x layout x offer); training candidates from training.py (every GPU x offer at the GPU count set, or
the smallest layout that fits, at the chosen ZeRO stage or the lowest one above it that fits). Each rejected
candidate keeps its reason. The typed Plan itself is in result.py.

The result is a typed Plan: the picks, cheaper near misses, rejections, the why-chain a PM can read aloud (traffic
-> replicas -> GPUs -> price x hours = cost; or FLOPs -> GPU-hours -> wall time -> cost), the cost-latency Pareto
front, and, when nothing qualifies, the binding constraint in one sentence.
"""

from __future__ import annotations

import math

from ..common.units import SECONDS_PER_HOUR
from ..hardware.catalog import get_gpu
from ..hardware.engines import accelerator_note
from ..model.arch import ModelArch
from ..model.formats import get_format
from ..perf.bands import perf_bands, serving_bands
from ..perf.efficiency import PerfAssumptions
from ..perf.workload import workload_for
from ..pricing.billing import monthly_always_on, run_cost
from ..pricing.offers import Offer
from ..results.plan import CostTable, InferenceCostRow, ParetoPoint, Pick, Plan, Rejected, TrainingCostRow
from ..scenario.deployment import Pricing
from ..scenario.scenario import Scenario
from .search import Candidate, Rejection, binding_constraint, inference_candidates, layout_label
from .training import TrainingCandidate, training_message
from .training_search import training_candidates
from .why import why_inference, why_training


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
        if not gid and not pricing.allow_accelerators and not get_gpu(o.gpu).is_gpu:
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


def _offers_for(offers: list[Offer], sc: Scenario) -> list[Offer]:
    interactive = sc.job.mode == "inference" and sc.job.serving == "interactive"
    return filter_offers(offers, sc.pricing, sc.parallelism.gpu, interactive)


def _pick(c: Candidate | TrainingCandidate) -> Pick:
    if isinstance(c, TrainingCandidate):
        return c.to_pick()
    ev = c.ev
    gpu, fmt, tp, pp, zero = ev.gpu.gpu, ev.weights_format, ev.tp, ev.pp, None
    ttft, tpot, rps = ev.ttft_s, ev.tpot_s, ev.capacity
    o = c.offer
    return Pick(
        gpu=gpu,
        weights_format=fmt,
        offer_id=o.offer_id,
        provider=o.provider,
        product=o.product,
        billing_model=o.billing_model,
        gpus=c.gpus,
        nodes=c.nodes,
        tp=tp,
        pp=pp,
        layout=layout_label(gpu, tp, pp),
        replicas=c.replicas,
        zero_stage=zero,
        monthly_usd=c.monthly_usd,
        run_cost_usd=c.run_cost_usd,
        price_per_gpu_hour_usd=o.price_per_gpu_hour_usd,
        ttft_s=ttft,
        tpot_s=tpot,
        wall_hours=c.wall_hours,
        requests_per_s_per_replica=rps,
        output_cost_per_million_usd=c.output_cost_per_million_usd,
        input_cost_per_million_usd=c.input_cost_per_million_usd,
        meets_target=not c.misses,
        misses=c.misses,
        why=c.why,
        source=o.source,
        price_as_of=o.price_as_of,
        user_price=o.user_price,
    )


# ---- the Pareto front ------------------------------------------------------------


def pareto_front(cands: list[Candidate]) -> list[ParetoPoint]:
    """Configurations that no other beats on both monthly cost and p95 TTFT (cheapest first)."""
    pts = sorted(
        (c for c in cands if c.monthly_usd is not None and math.isfinite(c.monthly_usd)),
        key=lambda c: (c.monthly_usd, c.ev.ttft_s),
    )
    front, best = [], math.inf
    for c in pts:
        if c.ev.ttft_s < best - 1e-12:
            best = c.ev.ttft_s
            front.append(
                ParetoPoint(
                    offer_id=c.offer.offer_id,
                    gpu=c.ev.gpu.gpu,
                    layout=c.ev.label,
                    weights_format=c.ev.weights_format,
                    monthly_usd=c.monthly_usd,
                    ttft_s=c.ev.ttft_s,
                    tpot_s=c.ev.tpot_s,
                    meets_target=not c.misses,
                )
            )
    return front


# ---- the recommendation ------------------------------------------------------------------------------


def _best_layout_per_price(ranked: list) -> list:
    """One layout per offer and price: where an offer's node is paid whole, TP 1 and TP 2 on a 2-GPU node cost the
    same, and only the faster (first in ``ranked``) is worth showing."""
    seen: set[tuple[str, float]] = set()
    out = []
    for c in ranked:
        key = (c.offer.offer_id, round(c.rank_cost, 6))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _with_band(sc: Scenario, m: ModelArch, p: Pick) -> Pick:
    """The pick with the error band of its latencies: serving under load where there is traffic, else the static
    batch's regime (GPU generation x format)."""
    if p.ttft_s is None:
        return p
    if sc.traffic.requests_per_day:
        b = serving_bands(m.is_moe, p.gpu)
        ttft, tpot = b["ttft_p95_s"], b["tpot_mean_s"]
    else:
        b = perf_bands(
            p.gpu,
            p.weights_format,
            m.is_moe,
            workload_for(sc.formats, sc.assumptions, sc.parallelism.tp, sc.parallelism.pp).eager,
            sc.request.batch_or_one,
        )
        ttft, tpot = b["ttft_s"], b["tpot_s"]
    p.error_band = f"TTFT {ttft.short}, TPOT {tpot.short}"
    return p


def recommend(sc: Scenario, offers: list[Offer], explore_formats: bool = False, top: int = 5) -> Plan:
    """Rank every feasible candidate by cost; say why the top pick wins and what cheaper near misses miss. The
    scenario's weights format is the only one searched unless ``explore_formats`` adds FP8 and INT4."""
    m = sc.model()
    pa = PerfAssumptions()
    unit = "USD per month (always-on or serverless)" if sc.job.mode == "inference" else "USD per training run"
    plan = Plan(model=m.name, mode=sc.job.mode, unit=unit)
    offers = _offers_for(offers, sc)
    if not offers:
        plan.message = "No offers match the pricing filters (GPU, billing, provider): widen them in the sidebar."
        return plan
    summary: dict = {}
    if sc.job.mode == "inference":
        formats = [get_format(sc.formats.weights_format).name]
        if explore_formats:
            formats += [f for f in ("fp8", "int4-g128") if f not in formats]
        cands, rejected, evals = inference_candidates(m, sc, offers, formats, pa)
        plan.pareto = pareto_front(cands)
    else:
        cands, rejected, summary = training_candidates(m, sc, offers)
        evals = []
        for k, v in summary.items():
            setattr(plan, k, v)

    def order(c: Candidate | TrainingCandidate) -> tuple[float, float]:  # cost, then the faster first token
        return c.rank_cost, c.ev.ttft_s if isinstance(c, Candidate) else 0.0

    ok = _best_layout_per_price(sorted((c for c in cands if not c.misses), key=order))
    missed = sorted((c for c in cands if c.misses), key=order)
    if sc.job.mode != "inference" and not sc.parallelism.gpu:  # any GPU: the cheapest per GPU type
        seen: set[str] = set()
        ok = [c for c in ok if not (c.gpu in seen or seen.add(c.gpu))]
    picks = ok[:top]
    best = picks[0].rank_cost if picks else math.inf
    near = [c for c in missed if c.rank_cost < best][:top]
    chosen = get_format(sc.formats.weights_format).name
    for i, c in enumerate(picks):
        fmt = c.ev.weights_format if isinstance(c, Candidate) else c.weights_format
        if fmt != chosen:
            c.why.append(f"uses {get_format(fmt).label} weights: check quality before switching")
        if note := accelerator_note(get_gpu(c.offer.gpu).kind, training=sc.job.mode != "inference"):
            c.why.append(note)
        if i == 0 and len(ok) > 1:
            c.why.append(
                f"cheapest that fits and meets the target; next best {ok[1].offer.offer_id} "
                f"costs {ok[1].rank_cost - c.rank_cost:,.0f} USD more"
            )
    plan.picks = [_with_band(sc, m, _pick(c)) for c in picks]
    plan.near_misses = [_with_band(sc, m, _pick(c)) for c in near]
    plan.rejected = [r.to_dict() for r in rejected]
    plan.candidates = len(cands)
    if picks:
        top_c = picks[0]
        plan.why = why_inference(sc, top_c) if isinstance(top_c, Candidate) else why_training(sc, top_c, summary)
        if not isinstance(top_c, Candidate):
            plan.mfu = top_c.mfu
    elif sc.job.mode == "inference":
        plan.message = binding_constraint(sc, evals, cands, rejected)
    else:
        plan.message = training_message(sc, missed, rejected)
    return plan


def _own_training_layout(
    sc: Scenario, cands: list[TrainingCandidate]
) -> tuple[list[TrainingCandidate], list[Rejection]]:
    """The candidates (priced without a deadline) that run the scenario's own layout: its GPU count, tp, pp and ZeRO
    stage, the deadline judged on that count; the others rejected (their GPU type needs another layout)."""
    own, rejected = [], []
    for c in cands:
        par = sc.parallelism
        if (c.gpus, c.tp, c.pp) != (par.gpus, par.tp, par.pp) or (not par.zero_auto and c.zero_stage != par.zero_stage):
            par = sc.parallelism
            why = (
                f"does not fit at the scenario's layout ({par.gpus} GPUs, TP {par.tp}, PP {par.pp}, "
                f"ZeRO-{par.zero_stage})"
            )
            rejected.append(
                Rejection(
                    c.gpu,
                    why,
                    c.weights_format,
                    c.offer.offer_id,
                    layout_label(c.gpu, sc.parallelism.tp, sc.parallelism.pp),
                )
            )
            continue
        if sc.training.deadline_hours and c.wall_hours > sc.training.deadline_hours * 1.0001:
            c.misses = [f"{c.wall_hours:,.0f} h > deadline {sc.training.deadline_hours:,.0f} h"]
        own.append(c)
    return own, rejected


def cost_table(sc: Scenario, offers: list[Offer], fixed_layout: bool = False) -> CostTable:
    """Per offer: its best configuration (meets the targets if any does, the cheapest first): monthly always-on,
    and per run (a day's requests as a batch job on the replicas, or an hour without traffic). ``fixed_layout``:
    only the scenario's own layout is priced (Compare prices exactly what it shows fitting): serving, a replica of
    its tp x pp (as many replicas as the traffic needs, one without a traffic estimate), not the layout search;
    training, its GPU count at its tp, pp and ZeRO stage, not more GPUs to meet a deadline."""
    m = sc.model()
    offers = _offers_for(offers, sc)
    if sc.job.mode == "inference":
        cands, rejected, _ = inference_candidates(
            m, sc, offers, [get_format(sc.formats.weights_format).name], PerfAssumptions(), fixed=fixed_layout
        )
        best: dict[str, Candidate] = {}
        for c in sorted(cands, key=lambda c: (bool(c.misses), c.rank_cost, c.ev.ttft_s)):  # the plan's order: of
            best.setdefault(c.offer.offer_id, c)  # equal prices (TP 1 or 2 on a whole 2-GPU node) the faster first
        rows = []
        for c in best.values():
            if c.offer.is_serverless:
                continue  # serverless has no per-run cluster; it is in the serverless table
            replica_gpus = c.ev.replica_gpus
            if sc.traffic.requests_per_day and c.ev.capacity:
                runtime = sc.traffic.requests_per_day / (c.ev.capacity * c.replicas)
                gpus = replica_gpus * c.replicas
            else:
                runtime, gpus = SECONDS_PER_HOUR, replica_gpus
            rc = run_cost(c.offer, gpus, runtime, sc.pricing.spot_restart_overhead, sc.pricing.hours_per_month)
            rows.append(
                InferenceCostRow(
                    **_with_band(sc, m, _pick(c)).model_dump() | {"run_cost_usd": rc.run_cost_usd},
                    run_hours=runtime / 3600,
                    run_description="one day's requests as a batch job" if sc.traffic.requests_per_day else "one hour",
                    monthly_always_on_usd=c.monthly_usd,
                    notes=rc.notes,
                )
            )
        serverless = [_with_band(sc, m, _pick(c)) for c in best.values() if c.offer.is_serverless]
        return CostTable(offers=rows, serverless=serverless, rejected=[Rejected(**r.to_dict()) for r in rejected])
    job = sc.with_(deadline_hours=None) if fixed_layout else sc
    cands, rejected, summary = training_candidates(m, job, offers)
    if fixed_layout:
        cands, not_own = _own_training_layout(sc, cands)
        rejected += not_own
    training_rows = [
        TrainingCostRow(
            **_pick(c).model_dump(),
            monthly_always_on_usd=monthly_always_on(c.offer, c.gpus, sc.pricing.hours_per_month),
            gpu_hours=c.gpu_hours,
            notes=c.why,
        )
        for c in cands
        if not c.alternative_to  # the nearest count that runs, not the count asked: a near miss of the plan, not a row
    ]
    cheapest = min(training_rows, key=lambda r: r.run_cost_usd or math.inf, default=None)
    summary["mfu"] = cheapest.mfu if cheapest is not None else summary.get("mfu")
    return CostTable(offers=training_rows, rejected=[Rejected(**r.to_dict()) for r in rejected], **summary)
