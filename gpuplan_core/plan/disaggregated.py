"""Disaggregated prefill/decode serving (P/D) as a layout the recommender weighs against aggregated serving: the
fewest prefill and decode workers that meet the targets at the peak, priced per pool on one offer (perf/
disaggregated.py is the model of each figure). Interactive serving with a traffic estimate only, where the user set
no layout and the request has a token after its first.

    workers     x = ceil(peak / one prefill worker's capacity within p95 TTFT target - KV transfer);
                y = ceil(peak / one decode worker's capacity at the TPOT target)
    machines    both pools on one machine of the offer when x g_p + y g_d GPUs fit it (the KV over NVLink), priced
                as one replica of that many GPUs; else each pool rents whole nodes of its own, as aggregated picks do
                (billing.monthly_always_on per pool), the KV crossing the offer's stated network at its stated
                speed (an offer that states neither cannot host P/D across machines)
    scope       one GPU type and weights format for both pools, one layout per pool (tensor parallel 1-8 within
                a machine, from the layouts the serving search judged: no pipeline stages, no expert parallel);
                always-on offers only (a serverless pool of each phase is not modelled)

Kept cheap (plan/answer.py's budget): the decode worker is a few step-model calls; a prefill worker's capacity is
its step loop's (plan/capacity.py, remembered like every replica's) and is run only for a (prefill layout, decode
layout, offer) whose least cost, the prefill pool at the step model's best prefill throughput (the engine's token
budget filled with whole prompts: no capacity exceeds it), is under the best aggregated pick's, and whose prefill
layout's one request alone (the search's ``floor_ttft_s``) is within the first-token target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from ..common.text import counted, usd
from ..model.arch import ModelArch
from ..perf.disaggregated import (
    DecodeWorker,
    decode_tpot_at,
    decode_worker,
    kv_transfer_bytes,
    kv_transfer_s,
    network_bytes_per_s,
    peer_bytes_per_s,
)
from ..perf.replica import Replica
from ..perf.steps import step_model
from ..pricing.billing import cost_per_million_tokens, monthly_always_on, nodes_needed
from ..pricing.offers import SCALE_UP_LINKS, Offer
from ..results.plan import Disaggregated, PDPool, Pick, layout_label
from ..scenario.scenario import Scenario
from .capacity import ReplicaEval, ReplicaQuestion, evaluate_replica, replica_of
from .fitting import layout_set
from .rent import Found
from .search import Layout, ServingAsk, replica_question, target_misses


def prefill_question(q: ReplicaQuestion, ttft_budget_s: float | None) -> ReplicaQuestion:
    """A layout's replica question as a prefill worker's (perf/disaggregated.py): one output token, the same KV
    tokens (sequences of input + 1 tokens), the first-token target less the KV transfer and no TPOT target."""
    kv = max(1, q.kv_sequences * (q.input_tokens + q.output_tokens) // (q.input_tokens + 1))
    return replace(q, output_tokens=1, kv_sequences=kv, batch=min(q.batch, kv), targets=(ttft_budget_s, None))


def prefill_rate_bound(r: Replica) -> float:
    """Requests per second no prefill worker of this replica exceeds: the engine's token budget filled with whole
    prompts (k = budget // new tokens, at least 1) in one step of the step model (a speculating replica's draft
    reading them too), k / that step's seconds: the step
    loop's steps carry at most the budget, in chunks that cost at least as much, so its capacity stays under it."""
    k = max(1, r.limits.max_num_batched_tokens // r.new_tokens)
    return k / step_model(r.m, r.gpu, r.wl, r.pa, r.engine).first_token_s(k, r.input_tokens)


@dataclass(frozen=True)
class Split:
    """One sized P/D deployment on one offer: x prefill and y decode workers, its latencies and monthly cost."""

    offer: Offer
    prefill: Layout
    decode: Layout
    x: int
    y: int
    prefill_capacity_per_s: float
    dw: DecodeWorker
    kv_bytes: float
    link_bytes_per_s: float
    link: str
    shared: bool
    prefill_ttft_s: float  # a prefill worker's p95 at its share of the peak
    kv_s: float
    tpot_s: float
    monthly_usd: float
    paid_gpus: int
    machines: int

    @property
    def ttft_s(self) -> float:
        return self.prefill_ttft_s + self.kv_s


def pool_price(o: Offer, gpus_p: int, gpus_d: int, shared: bool, hours: float) -> tuple[float, int, int]:
    """(monthly USD, GPUs paid, machines): both pools as one rental where they share machines, else each pool's
    whole nodes (billing.monthly_always_on) added."""
    if shared:
        nodes = nodes_needed(gpus_p + gpus_d, o.gpus_per_node)
        return monthly_always_on(o, gpus_p + gpus_d, hours), int(nodes * o.gpus_per_node), 1
    n_p, n_d = nodes_needed(gpus_p, o.gpus_per_node), nodes_needed(gpus_d, o.gpus_per_node)
    machines = n_p + n_d if o.gpus_per_node > 1 else gpus_p + gpus_d  # per-GPU rentals: a machine per GPU
    cost = monthly_always_on(o, gpus_p, hours) + monthly_always_on(o, gpus_d, hours)
    return cost, int((n_p + n_d) * o.gpus_per_node), machines


def states_network(o: Offer) -> bool:
    """Whether the offer states a network between its machines and its speed (the KV can cross machines)."""
    return o.inter_node_network not in ("none", "unknown") and bool(o.inter_node_gbit_s)


def _link(o: Offer, p: Layout, d: Layout, shared: bool, pa) -> tuple[float, str] | None:
    """The link the KV moves over (bytes/s, words): NVLink (the GPU's peer link) within a shared machine, else the
    offer's stated network at its stated speed (RDMA or Ethernet: NIXL and Mooncake move KV over TCP too, slower,
    which the transfer time shows); None where the offer states no network or no speed."""
    ranks = min(p.tp, d.tp)
    if shared:
        nvlink = o.intra_node_link in SCALE_UP_LINKS  # else PCIe (an unstated link read as PCIe)
        where = f"{o.intra_node_link if nvlink else 'PCIe'} within one machine"
        return peer_bytes_per_s(p.gpu, ranks, pa, nvlink), where
    if not states_network(o):
        return None
    bw = network_bytes_per_s(o.inter_node_gbit_s, o.machine_gpus, p.tp)
    return bw, f"{o.inter_node_network} {o.inter_node_gbit_s:,.0f} Gbit/s per machine"


def size_split(
    o: Offer, p: Layout, d: Layout, rp: ReplicaQuestion, dw: DecodeWorker, rd: Replica, peak: float, hours: float
) -> Split | None:
    """The fewest workers of each pool that meet the targets at ``peak`` requests per second on offer ``o`` (the
    module docstring), sharing a machine where they fit one, else across the offer's network; None where neither
    can (no prefill capacity within the first-token target left after the transfer, or no stated network)."""
    kv_bytes = kv_transfer_bytes(rp.model, rp.wl.kv_format, rp.input_tokens, rd.wl.spec_draft)
    y = max(1, math.ceil(peak / dw.capacity_per_s - 1e-9))
    tpot = decode_tpot_at(rd, dw, peak / y)
    for shared in (True, False):
        link = _link(o, p, d, shared, rp.pa)
        if link is None:
            continue
        kv_s = kv_transfer_s(kv_bytes, link[0])
        ttft = rp.targets[0]
        if ttft is not None and ttft - kv_s <= 0:
            continue
        ev: ReplicaEval = evaluate_replica(prefill_question(rp, None if ttft is None else ttft - kv_s))
        if ev.capacity_per_s <= 0:
            continue
        x = max(1, math.ceil(peak / ev.capacity_per_s - 1e-9))
        while ev.at(peak / x).saturated:
            x += 1
        gpus_p, gpus_d = x * p.tp, y * d.tp
        if shared and gpus_p + gpus_d > o.machine_gpus:
            continue  # the pools do not fit one machine: across the network, if the offer states one
        cost, paid, machines = pool_price(o, gpus_p, gpus_d, shared, hours)
        at = ev.at(peak / x)
        return Split(
            o,
            p,
            d,
            x,
            y,
            ev.capacity_per_s,
            dw,
            kv_bytes,
            *link,
            shared,
            at.ttft_p95_s,
            kv_s,
            tpot,
            cost,
            paid,
            machines,
        )
    return None


class Worker(NamedTuple):
    """One layout as either pool's worker: its replica question and replica, its decode worker at the TPOT target
    (None: one sequence alone misses it) and the prefill rate no prefill worker of it exceeds."""

    layout: Layout
    question: ReplicaQuestion
    replica: Replica
    decode: DecodeWorker | None
    prefill_bound_per_s: float


@lru_cache(maxsize=4096)
def _figures(q: ReplicaQuestion) -> tuple[Replica, DecodeWorker | None, float]:
    """A layout's replica, its decode worker at the question's TPOT target and its prefill rate bound, remembered
    by the question (as capacity.py's judgements: no volume, no prices in it)."""
    r = replica_of(q)
    return r, decode_worker(r, q.targets[1]), prefill_rate_bound(r)


def _per_step(dw: DecodeWorker) -> str:
    """', speculating: 2.77 tokens a step' where the decode worker speculates, else ''."""
    return "" if dw.tokens_per_step == 1.0 else f", speculating: {dw.tokens_per_step:.2f} tokens a step"


def workers(m: ModelArch, ask: ServingAsk, lays: list[Layout]) -> list[Worker]:
    """Each layout as a worker (a few step-model calls each, once per question; no step loop)."""
    out = []
    for lay in lays:
        q = replica_question(m, ask, lay.gpu, lay.weights_format, lay.tp, 1, lay.kv_sequences)
        out.append(Worker(lay, q, *_figures(q)))
    return out


def forget() -> None:
    """Forget the remembered workers (search.forget's partner: a test's fresh start)."""
    _figures.cache_clear()


def cheapest_split(m: ModelArch, sc: Scenario, offers: list[Offer], found: Found, budget_usd: float) -> Split | None:
    """The cheapest P/D deployment meeting the targets that costs less than ``budget_usd`` a month (the best
    aggregated pick's), or None (the module docstring's scope)."""
    ask = ServingAsk.of(sc)
    tr, hours = ask.traffic, ask.pricing.hours_per_month
    if not (ask.interactive and tr.requests_per_day) or sc.request.output_tokens < 2 or layout_set(ask.parallelism):
        return None
    peak = tr.peak_requests_per_s
    groups: dict[tuple[str, str], list[Layout]] = {}
    for lay in found.layouts:
        if lay.pp == 1 and lay.ep == 1:
            groups.setdefault((lay.gpu.gpu, lay.weights_format), []).append(lay)
    bounds = []  # (least monthly cost, offer id, offer, prefill worker, decode worker)
    for (gid, _), lays in groups.items():
        rent = [o for o in offers if o.gpu == gid and not o.is_serverless]
        ws = workers(m, ask, lays) if rent else []
        pairs = []  # (GPUs at the least prefill pool and the decode pool, prefill worker, decode worker)
        for d in (d for d in ws if d.decode is not None):
            y = max(1, math.ceil(peak / d.decode.capacity_per_s - 1e-9))
            for p in ws:
                if tr.ttft_target_s and p.layout.replica.floor_ttft_s >= tr.ttft_target_s:
                    continue  # the prompt alone misses the first-token target on this prefill layout
                x_least = max(1, math.ceil(peak / p.prefill_bound_per_s - 1e-9))
                pairs.append((x_least * p.layout.tp + y * d.layout.tp, p, d))
        for o in rent:
            fits = {w.layout.tp for w in ws if not o.layout_problem(w.layout.tp, 1)}
            crosses = states_network(o)
            for gpus, p, d in pairs:
                if p.layout.tp in fits and d.layout.tp in fits and (crosses or gpus <= o.machine_gpus):
                    least = monthly_always_on(o, gpus, hours)
                    if least < budget_usd:
                        bounds.append((least, o.offer_id, o, p, d))
    best: Split | None = None
    for least, _, o, p, d in sorted(bounds, key=lambda b: b[:2]):
        if best is not None and least >= best.monthly_usd:
            break
        s = size_split(o, p.layout, d.layout, p.question, d.decode, d.replica, peak, hours)
        if s is not None and target_misses(tr, s.ttft_s, s.tpot_s):
            s = None  # within the targets by construction (each pool's figures); checked as the picks are
        if s is not None and s.monthly_usd < budget_usd and (best is None or s.monthly_usd < best.monthly_usd):
            best = s
    return best


def split_label(s: Split) -> str:
    """'P/D: 2 x (1 x H100-SXM, TP 1) prefill + 3 x (2 x H100-SXM, TP 2) decode'."""
    p, d = s.prefill, s.decode
    return (
        f"P/D: {s.x} x ({layout_label(p.gpu.gpu, p.tp, 1)}) prefill + {s.y} x ({layout_label(d.gpu.gpu, d.tp, 1)}) "
        "decode"
    )


def split_pick(s: Split, best: Pick | None, tr, pricing, prompt: int) -> Pick:
    """The split as a Pick (results/plan.py ``Disaggregated`` holds the pools), its why lines saying what it beat.
    Its cost per 1M tokens is the whole deployment's hourly price over what its pools do at full load: output
    tokens from the decode pool (y workers x batch / step), prompt tokens from the prefill pool (x workers x their
    capacity x input tokens), at the pricing's utilization (billing.cost_per_million_tokens, as aggregated picks)."""
    p, d = s.prefill, s.decode
    hourly, use = s.monthly_usd / pricing.hours_per_month, pricing.utilization
    pools = Disaggregated(
        prefill=PDPool(
            role="prefill",
            workers=s.x,
            tp=p.tp,
            layout=p.label,
            gpus=s.x * p.tp,
            requests_per_s_per_worker=s.prefill_capacity_per_s,
        ),
        decode=PDPool(
            role="decode",
            workers=s.y,
            tp=d.tp,
            layout=d.label,
            gpus=s.y * d.tp,
            requests_per_s_per_worker=s.dw.capacity_per_s,
        ),
        kv_transfer_bytes=s.kv_bytes,
        kv_transfer_s=s.kv_s,
        link=s.link,
        link_bytes_per_s=s.link_bytes_per_s,
        shared_machines=s.shared,
        prefill_ttft_p95_s=s.prefill_ttft_s,
        decode_batch=s.dw.batch,
        aggregated_monthly_usd=None if best is None else best.monthly_usd,
        aggregated_offer_id=None if best is None else best.offer_id,
        aggregated_layout=None if best is None else best.layout,
    )
    why = [
        f"prefill pool: {counted(s.x, 'worker')} of {p.label}, {s.prefill_capacity_per_s:,.2f} req/s each within a "
        f"p95 TTFT of the target less the KV transfer (p95 {s.prefill_ttft_s * 1e3:,.0f} ms at the peak)",
        f"KV transfer: {s.kv_bytes / 1e6:,.1f} MB a prompt over the {s.link} in {s.kv_s * 1e3:,.2f} ms",
        f"decode pool: {counted(s.y, 'worker')} of {d.label}, {s.dw.batch:,} sequences at {s.dw.step_s * 1e3:,.1f} "
        f"ms a step{_per_step(s.dw)} ({s.dw.capacity_per_s:,.2f} req/s each; TPOT {s.tpot_s * 1e3:,.1f} ms at the "
        "peak)",
        f"disaggregated: {verdict(s.monthly_usd, best, tr)}",
    ]
    return Pick.renting(
        s.offer,
        gpu=p.gpu.gpu,
        weights_format=p.weights_format,
        tp=d.tp,
        pp=1,
        layout=split_label(s),
        replicas=s.y,
        gpus=s.paid_gpus,
        nodes=s.machines,
        monthly_usd=s.monthly_usd,
        ttft_s=s.ttft_s,
        tpot_s=s.tpot_s,
        requests_per_s_per_replica=s.dw.capacity_per_s,
        output_cost_per_million_usd=cost_per_million_tokens(
            hourly, s.y * s.dw.batch * s.dw.tokens_per_step / s.dw.step_s, use
        ),
        input_cost_per_million_usd=cost_per_million_tokens(hourly, s.x * s.prefill_capacity_per_s * prompt, use),
        misses=[],
        why=why,
        disaggregated=pools,
    )


def verdict(monthly_usd: float, best: Pick | None, tr) -> str:
    """Why the split is the pick, in words: by how much it undercuts the best aggregated layout at the targets."""
    targets = []
    if tr.ttft_target_s:
        targets.append(f"p95 TTFT {tr.ttft_target_s * 1e3:,.0f} ms")
    if tr.tpot_target_s:
        targets.append(f"TPOT {tr.tpot_target_s * 1e3:,.1f} ms")
    at = " and ".join(targets) or "no latency target"
    if best is None:
        return f"no aggregated layout meets the targets ({at}); the split does at {usd(monthly_usd)} a month"
    agg = f"{counted(best.replicas, 'replica')} of {best.layout} on {best.offer_id}"
    saved = usd(best.monthly_usd - monthly_usd)
    return f"cheaper than the best aggregated layout ({agg}, {usd(best.monthly_usd)}) by {saved} a month at {at}"


def best_aggregated(found: Found) -> Pick | None:
    """The cheapest aggregated pick meeting every target (of equal cost the faster first token, the search's order
    on ties): what a split must undercut, as the recommender ranks (recommend._ranked's first)."""
    ok = [p for p in found.picks if not p.misses]
    return min(ok, key=lambda p: (p.rank_cost, p.ttft_s or 0.0)) if ok else None


def disaggregated_pick(m: ModelArch, sc: Scenario, offers: list[Offer], found: Found) -> Pick | None:
    """The P/D pick of the search ``found`` (the scenario's filtered offers) where it undercuts the best aggregated
    pick, else None: the one call the recommender and the cost table both make, so they price the same split."""
    return weigh_disaggregated(m, sc, offers, found, best_aggregated(found))


def weigh_disaggregated(m: ModelArch, sc: Scenario, offers: list[Offer], found: Found, best: Pick | None):
    """The P/D pick where it is cheaper than ``best`` (the cheapest aggregated pick meeting the targets; None:
    none does) at the same targets, else None."""
    budget = math.inf if best is None or best.monthly_usd is None else best.monthly_usd
    s = cheapest_split(m, sc, offers, found, budget)
    return None if s is None else split_pick(s, best, sc.traffic, sc.pricing, sc.request.input_tokens)
