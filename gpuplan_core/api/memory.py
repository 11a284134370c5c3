"""Memory: the budget of a layout by component, each GPU type's fit, and, with prices, the layout the one answer
runs and the layout the search would use on every GPU type (re-exported by ``gpuplan_core.api``).

Two layouts, named apart: the scenario's own (what ``memory`` asks by default: one GPU unless a count or split is
set) and the answer's (plan/answer.py's pick: its GPU count, tensor x pipeline x data parallel, ZeRO stage and
micro-batch). The Memory page headlines the answer's; the scenario's own need is the secondary figure.
"""

from __future__ import annotations

from typing import Any

from ..hardware.catalog import get_gpu
from ..memory.budget import memory_budget
from ..memory.components import MemoryRequest, component_provenance, model_weight_bytes
from ..memory.fit import budget_bytes, evaluate_catalog
from ..memory.request import memory_request, pick_request
from ..model.formats import get_format
from ..results.memory import AnswerLayout, GpuFit, Layout, MemoryReport, SearchFit
from ..results.plan import Pick, replica_split
from ..scenario.scenario import Scenario
from ._shared import catalog_of, model_summary, scenario_of


def memory_report(
    s: Scenario | dict[str, Any],
    pricing_path: str | None = None,
    offers=None,
    answer=None,
    cost=None,
    search: bool | None = None,
) -> MemoryReport:
    """The memory budget and every GPU type's fit. Without prices (``search`` False, the default when no pricing,
    offers or answer is given): at the scenario's own layout, the memory engine alone. With them: at the layout
    the answer runs (``answer``: the scenario's ScenarioAnswer for these offers, computed when not given), with the
    scenario's own need beside it and, per GPU type, the layout search's count and layout (``cost``: the scenario's
    cost report or table for these offers, when the caller has it)."""
    sc = scenario_of(s)
    if search is None:
        search = pricing_path is not None or offers is not None or answer is not None
    if not search:
        return _report(sc, memory_request(sc), {g.gpu for g in sc.selected_gpus()} if sc.parallelism.gpu else set())
    from .cost import _offers, answer_report

    if offers is None:
        offers = _offers(pricing_path).offers
    ans = answer if answer is not None else answer_report(sc, offers=offers)
    searched = search_fits(sc, offers, ans.pick, cost)
    p = ans.pick
    if p is None:
        selected = {get_gpu(sc.parallelism.gpu).gpu} if sc.parallelism.gpu else set()
        return _report(sc, memory_request(sc), selected, searched, answer_message=ans.message)
    req = pick_request(sc, p)
    gpu = get_gpu(p.gpu)
    per_gpu = round(memory_budget(sc.model(), req).per_gpu_bytes)
    at = AnswerLayout(
        gpu=gpu.gpu,
        label=gpu.label,
        gpus=p.gpus,
        replicas=p.replicas,
        layout=_layout(req),
        zero_stage=req.parallelism.zero_stage if sc.job.mode != "inference" else None,
        micro_batch=req.batch,
        weights_format=req.formats.weights_format,
        per_gpu_bytes=per_gpu,
        budget_bytes=round(budget_bytes(gpu, req.runtime)),
        where=search_layout_text(sc, p, req),
    )
    own = round(memory_budget(sc.model(), memory_request(sc)).per_gpu_bytes)
    pools = ans.memory_pools  # a split's both pools (memory/pools.py), the decode worker's = ``at``
    return _report(
        sc,
        req,
        {gpu.gpu},
        searched,
        layout_source="answer",
        answer=at,
        scenario_per_gpu_bytes=own,
        extra_gpu=gpu,
        pools=pools,
    )


def memory_at_pick(s: Scenario | dict[str, Any], pick: Pick) -> MemoryReport:
    """The budget at a pick's layout alone (no search): the Memory page's other accounting at the answer's layout."""
    sc = scenario_of(s)
    return _report(sc, pick_request(sc, pick), {get_gpu(pick.gpu).gpu}, layout_source="answer")


