"""Every way to serve the scenario on the offers: GPU type x weights format x layout x offer.

For each GPU type and weights format, the layouts that hold the complete memory budget with at least one sequence
are evaluated once, whatever the offer: tensor parallel 1, 2, 4 or 8 within one machine, and pipeline stages of 8
GPUs across machines when no machine holds the model. Without a traffic estimate a layout is judged on the static
batch (perf.predict); with one, on one replica's capacity within the targets under continuous batching
(serving.py) and the replicas the peak needs: replicas = ceil(peak rate / capacity).

Then each offer either rents that layout or is rejected with the reason (Offer.layout_problem): tensor parallel
only within one machine and, above 2, only over NVLink; stages across machines only over a stated fast network.
Replicas on single-GPU rentals are independent servers, which is allowed. A layout the user set (GPU count,
tensor parallel, pipeline stages) is the only one tried.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from dataclasses import dataclass, field

from ..common.text import exact, figure, usd
from ..common.units import GB
from ..hardware.catalog import GPU, get_gpu
from ..memory.components import model_weight_bytes
from ..memory.fit import max_batch
from ..memory.request import memory_request
from ..model.arch import ModelArch, valid_tp_degrees
from ..model.formats import get_format
from ..perf.efficiency import PerfAssumptions
from ..perf.predict import PerfResult, predict
from ..perf.replica import Replica, scenario_limits
from ..perf.serving import Sim, capacity, serve, shape_for
from ..perf.workload import workload_for
from ..pricing.billing import (
    cost_per_million_tokens,
    monthly_always_on,
    nodes_needed,
    replicas_for_traffic,
    serverless_monthly,
)
from ..pricing.offers import Offer
from ..scenario.deployment import Traffic
from ..scenario.scenario import Scenario

COLD_START_FIXED_S = 20.0  # serverless worker start before the weights load (container, engine)
WEIGHT_LOAD_BYTES_PER_S = 2 * GB  # model load speed at cold start (network volume / local NVMe)
TP_DEGREES = (1, 2, 4, 8)  # within one machine (HGX boards hold 8 GPUs)
PP_STAGES = (2, 3, 4, 6, 8, 12, 16)  # of 8 GPUs each, across machines


def cold_start_s(m: ModelArch, weights_format: str) -> float:
    return COLD_START_FIXED_S + model_weight_bytes(m, get_format(weights_format)) / WEIGHT_LOAD_BYTES_PER_S


def target_misses(traffic: Traffic, ttft_s: float | None, tpot_s: float | None, what: str = "TTFT") -> list[str]:
    """The latency targets a layout's predicted times miss, in words."""
    misses = []
    if traffic.ttft_target_s and ttft_s is not None and ttft_s > traffic.ttft_target_s:
        misses.append(f"{what} {ttft_s * 1e3:,.0f} ms > target {traffic.ttft_target_s * 1e3:,.0f} ms")
    if traffic.tpot_target_s and tpot_s is not None and tpot_s > traffic.tpot_target_s:
        misses.append(f"TPOT {tpot_s * 1e3:,.1f} ms > target {traffic.tpot_target_s * 1e3:,.1f} ms")
    return misses


def layout_label(gpu: str, tp: int, pp: int) -> str:
    return f"{tp * pp} x {gpu}, TP {tp}" + (f", PP {pp}" if pp > 1 else "")


@dataclass(kw_only=True)
class LayoutEval:
    """One layout of one GPU type and weights format, judged once for every offer."""

    gpu: GPU
    weights_format: str
    tp: int
    pp: int
    kv_sequences: int  # sequences of input + output tokens the KV cache holds
    batch: int
    replicas: int
    capacity: float  # requests per second one replica sustains within the targets (0: none)
    ttft_s: float  # p95 under the traffic, else the static batch's
    tpot_s: float
    e2e_s: float
    floor_ttft_s: float  # one request alone: the least this layout can do
    floor_tpot_s: float
    static: PerfResult
    misses: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def replica_gpus(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        return layout_label(self.gpu.gpu, self.tp, self.pp)


@dataclass(kw_only=True)
class Candidate:
    """One offer renting one layout: what it costs and how it does."""

    ev: LayoutEval
    offer: Offer
    gpus: int  # GPUs paid for (whole nodes where the offer rents whole nodes)
    nodes: int  # machines (whole nodes, or one machine per replica and stage on per-GPU rentals)
    replicas: int
    monthly_usd: float | None
    run_cost_usd: float | None = None
    wall_hours: float | None = None
    output_cost_per_million_usd: float | None = None
    input_cost_per_million_usd: float | None = None
    misses: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)

    @property
    def rank_cost(self) -> float:
        v = self.run_cost_usd if self.monthly_usd is None else self.monthly_usd
        return math.inf if v is None else v


