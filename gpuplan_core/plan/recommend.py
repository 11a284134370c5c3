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
from functools import lru_cache

from ..common.units import SECONDS_PER_HOUR
from ..hardware.catalog import get_gpu
from ..hardware.engines import accelerator_note
from ..model.arch import ModelArch
from ..model.formats import get_format
from ..perf.bands import perf_bands, serving_bands
from ..perf.workload import workload_for
from ..pricing.billing import monthly_always_on, run_cost
from ..pricing.offers import Offer
from ..results.plan import CostTable, InferenceCostRow, ParetoPoint, Pick, Plan, Rejected, TrainingCostRow, layout_label
from ..scenario.deployment import Pricing
from ..scenario.parts import Job, Parallelism
from ..scenario.scenario import Scenario
from .rent import Found, inference_candidates
from .search import ServingAsk, binding_constraint
from .training import TrainingCandidate, training_message
from .training_search import training_candidates
from .why import why_inference, why_training


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


def _offers_for(offers: list[Offer], job: Job, pricing: Pricing, par: Parallelism) -> list[Offer]:
    """The offers the scenario's filters keep (``filter_offers``), for its job."""
    interactive = job.mode == "inference" and job.serving == "interactive"
    return filter_offers(offers, pricing, par.gpu, interactive)


def _training_pick(c: TrainingCandidate) -> Pick:
    """A training candidate as the Pick it is (plan/training.py ``to_pick``)."""
    return c.to_pick()