def _report(
    sc: Scenario,
    req: MemoryRequest,
    selected: set[str],
    searched: dict[str, SearchFit] | None = None,
    extra_gpu=None,
    **extra: Any,
) -> MemoryReport:
    """The budget of ``req`` by component and every catalog GPU's fit at it (with its search, when searched)."""
    m = sc.model()
    budget = memory_budget(m, req)
    catalog = catalog_of(sc)
    if extra_gpu is not None and extra_gpu not in catalog:
        catalog = (*catalog, extra_gpu)
    fits = evaluate_catalog(m, req, catalog)
    weights = "nf4-dq" if req.job.mode != "inference" and req.job.method == "qlora" else req.formats.weights_format
    return MemoryReport(
        **model_summary(sc).model_dump(),
        mode=req.job.mode,
        method=req.job.method,
        weights_format=weights,
        kv_format=req.formats.kv_format,
        engine=req.runtime.engine,
        context_tokens=req.context_tokens,
        batch=req.batch,
        layout=_layout(req),
        scope=budget.scope,
        weights_bytes_total=round(model_weight_bytes(m, get_format(weights))),
        components={k: round(v) for k, v in budget.components.items()},
        provenance={k: component_provenance(k) for k in budget.components},
        offload=req.parallelism.offload,
        offloaded={k: round(v) for k, v in budget.offloaded.items()},
        host_bytes_per_node=round(budget.host_bytes_per_node),
        host_note=budget.host_note,
        budgets={k: round(v) for k, v in budget.budgets.items()},
        per_gpu_bytes=round(budget.per_gpu_bytes),
        total_bytes=round(budget.total_bytes),
        memory_utilization=req.runtime.memory_utilization,
        notes=budget.notes,
        gpus=[
            GpuFit(
                gpu=f.gpu.gpu,
                label=f.gpu.label,
                selected=f.gpu.gpu in selected,
                vram_nominal_bytes=round(f.gpu.vram_nominal_bytes),
                vram_usable_bytes=round(f.gpu.vram_usable_bytes),
                budget_bytes=round(f.budget_bytes),
                fits=f.fits,
                min_gpus=f.min_gpus,
                min_layout=None if f.min_layout is None else Layout(**vars(f.min_layout)),
                max_batch=f.max_batch,
                max_context=f.max_context,
                kv_capacity_tokens=f.kv_capacity_tokens,
                search=None if searched is None else searched.get(f.gpu.gpu, SearchFit(note=NO_OFFER)),
            )
            for f in fits
        ],
        **extra,
    )


NO_OFFER = "the layout search has no candidate: no offer of this GPU type in the prices in use"


def search_fits(sc: Scenario, offers, pick: Pick | None, cost=None) -> dict[str, SearchFit]:
    """Per GPU type: how the layout search runs the scenario on it. The answer's pick on its own type; on the others
    the cheapest configuration of the plan's cost table on that type (the cost table of the scenario with any GPU
    type, since a scenario pinned to one type searches only that one), meeting the targets where one does; a type
    without one says why (the search's rejection)."""
    from ..plan.cost import cost_table

    table = cost if cost is not None and not sc.parallelism.gpu else cost_table(_any_gpu(sc), offers)
    m = sc.model()
    by_gpu: dict[str, list[Pick]] = {}
    for r in table.offers:
        by_gpu.setdefault(r.gpu, []).append(r)
    budgets: dict[str, int] = {}

    def fit(p: Pick, answer: bool) -> SearchFit:
        req = pick_request(sc, p)
        key = req.model_dump_json()  # the whole question: a training pick's micro-batch and recompute change it too
        if key not in budgets:
            budgets[key] = round(memory_budget(m, req).per_gpu_bytes)
        return SearchFit(
            gpus=p.gpus,
            layout=search_layout_text(sc, p, req),
            tp=p.tp,
            pp=p.pp,
            dp=req.dp,
            ep=p.ep,
            zero_stage=req.parallelism.zero_stage if sc.job.mode != "inference" else None,
            per_gpu_bytes=budgets[key],
            meets_targets=p.meets_target,
            answer=answer,
            note="; ".join(p.misses),
        )

    out: dict[str, SearchFit] = {}
    for gid, rows in by_gpu.items():
        best = min(rows, key=lambda r: (not r.meets_target, _rank(r), r.offer_id))
        out[gid] = fit(best, False)
    for r in table.rejected:
        if r.gpu not in out:
            out[r.gpu] = SearchFit(note=f"the layout search has no candidate: {r.reason}")
    if pick is not None:
        out[pick.gpu] = fit(pick, True)
    return out


def search_layout_text(sc: Scenario, p: Pick, req: MemoryRequest) -> str:
    """'2 x B200 (TP 2)' (a serving replica, and how many), '64 x H100 SXM (TP 2 x PP 2 x DP 16, ZeRO-0)'; a
    disaggregated pick's decode worker."""
    label = get_gpu(p.gpu).label
    if (d := p.disaggregated) is not None:  # the budget is a decode worker's (memory/pools.py has both pools)
        return f"a decode worker of the split, {d.decode.tp} x {label} (TP {d.decode.tp})"
    if sc.job.mode == "inference":
        n = p.replica_gpus
        split = f" ({replica_split(p)})" if n > 1 else ""
        return f"{n} x {label}{split}" + (f"; {p.replicas:,} replicas" if p.replicas > 1 else "")
    par = req.parallelism
    return f"{p.gpus:,} x {label} (TP {par.tp} x PP {par.pp} x DP {req.dp}, ZeRO-{par.zero_stage})"


def _layout(req: MemoryRequest) -> Layout:
    """The request's layout, its expert parallel named (``Layout.text``)."""
    par = req.parallelism
    return Layout(gpus=par.gpus, tp=par.tp, pp=par.pp, dp=req.dp, ep=par.ep if (par.ep or 1) > 1 else None)


def _rank(r: Pick) -> float:
    v = r.monthly_usd if r.monthly_usd is not None else r.run_cost_usd
    return float("inf") if v is None else v


def _any_gpu(sc: Scenario) -> Scenario:
    return sc.with_(gpu=None) if sc.parallelism.gpu else sc