@dataclass
class Rejection:
    gpu: str
    reason: str
    weights_format: str | None = None
    offer_id: str | None = None
    layout: str | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def layouts_to_try(m: ModelArch, sc: Scenario, fixed: bool = False) -> list[tuple[int, int]]:
    """The user's layout when they set one (or ``fixed``); else TP 1/2/4/8 the heads allow, then stages of 8 GPUs."""
    if fixed or sc.parallelism.gpus > 1 or sc.parallelism.tp > 1 or sc.parallelism.pp > 1:
        return [(sc.parallelism.tp, sc.parallelism.pp)]
    tps = [t for t in valid_tp_degrees(m, 8) if t in TP_DEGREES]
    return [(t, 1) for t in tps] + ([(8, p) for p in PP_STAGES] if 8 in tps else [])


NO_FIT = "does not fit the complete memory budget on any layout tried"


def evaluate_layouts(
    m: ModelArch,
    sc: Scenario,
    gpu: GPU,
    fmt: str,
    pa: PerfAssumptions,
    fixed: bool = False,
    *,
    offers: list[Offer] | None = None,
) -> tuple[list[LayoutEval], list[Rejection]]:
    """Every layout of this GPU and format that holds the complete memory budget (stages only when no single
    machine does, and then the fewest), judged on the traffic or the static batch. With ``offers`` (this GPU's),
    a layout none of them can rent is only recorded as rejected, not judged (the serving search is the costly
    part)."""
    evals: list[LayoutEval] = []
    fitting: list[tuple[int, int]] = []
    rejected: list[Rejection] = []
    for tp, pp in layouts_to_try(m, sc, fixed):
        if pp > 1 and any(p == 1 or p < pp for _, p in fitting):
            break  # a machine (or fewer stages) already holds it
        req = memory_request(sc, weights_format=fmt).model_copy(update={"tp": tp, "pp": pp, "gpus": tp * pp})
        try:
            mb = max_batch(m, req, gpu)
        except ValueError:
            continue
        if mb < (sc.request.batch_or_one):  # the complete budget at the scenario's batch (one notion)
            continue
        fitting.append((tp, pp))
        problems = [o.layout_problem(tp, pp) for o in offers or []]
        if offers and all(problems):
            rejected.append(Rejection(gpu.gpu, str(problems[0]), fmt, None, layout_label(gpu.gpu, tp, pp)))
            continue
        evals.append(_evaluate_cached(m, sc, gpu, fmt, tp, pp, mb=mb, pa=pa))
    if not fitting:
        return [], [Rejection(gpu.gpu, NO_FIT, fmt)]
    return evals, rejected


_EVALS: OrderedDict[tuple, LayoutEval] = OrderedDict()  # the recommendation and the cost table judge the same layouts


def _evaluate_cached(m, sc: Scenario, gpu: GPU, fmt: str, tp: int, pp: int, *, mb: int, pa: PerfAssumptions):
    """``_evaluate``, remembered for the last few hundred layouts: a scenario's recommendation and its cost table
    judge the same layouts of the same question (prices aside), and the serving simulation is the costly part."""
    key = (sc.model_dump_json(exclude={"pricing"}), gpu.gpu, fmt, tp, pp, mb, pa.model_dump_json())
    if key not in _EVALS:
        _EVALS[key] = _evaluate(m, sc, gpu, fmt, tp, pp, mb=mb, pa=pa)
        while len(_EVALS) > 512:
            _EVALS.popitem(last=False)
    return copy.deepcopy(_EVALS[key])


