"""Every offer renting every layout the search judged for its GPU type (``inference_candidates``); one offer renting
one judged layout for the traffic (or one replica without traffic): the ``Pick``, or why the offer cannot rent it.

    always-on   GPUs = replicas x GPUs per replica, in whole nodes where the offer rents whole nodes
                monthly cost = nodes (or GPUs) x price per hour x hours a month (billing.monthly_always_on)
    serverless  workers for the traffic, each batching up to one replica's capacity, billed while busy, idle up to
                the offer's idle timeout and starting cold (billing.serverless_monthly); active workers run 24/7
    cold start  = COLD_START_FIXED_S + the weights' bytes / WEIGHT_LOAD_BYTES_PER_S
    $ per 1M    output (input) tokens = the node's price per hour / the static batch's decode (prefill) tokens per
                second at the pricing's utilization (billing.cost_per_million_tokens)
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

from ..common.text import counted, exact, figure, usd
from ..common.units import GB, SECONDS_PER_DAY
from ..hardware.catalog import get_gpu
from ..memory.components import model_weight_bytes
from ..memory.request import memory_request
from ..model.arch import ModelArch
from ..model.formats import get_format
from ..pricing.billing import (
    cost_per_million_tokens,
    monthly_always_on,
    nodes_needed,
    replicas_for_traffic,
    serverless_monthly,
)
from ..pricing.offers import Offer
from ..results.plan import Pick, Rejected, layout_label
from ..scenario.deployment import Pricing, Traffic
from ..scenario.scenario import Scenario
from .capacity import ReplicaBound
from .prune import PRUNE_LAYOUTS, Unit, judge_units
from .search import Layout, Served, ServingAsk, evaluate_layouts, judge_all, rentable_layouts, served
from .speculation import weigh, weighs_speculation

COLD_START_FIXED_S = 20.0  # serverless worker start before the weights load (container, engine)
WEIGHT_LOAD_BYTES_PER_S = 2 * GB  # model load speed at cold start (network volume / local NVMe)
SERVERLESS_IDLE_TIMEOUT_S = 5.0  # an offer that states no idle timeout
WARM_TRIED = 64  # warm-worker counts a serverless bound tries (plan/prune.py)


def cold_start_s(m: ModelArch, weights_format: str) -> float:
    return COLD_START_FIXED_S + model_weight_bytes(m, get_format(weights_format)) / WEIGHT_LOAD_BYTES_PER_S


def cold_start_rule() -> str:
    """The cold-start formula in words, from its constants: '20 s + weights load at 2 GB/s'."""
    return f"{COLD_START_FIXED_S:g} s + weights load at {WEIGHT_LOAD_BYTES_PER_S / GB:g} GB/s"


def _rented_text(o: Offer, nodes: int, paid: int) -> str:
    price = exact(o.price_per_node_hour_usd) or figure(o.price_per_node_hour_usd, 6)
    if o.gpus_per_node > 1:
        return f"{nodes} node{'s' if nodes > 1 else ''} of {o.gpus_per_node:g} GPUs x {price} USD/node-hour"
    return f"{paid} GPU{'s' if paid > 1 else ''} x {price} USD/GPU-hour"


def rent(m: ModelArch, lay: Layout, s: Served, o: Offer, traffic: Traffic, pricing: Pricing) -> Pick | Rejected:
    """This offer renting this layout for the traffic (or one replica), or why it cannot."""
    gid, fmt = lay.gpu.gpu, lay.weights_format
    if problem := o.layout_problem(lay.tp, lay.pp, lay.ep):
        return Rejected(gid, problem, fmt, o.offer_id, lay.label)
    why = [f"layout {lay.label}: " + "; ".join(s.lines)]
    node_price = o.price_per_node_hour_usd * nodes_needed(lay.replica_gpus, o.gpus_per_node)
    static = lay.replica.static
    common = dict(
        gpu=gid,
        weights_format=fmt,
        tp=lay.tp,
        pp=lay.pp,
        ep=lay.ep if lay.ep > 1 else None,
        layout=lay.label,
        ttft_s=s.ttft_s,
        tpot_s=s.tpot_s,
        requests_per_s_per_replica=s.capacity_per_s,
        output_cost_per_million_usd=cost_per_million_tokens(
            node_price, static.decode_tokens_per_s, pricing.utilization
        ),
        input_cost_per_million_usd=cost_per_million_tokens(
            node_price, static.prefill_tokens_per_s, pricing.utilization
        ),
        misses=list(s.misses),
        why=why,
    )
    if o.is_serverless:
        if s.set_replicas > 1:
            held = f"the {s.set_replicas:,} replicas the GPU count set holds are a cluster"
            return Rejected(gid, f"a serverless pool scales with the traffic; {held}", fmt, o.offer_id, lay.label)
        if not traffic.requests_per_day:
            return Rejected(gid, "serverless needs a traffic estimate (requests per day)", fmt, o.offer_id, lay.label)
        if not s.capacity_per_s:
            return Rejected(gid, "a worker cannot meet the latency targets at any load", fmt, o.offer_id, lay.label)
        sl = serverless_monthly(
            node_price,
            traffic.requests_per_day,
            s.e2e_s,
            s.capacity_per_s,
            cold_start_s(m, fmt),
            o.serverless_idle_timeout_default_s or SERVERLESS_IDLE_TIMEOUT_S,
            hours_per_month=pricing.hours_per_month,
            peak_to_average=traffic.peak_to_average,
        )
        if o.billing_model == "serverless_active":  # always running, billed while idle
            monthly = sl.workers * node_price * pricing.hours_per_month
            why.append(f"serverless active workers: {sl.workers} running 24/7 (billed while idle)")
        else:
            monthly = sl.monthly_usd
            why.append(
                f"serverless: {counted(sl.workers_average, 'warm worker')}, up to {sl.workers} at peak, each "
                "batching up to "
                f"{s.capacity_per_s:,.2f} req/s; {sl.billed_seconds_per_month / 3600:,.0f} billed h/month incl. "
                f"{sl.cold_starts_per_month:,.0f} cold starts (after idle gaps longer than the idle timeout)"
            )
        gpus = sl.workers * lay.replica_gpus
        return Pick.renting(o, **common, gpus=gpus, nodes=sl.workers, replicas=sl.workers, monthly_usd=monthly)
    need = lay.replica_gpus * s.replicas
    nodes = nodes_needed(need, o.gpus_per_node)
    paid = int(nodes * o.gpus_per_node)
    machines = nodes if o.gpus_per_node > 1 else s.replicas * lay.pp  # per-GPU rentals: a machine per replica stage
    monthly = monthly_always_on(o, need, pricing.hours_per_month)
    why.append(
        f"{_rented_text(o, nodes, paid)} x {pricing.hours_per_month:g} h = {usd(monthly)} a month"
        + (f" ({paid - need} idle: whole {o.gpus_per_node:g}-GPU nodes)" if paid > need else "")
    )
    return Pick.renting(o, **common, gpus=paid, nodes=machines, replicas=s.replicas, monthly_usd=monthly)


def least_monthly_usd(
    m: ModelArch, u: Unit, o: Offer, ask: ServingAsk, b: ReplicaBound, least: int, e2e_floor_s: float
) -> float | None:
    """The least this offer costs a month renting the layout (``rent``'s rules) when it meets the targets, from its
    replica's bounds (plan/prune.py: capacity within [least_capacity, max_rate], mean end to end >= ``e2e_floor_s``)
    and the replicas the GPU count set holds; None: no bound (a serverless pool where the count set holds more, or
    too wide a range of warm workers to try)."""
    tr, hours, gpus = ask.traffic, ask.pricing.hours_per_month, u.tp * u.pp * u.ep
    if not o.is_serverless:
        need = max(replicas_for_traffic(tr.requests_per_day, tr.peak_to_average, b.max_rate_per_s), least)
        return monthly_always_on(o, gpus * need, hours)
    if least > 1:
        return None
    node_price = o.price_per_node_hour_usd * nodes_needed(gpus, o.gpus_per_node)
    idle = o.serverless_idle_timeout_default_s or SERVERLESS_IDLE_TIMEOUT_S

    def pool(cap: float, e2e_s: float):
        cold = cold_start_s(m, u.fmt)
        pf = tr.peak_to_average
        return serverless_monthly(
            node_price, tr.requests_per_day, e2e_s, cap, cold, idle, hours_per_month=hours, peak_to_average=pf
        )

    if o.billing_model == "serverless_active":  # workers at the peak, fewest at the highest capacity
        return pool(b.max_rate_per_s, 0.0).workers * node_price * hours
    # billed time grows with the end-to-end time; the warm workers ceil(rate / capacity) lie in a range: each tried
    rate = tr.requests_per_day / SECONDS_PER_DAY
    fewest, most = (max(1, math.ceil(rate / c - 1e-9)) for c in (b.max_rate_per_s, b.least_capacity_per_s))
    if most - fewest > WARM_TRIED:
        return None
    return min(pool(rate / w, e2e_floor_s).monthly_usd for w in range(fewest, most + 1))


class Found(NamedTuple):
    """The serving search's result: the priced picks, what was rejected and why, the layouts judged, and the picks
    of layouts left unjudged (plan/prune.py: always-on offers renting a layout bounds prove nothing shown reads)."""

    picks: list[Pick]
    rejected: list[Rejected]
    layouts: list[Layout]
    unjudged: int = 0


def inference_candidates(
    m: ModelArch,
    sc: Scenario,
    offers: list[Offer],
    formats: list[str],
    fixed: bool = False,
    *,
    exhaustive: bool = not PRUNE_LAYOUTS,
) -> Found:
    """Every offer renting every layout of its GPU type it can: the priced picks, what was rejected and why, and
    the layouts judged; unless ``exhaustive`` (the default: prune.PRUNE_LAYOUTS), a layout whose figures nothing
    shown reads is left unjudged (plan/prune.py). The picks come in the exhaustive search's order (GPU type,
    format, offer, layout). A scenario that names a draft model, or whose model ships an MTP module, is searched
    decoding plainly and speculating, each offer and layout keeping the cheaper at the targets
    (plan/speculation.py), each search exhaustive (prune.py's bounds hold for one search's shown figures, not for
    the two merged)."""
    if weighs_speculation(sc, m):
        return weigh(lambda s: _candidates(m, s, offers, formats, fixed, True), sc)
    return _candidates(m, sc, offers, formats, fixed, exhaustive)


def _candidates(
    m: ModelArch, sc: Scenario, offers: list[Offer], formats: list[str], fixed: bool, exhaustive: bool
) -> Found:
    """``inference_candidates`` of the scenario as it is (speculating where it names a draft)."""
    by_gpu: dict[str, list[Offer]] = {}
    for o in offers:
        by_gpu.setdefault(o.gpu, []).append(o)
    memory = {fmt: memory_request(sc, weights_format=fmt) for fmt in formats}
    ask = ServingAsk.of(sc)
    if exhaustive:
        return _every_layout(m, ask, by_gpu, memory, formats, fixed)
    groups: list[tuple[list[Rejected], list[Unit]]] = []
    for gid, gpu_offers in by_gpu.items():
        gpu = get_gpu(gid)
        for fmt in formats:
            kept, rej = rentable_layouts(m, ask, gpu, fmt, memory[fmt], fixed, offers=gpu_offers)
            groups.append((rej, [Unit(gpu, fmt, tp, pp, kv, gpu_offers, ep=ep) for tp, pp, kv, ep in kept]))
    priced: dict[int, list[Pick | Rejected]] = {}

    def rented(u: Unit) -> list[Pick | Rejected]:
        if id(u) not in priced:
            s = served(u.layout, ask.traffic, ask.parallelism.gpus)
            priced[id(u)] = [rent(m, u.layout, s, o, ask.traffic, ask.pricing) for o in u.offers]
        return priced[id(u)]

    units = [u for _, units in groups for u in units]
    judge_units(m, ask, units, rented, partial(least_monthly_usd, m))
    out = Found([], [], [])
    unjudged = 0
    for rej, units in groups:
        out.rejected.extend(rej)
        out.layouts.extend(u.layout for u in units if u.layout is not None)
        for k, o in enumerate(units[0].offers if units else []):
            tried: list[Pick | Rejected] = []
            left_out = 0
            for u in units:
                if u.layout is not None:
                    tried.append(rented(u)[k])
                elif problem := o.layout_problem(u.tp, u.pp, u.ep):
                    label = layout_label(u.gpu.gpu, u.tp, u.pp, u.ep)
                    tried.append(Rejected(u.gpu.gpu, problem, u.fmt, o.offer_id, label))
                else:
                    left_out += 1  # always-on (prune.py): a pick, whatever its figures
            ok = [p for p in tried if isinstance(p, Pick)]
            if ok or left_out:
                out.picks.extend(ok)
                unjudged += left_out
            else:
                out.rejected.extend([r for r in tried if isinstance(r, Rejected)][:1])  # the first reason is enough
    return out._replace(unjudged=unjudged)


def _every_layout(m: ModelArch, ask: ServingAsk, by_gpu: dict, memory: dict, formats: list[str], fixed: bool) -> Found:
    """The exhaustive search (the default): every rentable layout judged, every offer renting each (prune.py's
    bounds play no part)."""
    out = Found([], [], [])
    wanted = []  # every layout to judge, judged first in threads (search.judge_all), then read in order below
    for gid, gpu_offers in by_gpu.items():
        for fmt in formats:
            kept, _ = rentable_layouts(m, ask, get_gpu(gid), fmt, memory[fmt], fixed, offers=gpu_offers)
            wanted += [(get_gpu(gid), fmt, *x) for x in kept]
    judge_all(m, ask, wanted)
    for gid, gpu_offers in by_gpu.items():
        gpu = get_gpu(gid)
        for fmt in formats:
            lays, rej = evaluate_layouts(m, ask, gpu, fmt, memory[fmt], fixed, offers=gpu_offers)
            out.rejected.extend(rej)
            out.layouts.extend(lays)
            judged = [(lay, served(lay, ask.traffic, ask.parallelism.gpus)) for lay in lays]
            for o in gpu_offers:
                priced = [rent(m, lay, s, o, ask.traffic, ask.pricing) for lay, s in judged]
                ok = [p for p in priced if isinstance(p, Pick)]
                if ok:
                    out.picks.extend(ok)
                else:
                    out.rejected.extend(
                        [r for r in priced if isinstance(r, Rejected)][:1]
                    )  # the first reason is enough
    return out