def pareto_front(picks: list[Pick]) -> list[ParetoPoint]:
    """Configurations that no other beats on both monthly cost and p95 TTFT (cheapest first)."""
    pts = sorted(
        (p for p in picks if p.monthly_usd is not None and math.isfinite(p.monthly_usd)),
        key=lambda p: (p.monthly_usd, p.ttft_s),
    )
    front, best = [], math.inf
    for p in pts:
        if p.ttft_s < best - 1e-12:
            best = p.ttft_s
            front.append(
                ParetoPoint(
                    offer_id=p.offer_id,
                    gpu=p.gpu,
                    layout=p.layout,
                    weights_format=p.weights_format,
                    monthly_usd=p.monthly_usd,
                    ttft_s=p.ttft_s,
                    tpot_s=p.tpot_s,
                    meets_target=not p.misses,
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
        key = (c.offer_id, round(c.rank_cost, 6))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


@lru_cache(maxsize=4096)
def _band_text(moe: bool, gpu: str, fmt: str | None = None, eager: bool = False, batch: int = 1) -> str:
    """'TTFT ..., TPOT ...': serving under load (``fmt`` None), else the static batch's regime."""
    if fmt is None:
        b = serving_bands(moe, gpu)
        return f"TTFT {b['ttft_p95_s'].short}, TPOT {b['tpot_mean_s'].short}"
    b = perf_bands(gpu, fmt, moe, eager, batch)
    return f"TTFT {b['ttft_s'].short}, TPOT {b['tpot_s'].short}"


def _with_band(ask: ServingAsk, m: ModelArch, p: Pick) -> Pick:
    """The pick (a copy) with the error band of its latencies: serving under load where there is traffic, else
    the static batch's regime (GPU generation x format)."""
    if p.ttft_s is None:
        return p
    if ask.traffic.requests_per_day:
        text = _band_text(m.is_moe, p.gpu)
    else:
        eager = workload_for(ask.formats, ask.assumptions, ask.parallelism.tp, ask.parallelism.pp).eager
        text = _band_text(m.is_moe, p.gpu, p.weights_format, eager, ask.request.batch_or_one)
    return p.model_copy(update={"error_band": text})


def _ranked(cands: list[Pick], top: int, per_gpu_type: bool) -> tuple[list[Pick], list[Pick], list[Pick]]:
    """The picks that meet every target, cheapest first (of equal cost the faster first token; one layout per
    offer and price; ``per_gpu_type``: the cheapest per GPU type only), the top of them, and the cheaper near
    misses."""

    def order(p: Pick) -> tuple[float, float]:
        return p.rank_cost, p.ttft_s or 0.0

    ok = _best_layout_per_price(sorted((p for p in cands if not p.misses), key=order))
    missed = sorted((p for p in cands if p.misses), key=order)
    if per_gpu_type:
        seen: set[str] = set()
        ok = [p for p in ok if not (p.gpu in seen or seen.add(p.gpu))]
    best = ok[0].rank_cost if ok else math.inf
    return ok, ok[:top], [p for p in missed if p.rank_cost < best][:top]


def _explain(ok: list[Pick], picks: list[Pick], chosen_format: str, training: bool) -> list[Pick]:
    """The picks (copies) with the why lines a pick carries: a weights format other than ``chosen_format``, an
    accelerator's note, the runner-up's cost."""
    chosen = get_format(chosen_format).name
    out = []
    for i, p in enumerate(picks):
        why = list(p.why)
        if p.weights_format != chosen:
            why.append(f"uses {get_format(p.weights_format).label} weights: check quality before switching")
        if note := accelerator_note(get_gpu(p.gpu).kind, training=training):
            why.append(note)
        if i == 0 and len(ok) > 1:
            why.append(
                f"cheapest that fits and meets the target; next best {ok[1].offer_id} "
                f"costs {ok[1].rank_cost - p.rank_cost:,.0f} USD more"
            )
        out.append(p.model_copy(update={"why": why}))
    return out


def recommend(
    sc: Scenario, offers: list[Offer], explore_formats: bool = False, top: int = 5, *, found: Found | None = None
) -> Plan:
    """Rank every feasible candidate by cost; say why the top pick wins and what cheaper near misses miss. The
    scenario's weights format is the only one searched unless ``explore_formats`` adds FP8 and INT4. ``found``:
    the serving search of these offers in the scenario's format, when the caller has it (``search``)."""
    m = sc.model()
    unit = "USD per month (always-on or serverless)" if sc.job.mode == "inference" else "USD per training run"
    plan = Plan(model=m.name, mode=sc.job.mode, unit=unit)
    offers = _offers_for(offers, sc.job, sc.pricing, sc.parallelism)
    if not offers:
        plan.message = "No offers match the pricing filters (GPU, billing, provider): widen them in the sidebar."
        return plan
    if sc.job.mode == "inference":
        formats = [get_format(sc.formats.weights_format).name]
        if explore_formats:
            formats += [f for f in ("fp8", "int4-g128") if f not in formats]
        cands, rejected, layouts = found or inference_candidates(m, sc, offers, formats)
        plan.pareto = pareto_front(cands)
        training, summary = [], {}
    else:
        training, rejected, summary = training_candidates(m, sc, offers)
        cands, layouts = [_training_pick(c) for c in training], []
        for k, v in summary.items():
            setattr(plan, k, v)
    training_job = sc.job.mode != "inference"
    ok, ranked, near = _ranked(cands, top, per_gpu_type=training_job and not sc.parallelism.gpu)
    picks = _explain(ok, ranked, sc.formats.weights_format, training_job)
    ask = ServingAsk.of(sc)
    plan.picks = [_with_band(ask, m, p) for p in picks]
    plan.near_misses = [_with_band(ask, m, p) for p in near]
    plan.rejected = [r.model_dump() for r in rejected]
    plan.candidates = len(cands)
    if picks and sc.job.mode == "inference":
        o = next(o for o in offers if o.offer_id == picks[0].offer_id)
        plan.why = why_inference(sc.traffic, sc.pricing.hours_per_month, ranked[0], o)
    elif picks:
        top_c = next(c for p, c in zip(cands, training, strict=True) if p is ranked[0])
        plan.why = why_training(sc, top_c, summary)
        plan.mfu = top_c.mfu
    elif sc.job.mode == "inference":
        plan.message = binding_constraint(sc.traffic, sc.request.input_tokens, layouts, cands, rejected)
    else:
        missed = sorted(
            (pc for pc in zip(cands, training, strict=True) if pc[0].misses), key=lambda pc: pc[0].rank_cost
        )
        plan.message = training_message(sc, [c for _, c in missed], rejected)
    return plan


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


def search(sc: Scenario, offers: list[Offer]) -> Found:
    """The serving search of the scenario's offers (its filters) in its own weights format: what ``recommend``
    and ``cost_table`` both rank, computed once by a caller that needs both (plan/answer.py)."""
    fmt = get_format(sc.formats.weights_format).name
    return inference_candidates(sc.model(), sc, _offers_for(offers, sc.job, sc.pricing, sc.parallelism), [fmt])


def _inference_rows(ask: ServingAsk, m: ModelArch, offers: list[Offer], found: Found) -> CostTable:
    """Per offer, its best serving configuration (the plan's order: meets the targets first, then the cheapest, of
    equal prices the faster), with a run: a day's requests as one batch job on its replicas, or an hour. The rows
    come cheapest run first."""
    cands, rejected, _ = found
    best: dict[str, Pick] = {}
    for p in sorted(cands, key=lambda p: (bool(p.misses), p.rank_cost, p.ttft_s)):
        best.setdefault(p.offer_id, p)
    by_id = {o.offer_id: o for o in offers}
    rows, serverless = [], []
    rpd, pricing = ask.traffic.requests_per_day, ask.pricing
    for p in best.values():
        o = by_id[p.offer_id]
        p = _with_band(ask, m, p)
        if o.is_serverless:  # no per-run cluster: the serverless table
            serverless.append(p)
            continue
        if rpd and p.requests_per_s_per_replica:
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
    return CostTable(offers=rows, serverless=serverless, rejected=rejected)


def cost_table(
    sc: Scenario, offers: list[Offer], fixed_layout: bool = False, *, found: Found | None = None
) -> CostTable:
    """Per offer: its best configuration (meets the targets if any does, the cheapest first): monthly always-on,
    and per run (a day's requests as a batch job on the replicas, or an hour without traffic). ``fixed_layout``:
    only the scenario's own layout is priced (Compare prices exactly what it shows fitting): serving, a replica of
    its tp x pp (as many replicas as the traffic needs, one without a traffic estimate), not the layout search;
    training, its GPU count at its tp, pp and ZeRO stage, not more GPUs to meet a deadline. ``found``: as
    ``recommend``'s (not with ``fixed_layout``)."""
    m = sc.model()
    offers = _offers_for(offers, sc.job, sc.pricing, sc.parallelism)
    if sc.job.mode == "inference":
        if fixed_layout or found is None:
            found = inference_candidates(
                m, sc, offers, [get_format(sc.formats.weights_format).name], fixed=fixed_layout
            )
        return _inference_rows(ServingAsk.of(sc), m, offers, found)
    job = sc.with_(deadline_hours=None) if fixed_layout else sc
    cands, rejected, summary = training_candidates(m, job, offers)
    if fixed_layout:
        cands, not_own = _own_training_layout(sc.parallelism, sc.training.deadline_hours, cands)
        rejected += not_own
    training_rows = [
        TrainingCostRow(
            **dict(_training_pick(c)),
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
    return CostTable(offers=training_rows, rejected=rejected, **summary)