def _evaluate(m, sc: Scenario, gpu: GPU, fmt: str, tp: int, pp: int, *, mb: int, pa: PerfAssumptions) -> LayoutEval:
    wl = workload_for(sc.formats, sc.assumptions, tp, pp, fmt)
    batch = mb if sc.request.batch == "max" else min(sc.request.batch, mb)
    static = predict(
        m, gpu, wl, batch, sc.request.input_tokens, sc.request.output_tokens, pa=pa, with_compute_bound_batch=False
    )
    alone = predict(
        m, gpu, wl, 1, sc.request.input_tokens, sc.request.output_tokens, pa=pa, with_compute_bound_batch=False
    )
    ev = LayoutEval(
        gpu=gpu, weights_format=fmt, tp=tp, pp=pp, kv_sequences=mb, batch=batch, replicas=1,
        capacity=batch / static.e2e_request_s, ttft_s=static.ttft_s, tpot_s=static.tpot_s, e2e_s=static.e2e_request_s,
        floor_ttft_s=alone.ttft_s, floor_tpot_s=alone.tpot_s, static=static,
    )  # fmt: skip
    if not sc.traffic.requests_per_day:
        ev.misses = target_misses(sc.traffic, static.ttft_s, static.tpot_s)
        ev.lines = [f"batch {batch:,} of at most {mb:,} sequences that fit"]
        return ev
    rep = Replica(
        m,
        gpu,
        wl,
        sc.request.input_tokens,
        sc.request.output_tokens,
        mb,
        scenario_limits(gpu, sc.assumptions),
        pa,
        engine=sc.assumptions.engine,
    )
    sim = Sim(rep, shape_for(sc.traffic))
    ttft_t, tpot_t = (
        (sc.traffic.ttft_target_s, sc.traffic.tpot_target_s) if sc.job.serving == "interactive" else (None, None)
    )
    cap = capacity(rep, ttft_t, tpot_t, steps=sim)
    peak = sc.traffic.peak_requests_per_s
    if cap <= 0:
        light = serve(rep, request_rate=sim.max_rate() * 1e-3, steps=sim)
        ev.capacity, ev.ttft_s, ev.tpot_s, ev.e2e_s = 0.0, light.ttft_p95_s, light.tpot_mean_s or 0.0, light.e2e_mean_s
        ev.misses = [
            f"{x} even at light load"
            for x in target_misses(sc.traffic, light.ttft_p95_s, light.tpot_mean_s, "p95 TTFT")
        ]
        return ev
    ev.replicas = replicas_for_traffic(sc.traffic.requests_per_day, sc.traffic.peak_to_average, cap)
    at = serve(rep, request_rate=peak / ev.replicas, steps=sim)
    while at.saturated:  # the capacity search and the queue model can disagree at the very edge: one more replica
        ev.replicas += 1
        at = serve(rep, request_rate=peak / ev.replicas, steps=sim)
    ev.capacity, ev.ttft_s, ev.tpot_s, ev.e2e_s = cap, at.ttft_p95_s, at.tpot_mean_s or 0.0, at.e2e_mean_s
    ev.batch = min(mb, rep.limits.max_num_seqs)
    ev.lines = [
        f"{peak:,.2f} req/s at peak ({sc.traffic.requests_per_day:,.0f}/day x {sc.traffic.peak_to_average:g}) over "
        f"{ev.replicas} replica(s) of {cap:,.2f} req/s each (continuous batching: p95 TTFT {at.ttft_p95_s * 1e3:,.0f} "
        f"ms, TPOT {ev.tpot_s * 1e3:,.1f} ms at that load)"
    ]
    return ev


def price(sc: Scenario, m: ModelArch, ev: LayoutEval, o: Offer) -> Candidate | Rejection:
    """This offer renting this layout for the traffic (or one replica), or why it cannot."""
    if problem := o.layout_problem(ev.tp, ev.pp):
        return Rejection(ev.gpu.gpu, problem, ev.weights_format, o.offer_id, ev.label)
    why = [f"layout {ev.label}: " + "; ".join(ev.lines)]
    node_price = o.price_per_node_hour_usd * nodes_needed(ev.replica_gpus, o.gpus_per_node)
    out_cost = cost_per_million_tokens(node_price, ev.static.decode_tokens_per_s, sc.pricing.utilization)
    in_cost = cost_per_million_tokens(node_price, ev.static.prefill_tokens_per_s, sc.pricing.utilization)
    if o.is_serverless:
        if not sc.traffic.requests_per_day:
            return Rejection(ev.gpu.gpu, "serverless needs a traffic estimate (requests per day)", ev.weights_format,
                             o.offer_id, ev.label)  # fmt: skip
        if not ev.capacity:
            return Rejection(ev.gpu.gpu, "a worker cannot meet the latency targets at any load", ev.weights_format,
                             o.offer_id, ev.label)  # fmt: skip
        sl = serverless_monthly(
            node_price, sc.traffic.requests_per_day, ev.e2e_s, ev.capacity, cold_start_s(m, ev.weights_format),
            o.serverless_idle_timeout_default_s or 5.0, hours_per_month=sc.pricing.hours_per_month,
            peak_to_average=sc.traffic.peak_to_average,
        )  # fmt: skip
        if o.billing_model == "serverless_active":  # always running, billed while idle
            monthly = sl.workers * node_price * sc.pricing.hours_per_month
            why.append(f"serverless active workers: {sl.workers} running 24/7 (billed while idle)")
        else:
            monthly = sl.monthly_usd
            why.append(
                f"serverless: {sl.workers_average} warm worker(s), up to {sl.workers} at peak, each batching up to "
                f"{ev.capacity:,.2f} req/s; {sl.billed_seconds_per_month / 3600:,.0f} billed h/month incl. "
                f"{sl.cold_starts_per_month:,.0f} cold starts (after idle gaps longer than the idle timeout)"
            )
        gpus = sl.workers * ev.replica_gpus
        return Candidate(ev=ev, offer=o, gpus=gpus, nodes=sl.workers, replicas=sl.workers, monthly_usd=monthly,
                         output_cost_per_million_usd=out_cost, input_cost_per_million_usd=in_cost,
                         misses=list(ev.misses), why=why)  # fmt: skip
    need = ev.replica_gpus * ev.replicas
    nodes = nodes_needed(need, o.gpus_per_node)
    paid = int(nodes * o.gpus_per_node)
    machines = nodes if o.gpus_per_node > 1 else ev.replicas * ev.pp  # per-GPU rentals: a machine per replica stage
    monthly = monthly_always_on(o, need, sc.pricing.hours_per_month)
    price = exact(o.price_per_node_hour_usd) or figure(o.price_per_node_hour_usd, 6)
    if o.gpus_per_node > 1:
        rented = f"{nodes} node{'s' if nodes > 1 else ''} of {o.gpus_per_node:g} GPUs x {price} USD/node-hour"
    else:
        rented = f"{paid} GPU{'s' if paid > 1 else ''} x {price} USD/GPU-hour"
    why.append(
        f"{rented} x {sc.pricing.hours_per_month:g} h = {usd(monthly)} a month"
        + (f" ({paid - need} idle: whole {o.gpus_per_node:g}-GPU nodes)" if paid > need else "")
    )
    return Candidate(ev=ev, offer=o, gpus=paid, nodes=machines, replicas=ev.replicas, monthly_usd=monthly,
                     output_cost_per_million_usd=out_cost, input_cost_per_million_usd=in_cost,
                     misses=list(ev.misses), why=why)  # fmt: skip


