"""Layouts left unjudged because bounds prove that nothing the answer or the Cost page shows reads them (issue 30).

Judging a layout under traffic is its replica's capacity search and load points (capacity.py: ~6-12 runs of the
step loop). Its bounds cost one run (capacity.py ``replica_bound``, which the judgement reuses): the capacity is at
most the all-slots-busy throughput ``max_rate``, so an always-on offer renting the layout needs at least
ceil(peak / max_rate) replicas (and those the GPU count set holds) and costs at least ``ok_usd`` when it meets the
targets; when it meets none (capacity 0) it runs the replicas the count set holds and costs ``miss_usd`` <= ``ok_usd``;
and no load point's p95 first-token time is under one request alone on the roofline (``floor_ttft_s``; asserted
over random questions in tests/core/plan/test_prune.py and by ``bench/bench_prune.py``).

The layouts are judged cheapest bound first until every one left is out of what is shown, for every offer renting it:

    Cost page row   the offer has a judged pick that meets the targets for less than ``ok_usd``
    top picks       five judged picks (one per offer and price) that meet the targets cost less than ``ok_usd``
    near misses     ``miss_usd`` >= the cheapest judged pick that meets the targets
    Pareto front    a judged pick that costs less than ``miss_usd`` is as fast as ``floor_ttft_s``
    counts          the offer is not serverless (a serverless worker's cost, and whether it is a pick, read the
                    capacity); an always-on offer rents the layout whatever its judgement: one pick counted

The alternatives are Cost page rows. Without traffic nothing is left out (the static batch runs no step loop);
``exhaustive`` judges every layout (the search this one must equal: tests/core/plan/test_prune.py).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from ..model.arch import ModelArch
from ..pricing.billing import monthly_always_on, replicas_for_traffic, replicas_held
from ..pricing.offers import Offer
from ..results.plan import Pick
from .search import Layout, ServingAsk, bound, judge

TOP = 5  # the picks the recommendation shows (recommend.recommend's ``top``)


@dataclass
class Unit:
    """One layout of one GPU type and format that an offer can rent; ``layout``: its judgement (None: unjudged)."""

    gpu: object
    fmt: str
    tp: int
    pp: int
    kv: int
    offers: list[Offer]  # its GPU type's offers
    layout: Layout | None = None
    bounds: list[tuple[str, float, float]] | None = None  # (offer id, ok_usd, miss_usd) per offer renting it
    floor_ttft_s: float = 0.0
    priceable: bool = False  # every offer renting it is always-on and the bounds are finite

    @property
    def least_usd(self) -> float:
        return min((ok for _, ok, _ in self.bounds or []), default=math.inf)


def _bounds(m: ModelArch, ask: ServingAsk, u: Unit) -> None:
    tr, pricing = ask.traffic, ask.pricing
    b = bound(m, ask, u.gpu, u.fmt, u.tp, u.pp, u.kv)
    u.floor_ttft_s = b.floor_ttft_s
    gpus = u.tp * u.pp
    least = replicas_held(ask.parallelism.gpus, gpus)
    renting = [o for o in u.offers if not o.layout_problem(u.tp, u.pp)]
    u.priceable = b.max_rate_per_s > 0 and not any(o.is_serverless for o in renting)
    if not u.priceable:
        u.bounds = []
        return
    need = max(replicas_for_traffic(tr.requests_per_day, tr.peak_to_average, b.max_rate_per_s), least)
    hours = pricing.hours_per_month
    u.bounds = [
        (o.offer_id, monthly_always_on(o, gpus * need, hours), monthly_always_on(o, gpus * least, hours))
        for o in renting
    ]


class _Shown:
    """What the judged picks settle: the cheapest meeting the targets per offer and of all, the cost of the fifth
    shown pick, and the fastest first token under each cost (the Pareto front's test)."""

    def __init__(self, picks: list[Pick]):
        ok = sorted((p for p in picks if not p.misses), key=lambda p: (p.rank_cost, p.ttft_s or 0.0))
        self.by_offer: dict[str, float] = {}
        keys: set[tuple[str, float]] = set()
        kept: list[float] = []  # the costs of the picks shown, one per offer and price (recommend._ranked)
        for p in ok:
            self.by_offer.setdefault(p.offer_id, p.rank_cost)
            key = (p.offer_id, round(p.rank_cost, 6))
            if key not in keys:
                keys.add(key)
                kept.append(p.rank_cost)
        self.best = ok[0].rank_cost if ok else math.inf
        self.fifth = kept[TOP - 1] if len(kept) >= TOP else math.inf
        priced = sorted((p.monthly_usd, p.ttft_s) for p in picks if p.monthly_usd is not None)
        self.costs = [c for c, _ in priced]
        self.fastest: list[float] = []
        for _, t in priced:
            self.fastest.append(min(t, self.fastest[-1]) if self.fastest else t)

    def fastest_under(self, usd: float) -> float:
        i = bisect.bisect_left(self.costs, usd)  # the picks that cost strictly less
        return self.fastest[i - 1] if i else math.inf

    def leaves_out(self, u: Unit) -> bool:
        """Whether nothing shown can be this layout's, for any judgement its bounds allow (the module docstring)."""
        if not u.priceable:
            return False
        for oid, ok_usd, miss_usd in u.bounds:
            if not self.by_offer.get(oid, math.inf) < ok_usd or not self.fifth < ok_usd:
                return False
            if miss_usd < self.best or not self.fastest_under(miss_usd) <= u.floor_ttft_s:
                return False
        return True


def judge_units(m: ModelArch, ask: ServingAsk, units: list[Unit], priced, exhaustive: bool = False) -> None:
    """Judge the units (``Unit.layout``), all of them when ``exhaustive`` or without traffic, else cheapest bound
    first until the rest are left out (the module docstring). ``priced(unit)``: the unit's picks once judged."""
    if exhaustive or not ask.traffic.requests_per_day:
        for u in units:
            u.layout = judge(m, ask, u.gpu, u.fmt, u.tp, u.pp, u.kv)
        return
    for u in units:
        _bounds(m, ask, u)
    picks: list[Pick] = []
    left = sorted(units, key=lambda u: (not u.priceable, u.least_usd))
    while left:
        shown = _Shown(picks)
        i = next((k for k, u in enumerate(left) if not shown.leaves_out(u)), None)
        if i is None:
            return
        u = left.pop(i)
        u.layout = judge(m, ask, u.gpu, u.fmt, u.tp, u.pp, u.kv)
        picks += [p for p in priced(u) if isinstance(p, Pick)]
