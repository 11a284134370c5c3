"""The recommendation (the costs per offer the Cost page shows are cost.py's).

The rule: rent the least expensive configuration that fits the COMPLETE memory budget and meets the latency
target (p95 TTFT and mean TPOT) or the completion-time target. Inference candidates come from search.py (every
GPU x format x layout x offer); training candidates from training.py (every GPU x offer at the GPU count set, or
the smallest layout that fits, at the chosen ZeRO stage or the lowest one above it that fits). Each rejected
candidate keeps its reason. For interactive serving with a traffic estimate, disaggregated prefill/decode pools
(plan/disaggregated.py) are weighed against the cheapest aggregated pick meeting the targets and lead only where
they cost less. The typed Plan itself is in results/plan.py.

The result is a typed Plan: the picks, cheaper near misses, rejections, the why-chain a PM can read aloud (traffic
-> replicas -> GPUs -> price x hours = cost; or FLOPs -> GPU-hours -> wall time -> cost), the cost-latency Pareto
front, and, when nothing qualifies, the binding constraint in one sentence.
"""

from __future__ import annotations

import math

from ..hardware.accelerators import accelerator_note
from ..hardware.catalog import get_gpu
from ..hardware.engines import engine_gpu_note
from ..model.formats import get_format
from ..pricing.offers import Offer
from ..results.plan import ParetoPoint, Pick, Plan
from ..scenario.scenario import Scenario
from .cost import offers_for, with_band
from .disaggregated import disaggregated_pick
from .rent import Found, inference_candidates
from .search import ServingAsk, binding_constraint
from .training import training_message
from .training_search import Trained, training_candidates
from .why import why_disaggregated, why_inference, why_training


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


def _explain(ok: list[Pick], picks: list[Pick], sc: Scenario, training: bool) -> list[Pick]:
    """The picks (copies) with the why lines a pick carries: a weights format other than the scenario's, an
    accelerator's note, a serving engine that does not list the GPU, the runner-up's cost."""
    chosen_format, rt = sc.formats.weights_format, sc.assumptions
    chosen = get_format(chosen_format).name
    out = []
    for i, p in enumerate(picks):
        why = list(p.why)
        if p.weights_format != chosen:
            why.append(f"uses {get_format(p.weights_format).label} weights: check quality before switching")
        if note := accelerator_note(get_gpu(p.gpu).kind, training=training):
            why.append(note)
        if not training and (note := engine_gpu_note(rt.engine, rt.engine_version, get_gpu(p.gpu))):
            why.append(note)
        if i == 0 and len(ok) > 1:
            why.append(
                f"cheapest that fits and meets the target; next best {ok[1].offer_id} "
                f"costs {ok[1].rank_cost - p.rank_cost:,.0f} USD more"
            )
        out.append(p.model_copy(update={"why": why}))
    return out


def recommend(
    sc: Scenario,
    offers: list[Offer],
    explore_formats: bool = False,
    top: int = 5,
    *,
    found: Found | None = None,
    trained: Trained | None = None,
) -> Plan:
    """Rank every feasible candidate by cost; say why the top pick wins and what cheaper near misses miss. The
    scenario's weights format is the only one searched unless ``explore_formats`` adds FP8 and INT4. ``found``:
    the serving search of these offers in the scenario's format, when the caller has it (``search``); ``trained``:
    the training search of these offers (``training_candidates``), read as it is."""
    m = sc.model()
    unit = "USD per month (always-on or serverless)" if sc.job.mode == "inference" else "USD per training run"
    plan = Plan(model=m.name, mode=sc.job.mode, unit=unit)
    offers = offers_for(offers, sc.job, sc.pricing, sc.parallelism)
    if not offers:
        plan.message = "No offers match the pricing filters (GPU, billing, provider): widen them in the sidebar."
        return plan
    if sc.job.mode == "inference":
        formats = [get_format(sc.formats.weights_format).name]
        if explore_formats:
            formats += [f for f in ("fp8", "int4-g128") if f not in formats]
        found = found or inference_candidates(m, sc, offers, formats)
        cands, rejected, layouts = found.picks, found.rejected, found.layouts
        plan.pareto = pareto_front(cands)
        training, summary = [], {}
    else:
        found = None
        training, rejected, summary = trained or training_candidates(m, sc, offers)
        cands, layouts = list(training), []
        for k, v in summary.items():
            setattr(plan, k, v)
    training_job = sc.job.mode != "inference"
    ok, ranked, near = _ranked(cands, top, per_gpu_type=training_job and not sc.parallelism.gpu)
    if found is not None and (pd := disaggregated_pick(m, sc, offers, found)) is not None:
        ok, ranked = [pd, *ok], [pd, *ranked][:top]  # cheaper than every aggregated pick at the targets
        near = [p for p in near if p.rank_cost < pd.rank_cost]
        plan.pareto = pareto_front([*cands, pd])
    picks = _explain(ok, ranked, sc, training_job)
    ask = ServingAsk.of(sc)
    plan.picks = [with_band(ask, m, p) for p in picks]
    plan.near_misses = [with_band(ask, m, p) for p in near]
    plan.rejected = [r.model_dump() for r in rejected]
    plan.candidates = len(cands) + (found.unjudged if found else 0)
    if picks and sc.job.mode == "inference":
        o = next(o for o in offers if o.offer_id == picks[0].offer_id)
        why = why_disaggregated if ranked[0].disaggregated else why_inference
        plan.why = why(sc.traffic, sc.pricing.hours_per_month, ranked[0], o)
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


def search(sc: Scenario, offers: list[Offer]) -> Found:
    """The serving search of the scenario's offers (its filters) in its own weights format: what ``recommend``
    and ``cost.cost_table`` both rank, computed once by a caller that needs both (plan/answer.py)."""
    fmt = get_format(sc.formats.weights_format).name
    return inference_candidates(sc.model(), sc, offers_for(offers, sc.job, sc.pricing, sc.parallelism), [fmt])