def inference_candidates(
    m: ModelArch, sc: Scenario, offers: list[Offer], formats: list[str], pa: PerfAssumptions, fixed: bool = False
) -> tuple[list[Candidate], list[Rejection], list[LayoutEval]]:
    cands: list[Candidate] = []
    rejected: list[Rejection] = []
    evals: list[LayoutEval] = []
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        by_gpu.setdefault(o.gpu, []).append(o)
    for gid, gpu_offers in by_gpu.items():
        gpu = get_gpu(gid)
        for fmt in formats:
            evs, rej = evaluate_layouts(m, sc, gpu, fmt, pa, fixed, offers=gpu_offers)
            rejected += rej
            evals += evs
            for o in gpu_offers:
                priced = [price(sc, m, ev, o) for ev in evs]
                ok = [c for c in priced if isinstance(c, Candidate)]
                if ok:
                    cands += ok
                else:
                    rejected += [r for r in priced if isinstance(r, Rejection)][:1]  # the first reason is enough
    return cands, rejected, evals


def binding_constraint(sc: Scenario, evals: list[LayoutEval], cands: list[Candidate], rejected: list[Rejection]) -> str:
    """Why nothing qualifies, with numbers, in one sentence."""
    if not evals and all(r.reason == NO_FIT for r in rejected):
        return (
            "The model does not fit the complete memory budget on any GPU and layout tried (up to "
            f"{max(TP_DEGREES)} GPUs per machine and {max(PP_STAGES)} stages); try a smaller weights format."
        )
    if not cands:
        reasons = sorted({r.reason for r in rejected if r.offer_id})
        return "No offer can rent a layout that fits: " + "; ".join(reasons[:3]) + "."
    if sc.traffic.ttft_target_s:
        best = min(evals, key=lambda e: e.floor_ttft_s)
        if best.floor_ttft_s > sc.traffic.ttft_target_s:
            return (
                f"The {sc.request.input_tokens:,}-token prompt alone prefills in {best.floor_ttft_s:,.2f} s on the "
                f"fastest layout ({best.label}, {get_format(best.weights_format).label}); a TTFT of "
                f"{sc.traffic.ttft_target_s:g} s is not reachable with these GPUs."
            )
    if sc.traffic.tpot_target_s:
        best = min(evals, key=lambda e: e.floor_tpot_s)
        if best.floor_tpot_s > sc.traffic.tpot_target_s:
            return (
                f"Even one request alone takes {best.floor_tpot_s * 1e3:,.1f} ms per token on the fastest layout "
                f"({best.label}); a TPOT of {sc.traffic.tpot_target_s * 1e3:,.0f} ms is not reachable with these GPUs."
            )
    misses = sorted({x for c in cands for x in c.misses})
    return "Every configuration misses a target: " + "; ".join(misses[:3]) + "."
