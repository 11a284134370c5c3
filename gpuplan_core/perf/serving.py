"""Serving under traffic: one replica's latency, throughput and capacity, from the simulated step loop
(simulate.py).

``serve`` runs the replica under a load and reports the run: TTFT (send -> first token) mean and p50/p90/p95/p99,
TPOT (a request's mean gap after its first token) mean, the inter-token gaps' p50/p90/p95/p99, throughput and the
sequences running. ``capacity`` is the largest request rate whose p95 TTFT and mean TPOT meet the targets, found by
bisection on runs that share their random draws (the same requests at every rate, only the gaps scaled), so the
answer is reproducible and latency grows with the rate. ``max_request_rate`` is the throughput with every slot the
KV cache and the engine allow kept busy by clients (a closed loop): an open-loop rate at or above it is saturated,
as is a run whose queue still grows at its end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..results.serving import ServingResult
from ..scenario.deployment import Traffic
from .clients import NO_CLIENT_NOTE
from .replica import Replica
from .simulate import Load, Run, Shape, mean, median, quantiles, simulate, weighted_quantiles
from .speculative import spec_note
from .steps import StepTimes

QUANTILES = (0.5, 0.9, 0.95, 0.99)


def shape_for(traffic: Traffic) -> Shape:
    """The load shape a scenario's traffic describes."""
    return Shape(arrival=traffic.arrival, lengths=traffic.lengths, length_spread=traffic.length_spread)


class Sim:
    """One replica's runs, sharing their step times (a capacity search and a load curve reuse them)."""

    def __init__(self, r: Replica, shape: Shape | None = None):
        self.r, self.shape, self.times = r, shape or Shape(), StepTimes(r)
        self._max_rate: float | None = None
        self._runs: dict[tuple, Run] = {}
        self._missed: set[tuple] = set()  # open-loop rates whose run stopped once its p95 TTFT was certainly late

    def run(self, concurrency: int | None = None, request_rate: float | None = None) -> Run:
        key = (concurrency, request_rate)
        if key not in self._runs:
            load = Load(concurrency=concurrency, request_rate=request_rate, shape=self.shape)
            self._runs[key] = simulate(self.r, load, self.times)
        return self._runs[key]

    def misses_ttft(self, request_rate: float, ttft_p95_target_s: float | None) -> bool:
        """Whether arrivals at ``request_rate`` certainly miss the p95 first-token target: the run stops as soon as
        enough measured requests are late (``simulate(give_up_ttft_s=...)``). A run that completes is kept, so
        ``run`` at this rate is not repeated; one that stopped is not a run anything else may read."""
        key = (None, request_rate)
        if key in self._runs or ttft_p95_target_s is None:
            return False
        if key in self._missed:
            return True
        load = Load(request_rate=request_rate, shape=self.shape)
        run = simulate(self.r, load, self.times, give_up_ttft_s=ttft_p95_target_s)
        if run is None:
            self._missed.add(key)
            return True
        self._runs[key] = run
        return False

    def open_rates(self) -> list[float]:
        """The request rates of the open-loop runs made so far."""
        return [rate for (clients, rate) in self._runs if clients is None]

    def max_rate(self) -> float:
        """Requests per second with every slot busy: clients as many as the KV cache holds at full length."""
        if self._max_rate is None:
            full = max(1, self.r.max_running)
            self._max_rate = self.run(concurrency=full).requests_per_s
        return self._max_rate


