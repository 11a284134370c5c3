"""Layouts left unjudged because bounds prove that nothing the answer or the Cost page shows reads them (issue 30).

Judging a layout under traffic is its replica's capacity search and load points (capacity.py: ~6-12 runs of the
step loop). Its bounds cost the search's first 2-4 runs (capacity.py ``replica_bound``; the judgement reuses them):
the capacity is at most the all-slots-busy throughput ``max_rate``, and it is above 0 exactly when the search's
bracket before its bisection is. A layout whose capacity is above 0 meets the targets (search.served), so an
always-on offer renting it needs at least ceil(peak / max_rate) replicas (and those the GPU count set holds) and
costs at least ``least_usd``; and no load point's p95 first-token time is under one request alone on the roofline
(``floor_ttft_s``; held over random questions by tests/core/plan/test_prune.py and ``bench/bench_prune.py``).

The layouts are judged cheapest bound first until every one left is out of what is shown, for every offer renting it:

    Cost page row   the offer has a judged pick that meets the targets and ranks before it: costs less than
                    ``least_usd``, or as much and has a first token faster than ``floor_ttft_s``
    top picks       five judged picks (one per offer and price) that meet the targets rank before it
    near misses     none: it meets the targets (a capacity of 0 is never left out)
    Pareto front    a judged pick that costs less than ``least_usd`` is as fast as ``floor_ttft_s``, or one that
                    costs as much is faster
    counts          no offer renting it is serverless (a serverless worker's cost reads the latencies); an always-on
                    offer rents it whatever its figures: one pick counted

The alternatives are Cost page rows. Without traffic nothing is left out (the static batch runs no step loop);
``exhaustive`` judges every layout (the search this one must equal: tests/core/plan/test_prune.py). The search
leaves layouts out only where asked (``PRUNE_LAYOUTS``, off: see there).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from ..model.arch import ModelArch
from ..pricing.billing import replicas_held
from ..pricing.offers import Offer
from ..results.plan import Pick
from .search import Layout, ServingAsk, bound, judge

TOP = 5  # the picks the recommendation shows (recommend.recommend's ``top``)
FLOOR_SHARE = 0.9  # of one request alone's first-token and end-to-end times: the floors used, with a margin
# Off: measured by bench/bench_prune.py, leaving layouts out saves a median 1% of a new question's step-loop runs
# (0-8%; the answer and the Cost page's rows name 73-83% of the layouts, and the bounds are loose: a layout's
# first token at load is ~2-3x one request alone's), while a later traffic- or price-only change then judges the
# layouts it needs afresh (4 runs over 12 changes, p95 148 ms against 30 ms): rent.inference_candidates's default.
PRUNE_LAYOUTS = False


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
    bounds: list[tuple[str, float]] | None = None  # (offer id, its least monthly USD) per offer renting it
    ep: int = 1  # expert parallel (search.Layout's)
    floor_ttft_s: float = 0.0
    priceable: bool = False  # every offer renting it is always-on and the bounds are finite

    @property
    def least_usd(self) -> float:
        return min((usd for _, usd in self.bounds or []), default=math.inf)


def _bounds(m: ModelArch, ask: ServingAsk, u: Unit, least_usd) -> None:
    """The unit's bounds (``Unit.bounds``); ``least_usd(unit, offer, ask, bound, replicas held, e2e floor)``: the
    least an offer can cost (rent.py ``least_monthly_usd``), None where there is no bound."""
    b = bound(m, ask, u.gpu, u.fmt, u.tp, u.pp, u.kv, u.ep)
    u.floor_ttft_s = FLOOR_SHARE * b.floor_ttft_s
    least = replicas_held(ask.parallelism.gpus, u.tp * u.pp * u.ep)
    u.bounds = []
    u.priceable = b.least_capacity_per_s > 0  # a capacity of 0 misses the targets at the replicas held: a near miss
    for o in u.offers if u.priceable else []:
        if not o.layout_problem(u.tp, u.pp, u.ep):
            usd = least_usd(u, o, ask, b, least, FLOOR_SHARE * b.floor_e2e_s)
            u.priceable = usd is not None
            if not u.priceable:
                return
            u.bounds.append((o.offer_id, usd))


def _before(usd: float, ttft_s: float, u_usd: float, u_ttft_s: float) -> bool:
    """Whether a judged pick ranks before any pick costing at least ``u_usd`` with a first token of at least
    ``u_ttft_s`` (cheaper, or as cheap and faster: the order of the ranking, the rows and the Pareto front)."""
    return usd < u_usd or (usd <= u_usd and ttft_s < u_ttft_s)


class _Shown:
    """What the judged picks settle: those meeting the targets per offer (a row each), the fifth pick shown and
    the cheapest, and the fastest first token at or under each cost (the Pareto front's test)."""

    def __init__(self, picks: list[Pick]):
        ok = sorted((p for p in picks if not p.misses), key=lambda p: (p.rank_cost, p.ttft_s or 0.0))
        self.by_offer: dict[str, list[tuple[float, float]]] = {}
        keys: set[tuple[str, float]] = set()
        kept: list[tuple[float, float]] = []  # the picks shown, one per offer and price (recommend._ranked)
        for p in ok:
            self.by_offer.setdefault(p.offer_id, []).append((p.rank_cost, p.ttft_s))
            key = (p.offer_id, round(p.rank_cost, 6))
            if key not in keys:
                keys.add(key)
                kept.append((p.rank_cost, p.ttft_s or 0.0))
        self.best = ok[0].rank_cost if ok else math.inf
        self.fifth = kept[TOP - 1] if len(kept) >= TOP else (math.inf, math.inf)
        priced = sorted((p.monthly_usd, p.ttft_s) for p in picks if p.monthly_usd is not None)
        self.costs = [c for c, _ in priced]
        self.fastest: list[float] = []
        for _, t in priced:
            self.fastest.append(min(t, self.fastest[-1]) if self.fastest else t)

    def _fastest(self, usd: float, strictly: bool) -> float:
        """The fastest first token of the picks that cost less than ``usd`` (``strictly``) or at most that."""
        i = (bisect.bisect_left if strictly else bisect.bisect_right)(self.costs, usd)
        return self.fastest[i - 1] if i else math.inf

    def leaves_out(self, u: Unit) -> bool:
        """Whether nothing shown can be this layout's, for any judgement its bounds allow (the module docstring)."""
        if not u.priceable:
            return False
        floor = u.floor_ttft_s
        for oid, usd in u.bounds:
            if not any(_before(c, t, usd, floor) for c, t in self.by_offer.get(oid, ())):
                return False  # its row could be this layout
            if not _before(*self.fifth, usd, floor):
                return False  # a top pick could be
            if not (self._fastest(usd, True) <= floor or self._fastest(usd, False) < floor):
                return False  # a point of the Pareto front could be
        return True


def judge_units(m: ModelArch, ask: ServingAsk, units: list[Unit], priced, least_usd, exhaustive: bool = False) -> None:
    """Judge the units (``Unit.layout``), all of them when ``exhaustive`` or without traffic, else cheapest bound
    first until the rest are left out (the module docstring). ``priced(unit)``: the unit's picks once judged;
    ``least_usd``: as ``_bounds``'s."""
    if exhaustive or not ask.traffic.requests_per_day:
        for u in units:
            u.layout = judge(m, ask, u.gpu, u.fmt, u.tp, u.pp, u.kv, u.ep)
        return
    for u in units:
        _bounds(m, ask, u, least_usd)
    picks: list[Pick] = []
    left = sorted(units, key=lambda u: (not u.priceable, u.least_usd))
    while left:
        shown = _Shown(picks)
        i = next((k for k, u in enumerate(left) if not shown.leaves_out(u)), None)
        if i is None:
            return
        u = left.pop(i)
        u.layout = judge(m, ask, u.gpu, u.fmt, u.tp, u.pp, u.kv, u.ep)
        picks += [p for p in priced(u) if isinstance(p, Pick)]
