"""One replica judged once: its static batch, and under traffic its capacity within the targets and its latency
at any load up to that capacity. Remembered by exactly what it depends on.

A replica's judgement reads the model, the GPU, the layout (tp x pp) and weights format with the rest of its
``Workload`` (KV format, prefix cache, speculative decoding, CUDA graphs), the sequences its KV cache holds, the
request lengths and how they spread, how requests arrive, the engine and its scheduler limits, the latency targets
(interactive serving) and whether there is a traffic estimate at all. That is the cache's key (``ReplicaQuestion``);
requests per day, the peak-to-average factor, prices, billing, the site and the training inputs are not in it, so a
change to them re-plans from the remembered replicas without running the step loop again.

Under traffic (perf/serving.py): ``capacity`` = the largest request rate whose p95 TTFT and mean TPOT meet the
targets (its bisection's runs), and ``points`` = the simulated loads at or under that capacity, the first at or
below a quarter of it (5% of it where the bisection ran none that low), no two more than a quarter of the capacity
apart (more runs are added where the bisection left a gap). The latency
at a traffic's load per replica (peak rate / replicas, always <= capacity) is interpolated linearly in the request
rate between the two points around it (flat below the first). Each point meets the targets, so an interpolated
latency does too; latency rises with the rate faster than linearly, so the chord errs high, never low.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
from dataclasses import dataclass, fields, replace
from functools import lru_cache

from ..hardware.catalog import GPU
from ..model.arch import ModelArch
from ..perf.efficiency import PerfAssumptions
from ..perf.predict import StaticTimes, static_times
from ..perf.replica import EngineLimits, Replica
from ..perf.roofline import Workload
from ..perf.serving import OpenLoad, capacity, open_load
from ..perf.simulate import Shape
from .replica_runs import SharedSim
from .replica_runs import forget as forget_runs

LOWEST_POINT = 0.05  # the first load point where the capacity search ran none low enough, as a share of it
POINT_GAP = 0.25  # the widest gap between two load points, as a share of the capacity
CACHE_SIZE = 2048  # replicas remembered (a question of 10 GPU types x 11 layouts x 3 formats is 330)


@dataclass(frozen=True)
class ReplicaQuestion:
    """Exactly what one replica's judgement reads (the cache's key). ``targets``: (p95 TTFT, mean TPOT) in
    seconds for interactive serving, else (None, None); ``traffic``: whether there is a traffic estimate (without
    one a layout is judged on its static batch alone)."""

    model: ModelArch
    gpu: GPU
    workload: tuple  # Workload's fields in order (the dataclass is not hashable): see ``workload_of``
    kv_sequences: int
    batch: int  # the static batch: the scenario's, at most kv_sequences
    input_tokens: int
    output_tokens: int
    limits: EngineLimits
    engine: str
    shape: Shape
    targets: tuple[float | None, float | None]
    traffic: bool
    pa: PerfAssumptions = PerfAssumptions()
    request_in_s: float | None = None  # a calibrated deployment's own (perf/deployment_fit.py); None: the engine's
    decode_time_factor: float = 1.0

    @property
    def wl(self) -> Workload:
        return Workload(*self.workload)


def workload_key(wl: Workload) -> tuple:
    return tuple(getattr(wl, f.name) for f in fields(wl))


@dataclass(frozen=True)
class LoadPoint:
    """One simulated load on the replica: requests per second and the latencies it gives."""

    requests_per_s: float
    ttft_p95_s: float
    tpot_mean_s: float
    e2e_mean_s: float
    saturated: bool = False

    @classmethod
    def of(cls, res: OpenLoad) -> LoadPoint:
        if res.saturated:
            return cls(res.request_rate, math.inf, math.inf, math.inf, True)
        return cls(res.request_rate, res.ttft_p95_s, res.tpot_mean_s or 0.0, res.e2e_mean_s)


@dataclass(frozen=True)
class ReplicaEval:
    """One replica's judgement (see the module docstring). ``capacity_per_s``: requests per second within the
    targets under traffic (0: none, and ``light`` is a trickle's latencies); without traffic, the static batch's
    throughput (batch / its end-to-end time). ``serving_batch``: the sequences that run at once under traffic."""

    static: StaticTimes  # the static batch's (perf.predict's figures a layout's judgement reads)
    floor_ttft_s: float  # one request alone: the least this layout can do
    floor_tpot_s: float
    capacity_per_s: float
    serving_batch: int
    points: tuple[LoadPoint, ...] = ()
    light: LoadPoint | None = None

    def at(self, requests_per_s: float) -> LoadPoint:
        """The latencies at a load per replica at or under the capacity, interpolated between the points."""
        rates = [p.requests_per_s for p in self.points]
        i = bisect.bisect_left(rates, requests_per_s)
        if i == 0:
            return self.points[0]
        if i == len(rates):
            return self.points[-1]
        a, b = self.points[i - 1], self.points[i]
        if a.saturated or b.saturated:
            return LoadPoint(requests_per_s, math.inf, math.inf, math.inf, True)
        w = (requests_per_s - a.requests_per_s) / (b.requests_per_s - a.requests_per_s)
        return LoadPoint(
            requests_per_s,
            a.ttft_p95_s + w * (b.ttft_p95_s - a.ttft_p95_s),
            a.tpot_mean_s + w * (b.tpot_mean_s - a.tpot_mean_s),
            a.e2e_mean_s + w * (b.e2e_mean_s - a.e2e_mean_s),
        )


class _Stats:
    """How often a replica was judged afresh, and how many step-loop runs that took (thread-safe counters)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.simulations = 0

    def add(self, runs: int) -> None:
        with self.lock:
            self.simulations += runs


_STATS = _Stats()


class _CountedSim(SharedSim):
    """A shared Sim (replica_runs.py) that remembers the loads it was asked for: the load points' grid reads them."""

    def __init__(self, r: Replica, shape: Shape):
        super().__init__(r, shape)
        self.rates: set[float] = set()

    def run(self, concurrency=None, request_rate=None):
        if request_rate is not None:
            self.rates.add(request_rate)
        return super().run(concurrency, request_rate)

    def misses_ttft(self, request_rate, ttft_p95_target_s):
        if ttft_p95_target_s is not None:
            self.rates.add(request_rate)
        return super().misses_ttft(request_rate, ttft_p95_target_s)


def simulations_run() -> int:
    """Runs of the step loop the layout search has made in this process (a remembered replica adds none)."""
    return _STATS.simulations


def forget() -> None:
    """Forget every remembered replica, run and step time (a test's or a benchmark's fresh start; the layout
    search's own memory: ``search.forget``)."""
    evaluate_replica.cache_clear()
    replica_bound.cache_clear()
    _static.cache_clear()
    forget_runs()


def cache_info():
    """The replica cache's hits, misses, size (functools.lru_cache's)."""
    return evaluate_replica.cache_info()


def _grid(cap: float, known: list[float]) -> list[float]:
    """Rates to add to the ``known`` ones (the capacity search's) so that the points start at or below POINT_GAP
    x cap (at LOWEST_POINT x cap where the search ran none that low) and no gap exceeds POINT_GAP x cap."""
    ran = sorted(x for x in known if 0 < x <= cap)
    out = [] if ran and ran[0] <= POINT_GAP * cap else [LOWEST_POINT * cap]
    pts = sorted({*out, *ran, cap})
    for a, b in itertools.pairwise(pts):
        n = math.ceil((b - a) / (POINT_GAP * cap) - 1e-9)
        out += [a + (b - a) * k / n for k in range(1, n)]
    return out


def _alone(q: ReplicaQuestion, batch: int) -> StaticTimes:
    """The static roofline's figures at ``batch`` sequences (perf.predict.static_times), remembered by what they
    read: not the targets, the shape or the traffic, so a question that changes only those (a first-token target's
    slider) predicts nothing again."""
    return _static(q.model, q.gpu, q.workload, batch, q.input_tokens, q.output_tokens, q.pa, q.engine)


@lru_cache(maxsize=2 * CACHE_SIZE)
def _static(
    m: ModelArch,
    gpu: GPU,
    workload: tuple,
    batch: int,
    input_tokens: int,
    output_tokens: int,
    pa: PerfAssumptions,
    engine: str,
) -> StaticTimes:
    return static_times(m, gpu, Workload(*workload), batch, input_tokens, output_tokens, pa=pa, engine=engine)


def replica_of(q: ReplicaQuestion) -> Replica:
    """The replica a question asks about (what its step-loop runs simulate)."""
    return Replica(
        q.model,
        q.gpu,
        q.wl,
        q.input_tokens,
        q.output_tokens,
        q.kv_sequences,
        q.limits,
        q.pa,
        engine=q.engine,
        request_in_s=q.request_in_s,
        decode_time_factor=q.decode_time_factor,
    )


@dataclass(frozen=True)
class ReplicaBound:
    """What bounds a replica's judgement before it is made (plan/prune.py): ``floor_ttft_s``, one request alone on
    the static roofline (``ReplicaEval.floor_ttft_s``), under every load point's p95 TTFT; ``max_rate_per_s``, the
    throughput with every slot busy (one closed-loop run), which the capacity never exceeds; ``least_capacity_per_s``
    the capacity search before its bisection (``capacity(iterations=0)``: its bracket's low end, which the
    bisection only raises), so the capacity is 0 exactly when this is; ``floor_e2e_s``, one request alone end to
    end, under every load point's mean. Its runs are the search's first, kept for the judgement."""

    floor_ttft_s: float
    max_rate_per_s: float
    least_capacity_per_s: float
    floor_e2e_s: float = 0.0  # one request alone on the static roofline, end to end: under every point's mean


@lru_cache(maxsize=CACHE_SIZE)
def replica_bound(q: ReplicaQuestion) -> ReplicaBound:
    """The replica's bounds (``ReplicaBound``) for a question with traffic: 1-4 step-loop runs, kept for the
    judgement (``evaluate_replica`` reads them from the shared runs, replica_runs.py). Expert parallel: one rank's,
    its rates x ep (``ranks``)."""
    rep = replica_of(q)
    sim = _CountedSim(rep, q.shape)
    try:
        alone = _alone(q, 1)
        least = capacity(rep, *q.targets, iterations=0, steps=sim)
        ep = q.wl.ep
        return ReplicaBound(alone.ttft_s, sim.max_rate() * ep, least * ep, alone.e2e_request_s)
    finally:
        _STATS.add(sim.made)


def ranks(ev: ReplicaEval, ep: int) -> ReplicaEval:
    """An expert-parallel replica's judgement from one rank's (perf/expert_parallel.py: the ranks run the same mix,
    each a share 1 / ep of the requests): its request rates, capacity, sequences at once and static token rates x ep,
    its latencies the rank's."""
    if ep == 1:
        return ev
    st = ev.static
    static = replace(
        st, decode_tokens_per_s=st.decode_tokens_per_s * ep, prefill_tokens_per_s=st.prefill_tokens_per_s * ep
    )
    points = tuple(replace(p, requests_per_s=p.requests_per_s * ep) for p in ev.points)
    light = None if ev.light is None else replace(ev.light, requests_per_s=ev.light.requests_per_s * ep)
    return replace(
        ev,
        static=static,
        capacity_per_s=ev.capacity_per_s * ep,
        serving_batch=ev.serving_batch * ep,
        points=points,
        light=light,
    )


@lru_cache(maxsize=CACHE_SIZE)
def evaluate_replica(q: ReplicaQuestion) -> ReplicaEval:
    """The replica's judgement (the module docstring), computed once per question; thread-safe (lru_cache), and
    the result is frozen, so sessions share it. Expert parallel: one rank judged, then ``ranks``."""
    return ranks(_evaluate(q), q.wl.ep)


def _evaluate(q: ReplicaQuestion) -> ReplicaEval:
    static, alone = _alone(q, q.batch), _alone(q, 1)
    if not q.traffic:
        return ReplicaEval(static, alone.ttft_s, alone.tpot_s, q.batch / static.e2e_request_s, q.batch)
    rep = replica_of(q)
    sim = _CountedSim(rep, q.shape)
    try:
        cap = capacity(rep, *q.targets, steps=sim)
        batch = min(q.kv_sequences, rep.limits.max_num_seqs)
        if cap <= 0:
            light = LoadPoint.of(open_load(rep, sim.max_rate() * 1e-3, sim))
            return ReplicaEval(static, alone.ttft_s, alone.tpot_s, 0.0, batch, light=light)
        rates = sorted({x for x in sim.rates if x <= cap} | set(_grid(cap, sorted(sim.rates))))
        points = tuple(LoadPoint.of(open_load(rep, x, sim)) for x in rates if x > 0)
        return ReplicaEval(static, alone.ttft_s, alone.tpot_s, cap, batch, points)
    finally:
        _STATS.add(sim.made)