def _saturated(sim: Sim, run: Run, rate: float) -> bool:
    """An open-loop run is beyond capacity when its rate reaches the all-slots-busy throughput, or when its queue
    is still growing at the end (the last quarter waits three times as long as the first, and long)."""
    if rate >= sim.max_rate():
        return True
    w = run.waits_s
    q = max(1, len(w) // 4)
    return mean(w[-q:]) > 3 * mean(w[:q]) + 0.5 * median(run.e2e_s)


def serve(
    r: Replica,
    concurrency: int | None = None,
    request_rate: float | None = None,
    steps: Sim | None = None,
    *,
    shape: Shape | None = None,
) -> ServingResult:
    """Predicted latency and throughput of one replica under ``concurrency`` clients (closed loop) or arrivals at
    ``request_rate`` requests per second (open loop); exactly one of the two. ``steps`` lets several loads of one
    replica share their step times (``Sim``); ``shape`` is how requests arrive and how long they are."""
    if (concurrency is None) == (request_rate is None):
        raise ValueError("load: give exactly one of concurrency or request_rate")
    if concurrency is not None and concurrency < 1:
        raise ValueError("concurrency: must be at least 1")
    if request_rate is not None and not request_rate > 0:
        raise ValueError("request_rate: must be more than 0 requests per second")
    if r.max_running < 1:
        raise ValueError("the model does not fit this layout: no sequence can run")
    sim = steps if steps is not None else Sim(r, shape)
    closed = concurrency is not None
    run = sim.run(concurrency, request_rate)
    s = r.max_running
    budget = r.limits.max_num_batched_tokens
    k = math.ceil(r.new_tokens / max(1, budget - min(s, concurrency or s) + 1))
    tau_d = sim.times.decode(1, r.input_tokens)
    notes = [] if r.request_in_s is not None else [NO_CLIENT_NOTE]
    if r.wl.spec_draft is not None:
        notes.append(spec_note(r.wl))
    if run.preemptions:
        notes.append(
            f"The KV cache filled up: {run.preemptions:,} sequences were preempted and recomputed "
            f"({r.kv_tokens:,} tokens of KV cache)."
        )
    waiting = max(0.0, (concurrency or 0) - run.running_mean) if closed else 0.0
    if closed and concurrency > r.limits.max_num_seqs:
        notes.append(
            f"{concurrency:,} clients but at most {r.limits.max_num_seqs:,} sequences run at once (max_num_seqs): "
            "the rest wait for a slot."
        )
    common = {
        "max_running_sequences": s,
        "prefill_steps_per_request": k,
        "decode_step_s": tau_d,
        "preemptions": run.preemptions,
        "simulated_requests": len(run.ttft_s),
        "arrival": "closed" if closed else sim.shape.arrival,
        "lengths": sim.shape.lengths,
    }
    if not closed and _saturated(sim, run, request_rate):
        notes.append("The load is beyond what one replica serves: queues grow without bound.")
        return ServingResult.saturated_at(float(request_rate), float(s), notes=notes, **common)
    tt = quantiles(run.ttft_s, QUANTILES)
    gaps = weighted_quantiles(run.gaps_s, run.gap_weights, QUANTILES)
    has_tpot = r.output_tokens > 1 and len(run.tpot_s) > 0
    return ServingResult(
        load_kind="concurrency" if closed else "request_rate",
        load=float(concurrency if closed else request_rate),
        saturated=False,
        ttft_mean_s=mean(run.ttft_s),
        ttft_p50_s=float(tt[0]),
        ttft_p90_s=float(tt[1]),
        ttft_p95_s=float(tt[2]),
        ttft_p99_s=float(tt[3]),
        tpot_mean_s=mean(run.tpot_s) if has_tpot else None,
        tpot_p50_s=gaps[0] if has_tpot else None,
        itl_p90_s=gaps[1] if has_tpot else None,
        itl_p95_s=gaps[2] if has_tpot else None,
        itl_p99_s=gaps[3] if has_tpot else None,
        e2e_mean_s=mean(run.e2e_s),
        output_tokens_per_s=run.output_tokens_per_s,
        requests_per_s=run.requests_per_s,
        running_sequences=run.running_mean,
        waiting_requests=waiting,
        notes=notes,
        **common,
    )


@dataclass(frozen=True)
class OpenLoad:
    """What a capacity search and a replica's load points read of one open-loop run: ``serve``'s saturation, p95
    TTFT, mean TPOT (None without one) and mean end to end, float for float, without its other quantiles, notes and
    result model (a question judges thousands of runs). Saturated: the latencies are infinite."""

    request_rate: float
    saturated: bool
    ttft_p95_s: float
    tpot_mean_s: float | None
    e2e_mean_s: float


def open_load(r: Replica, request_rate: float, steps: Sim) -> OpenLoad:
    """``serve(r, request_rate=...)``'s figures that ``OpenLoad`` names, from the same run."""
    if not request_rate > 0:
        raise ValueError("request_rate: must be more than 0 requests per second")
    if r.max_running < 1:
        raise ValueError("the model does not fit this layout: no sequence can run")
    run = steps.run(None, request_rate)
    if _saturated(steps, run, request_rate):
        return OpenLoad(float(request_rate), True, math.inf, None, math.inf)
    has_tpot = r.output_tokens > 1 and len(run.tpot_s) > 0
    tpot = mean(run.tpot_s) if has_tpot else None
    return OpenLoad(float(request_rate), False, quantiles(run.ttft_s, (0.95,))[0], tpot, mean(run.e2e_s))


def meets(res: ServingResult | OpenLoad, ttft_p95_target_s: float | None, tpot_target_s: float | None) -> bool:
    """Not saturated, p95 TTFT and mean TPOT within their targets (a target of None is no target)."""
    if res.saturated:
        return False
    if ttft_p95_target_s and res.ttft_p95_s > ttft_p95_target_s:
        return False
    return not (tpot_target_s and res.tpot_mean_s is not None and res.tpot_mean_s > tpot_target_s)


def max_request_rate(r: Replica, steps: Sim | None = None, *, shape: Shape | None = None) -> float:
    """The request rate at which the replica saturates: its throughput with every slot busy."""
    return (steps or Sim(r, shape)).max_rate()


def capacity(
    r: Replica,
    ttft_p95_target_s: float | None = None,
    tpot_target_s: float | None = None,
    iterations: int = 7,
    *,
    shape: Shape | None = None,
    steps: Sim | None = None,
) -> float:
    """The largest request rate (requests per second) one replica sustains with p95 TTFT and mean TPOT within
    the targets; 0 when even a trickle misses them. Latency grows with the rate, so a bisection finds it (to
    within 0.5% of the saturation rate, rounded down)."""
    sim = steps or Sim(r, shape)
    hi = sim.max_rate()

    def ok(rate: float) -> bool:
        if sim.misses_ttft(rate, ttft_p95_target_s):  # late for certain: no need to drain its queue
            return False
        return meets(open_load(r, rate, sim), ttft_p95_target_s, tpot_target_s)

    if ok(0.98 * hi):  # lax targets: the saturation rate, with a 2% margin, decides
        return 0.98 * hi
    lo, hi = 0.05 * hi, 0.98 * hi
    if not ok(lo):  # most replicas meet their targets above 5% of saturation; else search below it
        lo, hi = hi * 1e-3, lo
        if not ok(lo):
            return 0.0
    for _ in range(iterations):
        mid = math.sqrt(lo * hi) if hi > 4 * lo else (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def load_curve(
    r: Replica,
    points: int = 14,
    *,
    shape: Shape | None = None,
    steps: Sim | None = None,
    capacity_rate: float | None = None,
) -> list[ServingResult]:
    """The replica from a trickle to just under saturation, at request rates spaced evenly on a log scale, and,
    given the capacity within the targets (``capacity_rate``), densely around it: the capacity itself (the run the
    capacity search judged, so the drawn curve meets the targets there), every rate the search ran near it (``steps``
    remembers them: no run repeated) and one 5% past it unless the search ran one closer, so the drawn line turns
    where the latency does."""
    sim = steps or Sim(r, shape)
    top = sim.max_rate()
    lo = top / 200
    rates = {lo * (0.97 * top / lo) ** (i / (points - 1)) for i in range(points)}
    if capacity_rate:
        near = {x for x in sim.open_rates() if capacity_rate / 1.5 <= x < top}
        rates |= near | {capacity_rate}
        if not any(capacity_rate < x <= 1.05 * capacity_rate for x in near) and 1.05 * capacity_rate < top:
            rates.add(1.05 * capacity_rate)
    return [serve(r, request_rate=x, steps=sim) for x in sorted(rates)]
