"""The engine's step loop, simulated: one replica serving a stream of requests, step by step, as the engine
schedules them.

Each step the scheduler (schedulers.py: vLLM decode-first with chunked prefill, SGLang prefill-first, TensorRT-LLM
in-flight batching without eviction) picks the running sequences' next tokens and prompt chunks up to the step's
token budget (``max_num_batched_tokens``), admits waiting prompts while fewer than ``max_num_seqs`` run and the KV
cache has room, and preempts the last-admitted sequence when the cache is full. The step then takes the time the
per-op roofline gives for exactly that mix (steps.py, ``roofline.step_phase``), so one request alone gets the
single-request TTFT and TPOT, and a decode step that carries another prompt's chunk is slower by the chunk's work.

Load is sent as benchmark clients and production send it: ``concurrency`` N clients that all start at once and
send their next request when the last one ends (closed loop: identical requests fall into waves), or arrivals at a
``request_rate`` that are Poisson or bursty (gamma gaps, coefficient of variation 2). Lengths are fixed, uniform
between (1 - spread) and 1 times the set lengths, or long-tailed (lognormal, the spread of chat traffic). A fixed
seed makes every run reproducible. Steps in which only decodes run and nothing arrives or ends are taken together
(their time is the mean of the first and last), so a run costs a few events per request, not one per token.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .replica import Replica
from .schedulers import engine_loop
from .steps import StepTimes

Arrival = Literal["poisson", "bursty", "closed"]
Lengths = Literal["fixed", "uniform", "chat"]
BURSTY_SHAPE = 0.25  # gamma shape of bursty gaps: coefficient of variation 1 / sqrt(0.25) = 2
CHAT_SIGMA = 0.9  # lognormal sigma of chat lengths (ShareGPT outputs: coefficient of variation ~1)
MAX_STEPS = 2_000_000


@dataclass(frozen=True, kw_only=True)
class Shape:
    """How requests arrive and how long they are. ``requests``: how many a run sends (None: enough for steady
    state); ``seed``: the run's random draws (the same seed, the same run)."""

    arrival: Arrival = "poisson"
    lengths: Lengths = "fixed"
    length_spread: float = 0.2
    requests: int | None = None
    seed: int = 0

    def __post_init__(self):
        if not 0 <= self.length_spread < 1:
            raise ValueError("length_spread: must be at least 0 and below 1")


@dataclass(frozen=True, kw_only=True)
class Load:
    """The load on the replica: ``concurrency`` clients (closed loop) or ``request_rate`` arrivals per second
    (open loop), exactly one, in a ``shape``."""

    concurrency: int | None = None
    request_rate: float | None = None
    shape: Shape = Shape()

    def __post_init__(self):
        if (self.concurrency is None) == (self.request_rate is None):
            raise ValueError("load: give exactly one of concurrency or request_rate")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency: must be at least 1")
        if self.request_rate is not None and not self.request_rate > 0:
            raise ValueError("request_rate: must be more than 0 requests per second")

    @property
    def closed(self) -> bool:
        return self.concurrency is not None

    def count(self) -> int:
        if self.shape.requests:
            return int(self.shape.requests)
        if self.closed:
            return int(min(3000, max(200, 4 * self.concurrency)))
        return 400


@dataclass
class Run:
    """What one simulated run measured, per request and per token gap (seconds)."""

    ttft_s: np.ndarray  # per request in the measured window: send -> first token
    tpot_s: np.ndarray  # per request with more than one output token: (last - first) / (tokens - 1)
    e2e_s: np.ndarray
    gaps_s: np.ndarray  # inter-token gaps of decode steps, one entry per step kind...
    gap_weights: np.ndarray  # ... and how many tokens had that gap
    requests_per_s: float
    output_tokens_per_s: float
    running_mean: float  # sequences running, averaged over time
    running_max: int
    preemptions: int
    steps: int
    waits_s: np.ndarray  # send -> admitted, per measured request (the queue)
    makespan_s: float
    output_tokens_total: int = 0  # every request's output tokens (a benchmark's throughput: this / makespan)


@dataclass
class _Tally:
    """What a run counts as it goes: steps, preemptions, the running sequences (their time integral and peak), and
    the inter-token gaps of its steps with how many tokens had each."""

    steps: int = 0
    preemptions: int = 0
    running_area: float = 0.0
    running_max: int = 0
    gaps_s: list[float] = field(default_factory=list)
    gap_weights: list[float] = field(default_factory=list)


def _lengths(r: Replica, shape: Shape, n: int, rng: random.Random) -> tuple[list[int], list[int]]:
    i, o = r.input_tokens, r.output_tokens
    if shape.lengths == "fixed" or (shape.lengths == "uniform" and shape.length_spread == 0):
        return [i] * n, [o] * n
    if shape.lengths == "uniform":
        lo = 1 - shape.length_spread
        ins = [max(1, round(i * rng.uniform(lo, 1))) for _ in range(n)]
        outs = [max(1, round(o * rng.uniform(lo, 1))) for _ in range(n)]
    else:  # lognormal with the set lengths as means
        mu = -(CHAT_SIGMA**2) / 2
        ins = [max(1, round(i * rng.lognormvariate(mu, CHAT_SIGMA))) for _ in range(n)]
        outs = [max(1, round(o * rng.lognormvariate(mu, CHAT_SIGMA))) for _ in range(n)]
    room = max(2, r.kv_tokens)  # a request longer than the whole cache could never run: cut to fit
    for k in range(n):
        if ins[k] + outs[k] > room:
            outs[k] = max(1, min(outs[k], room // 4))
            ins[k] = max(1, min(ins[k], room - outs[k]))
    return ins, outs


def _arrivals(load: Load, n: int, rng: random.Random) -> list[float]:
    rate = float(load.request_rate)
    t, out = 0.0, []
    for _ in range(n):
        if load.shape.arrival == "bursty":
            t += rng.gammavariate(BURSTY_SHAPE, 1 / (rate * BURSTY_SHAPE))
        else:
            t += rng.expovariate(rate)
        out.append(t)
    return out


def simulate(r: Replica, load: Load, times: StepTimes | None = None) -> Run:
    """Run the replica's step loop under ``load`` until every request has finished."""
    times = times or StepTimes(r)
    loop = engine_loop(r.engine)
    rng = random.Random(load.shape.seed)
    n = load.count()
    prompt, out = _lengths(r, load.shape, n, rng)
    frac = r.wl.prefix_cache_fraction
    cached = [int(p * frac) for p in prompt]
    new = [max(1, p - c) for p, c in zip(prompt, cached, strict=True)]
    rem = list(out)  # tokens still to produce
    budget_max, seq_cap, kv_cap = r.limits.max_num_batched_tokens, r.limits.max_num_seqs, r.kv_tokens
    prefill_first, no_evict = loop.policy == "prefill_first", loop.policy == "no_evict"
    clients = _Clients(load, n, loop, rng)
    admitted, first = [math.nan] * n, [math.nan] * n
    done = [0] * n  # prompt tokens prefilled
    d0, ctx0, alive = [0] * n, [0] * n, [False] * n
    waiting: deque[int] = deque()
    prefilling: list[int] = []
    heap: list[tuple[int, int]] = []  # (decode step at which it ends, id)
    order: list[int] = []  # decoding, in admission order (preemption takes the last)
    n_dec = base = D = kv_pf = reserved = 0
    now, finished = 0.0, 0
    tally = _Tally()

    def reserve(k: int) -> int:
        return prompt[k] + out[k]

    while finished < n:
        tally.steps += 1
        if tally.steps > MAX_STEPS:
            raise RuntimeError("serving simulation: too many steps (the load does not drain)")
        waiting.extend(clients.arrived(now))
        if n_dec == 0 and not prefilling and not waiting:
            now = max(now, clients.next_arrival())
            continue
        # the KV cache must hold one more token for every decoding sequence: else preempt the last admitted
        while not no_evict and n_dec > 1 and kv_pf + base + n_dec * D + n_dec > kv_cap:
            k = order.pop()
            if not alive[k]:
                continue
            alive[k] = False
            n_dec -= 1
            base -= ctx0[k] - d0[k]
            produced = D - d0[k]
            new[k] = max(1, ctx0[k] + produced - cached[k])  # recomputed: prompt and what it produced so far
            rem[k] -= produced
            done[k] = 0
            waiting.appendleft(k)
            tally.preemptions += 1
        # this step's prompt chunks
        budget = budget_max - (0 if prefill_first else n_dec)
        kv_used = kv_pf + base + n_dec * D + (0 if prefill_first else n_dec)
        chunks: list[tuple[int, int]] = []
        for k in prefilling:
            c = min(new[k] - done[k], budget)
            if c <= 0:
                break
            chunks.append((k, c))
            budget -= c
            kv_used += c
        while waiting and budget > 0 and n_dec + len(prefilling) < seq_cap:
            k = waiting[0]
            need = new[k] - done[k]
            c = min(need, budget)
            if no_evict:
                if c < need and (chunks or need <= budget_max - n_dec):
                    break  # whole prompts only, unless it could never fit a step
                if reserved + reserve(k) > kv_cap:
                    break
            elif kv_used + cached[k] + c > kv_cap:
                break
            waiting.popleft()
            prefilling.append(k)
            if math.isnan(admitted[k]):
                admitted[k] = now
            kv_pf += cached[k]
            kv_used += cached[k] + c
            reserved += reserve(k) if no_evict else 0
            chunks.append((k, c))
            budget -= c
        decoding = 0 if (prefill_first and chunks) else n_dec
        ctx_mean = (base + n_dec * D) / n_dec if n_dec else 0.0
        running = n_dec + len(prefilling)
        tally.running_max = max(tally.running_max, running)
        if chunks:
            spec = tuple((cached[k] + done[k], c, 1 if done[k] + c >= new[k] else 0) for k, c in chunks)
            t = times.mixed(decoding, ctx_mean, spec)
            k_steps = 1
        else:
            k_steps = max(1, heap[0][0] - D) if heap else 1
            t0 = times.decode(n_dec, ctx_mean)
            nxt = clients.next_arrival()
            if nxt < math.inf:
                k_steps = min(k_steps, max(1, math.ceil((nxt - now) / t0)))
            if not no_evict:
                k_steps = min(k_steps, max(1, (kv_cap - (kv_pf + base + n_dec * D)) // n_dec))
            t1 = times.decode(n_dec, ctx_mean + k_steps - 1) if k_steps > 1 else t0
            t = k_steps * (t0 + t1) / 2
        if decoding:
            tally.gaps_s.append(t / k_steps)
            tally.gap_weights.append(decoding * k_steps)
        tally.running_area += running * t
        now += t
        if decoding:
            D += k_steps
        for k, c in chunks:  # prompts that this step finished produce their first token
            done[k] += c
            kv_pf += c
            if done[k] < new[k]:
                continue
            prefilling.remove(k)
            kv_pf -= cached[k] + new[k]
            if math.isnan(first[k]):
                first[k] = now
            rem[k] -= 1
            if rem[k] <= 0:
                finished += clients.finish(k, now)
                reserved -= reserve(k) if no_evict else 0
                continue
            ctx0[k], d0[k], alive[k] = cached[k] + new[k], D, True
            base += ctx0[k] - D
            n_dec += 1
            heapq.heappush(heap, (D + rem[k], k))
            order.append(k)
        while heap and heap[0][0] <= D:
            _, k = heapq.heappop(heap)
            if not alive[k] or d0[k] + rem[k] != D:
                continue  # preempted since (its entry is stale)
            alive[k] = False
            n_dec -= 1
            base -= ctx0[k] - d0[k]
            reserved -= reserve(k) if no_evict else 0
            finished += clients.finish(k, now)
    return _measure(load, clients, admitted, first, out, tally)


class _Clients:
    """Who sends what when: the send and engine-arrival time of each request, and for a closed loop the next
    request each client sends when its last one ends."""

    def __init__(self, load: Load, n: int, loop, rng: random.Random):
        self.load, self.n, self.loop = load, n, loop
        self.fin = [math.nan] * n
        if load.closed:
            self.next_id = min(n, load.concurrency)
            self.sent = [0.0] * self.next_id + [math.nan] * (n - self.next_id)
        else:
            self.next_id = n
            self.sent = _arrivals(load, n, rng)
        self.arrive = [t + loop.request_in_s for t in self.sent]
        self.queue = [(self.arrive[k], k) for k in range(self.next_id)]  # engine arrivals not yet seen
        heapq.heapify(self.queue)

    def next_arrival(self) -> float:
        return self.queue[0][0] if self.queue else math.inf

    def arrived(self, now: float) -> list[int]:
        out = []
        while self.queue and self.queue[0][0] <= now:
            out.append(heapq.heappop(self.queue)[1])
        return out

    def finish(self, k: int, now: float) -> int:
        """Request ``k`` ends now; a closed-loop client sends its next one (if the run has any left)."""
        self.fin[k] = now
        if self.load.closed and self.next_id < self.n:
            j = self.next_id
            self.sent[j] = now + self.loop.request_out_s
            self.arrive[j] = self.sent[j] + self.loop.request_in_s
            heapq.heappush(self.queue, (self.arrive[j], j))
            self.next_id += 1
        return 1


def _measure(
    load: Load, clients: _Clients, admitted: list[float], first: list[float], out: list[int], tally: _Tally
) -> Run:
    n = clients.n
    sent_a, first_a, fin_a = np.array(clients.sent), np.array(first), np.array(clients.fin)
    out_a = np.array(out)
    if load.closed:  # benchmark semantics: every request of the run
        window = np.arange(n)
    else:  # steady state: leave out the first and last 10% (filling and draining)
        window = np.arange(n // 10, n - n // 10) if n >= 20 else np.arange(n)
    ttft = first_a[window] - sent_a[window]
    e2e = fin_a[window] - sent_a[window]
    multi = window[out_a[window] > 1]
    tpot = (fin_a[multi] - first_a[multi]) / (out_a[multi] - 1)
    span = fin_a.max() - sent_a.min()
    ends = np.sort(fin_a)
    lo, hi = ends[n // 5], ends[min(n - 1, (4 * n) // 5)]
    if load.closed and hi > lo:
        mid = (fin_a > lo) & (fin_a <= hi)
        rps = mid.sum() / (hi - lo)
        tps = out_a[mid].sum() / (hi - lo)
    elif load.closed:
        rps, tps = n / span, out_a.sum() / span
    else:
        rps = float(load.request_rate)
        tps = rps * out_a.mean()
    return Run(
        ttft_s=ttft,
        tpot_s=tpot,
        e2e_s=e2e,
        gaps_s=np.array(tally.gaps_s),
        gap_weights=np.array(tally.gap_weights),
        requests_per_s=float(rps),
        output_tokens_per_s=float(tps),
        running_mean=tally.running_area / span if span > 0 else 0.0,
        running_max=tally.running_max,
        preemptions=tally.preemptions,
        steps=tally.steps,
        waits_s=np.array(admitted)[window] - sent_a[window],
        makespan_s=float(span),
        output_tokens_total=int(out_a.sum()),
    )


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Quantile ``q`` of values each counted ``weights`` times (inter-token gaps, one entry per kind of step)."""
    if len(values) == 0:
        return math.nan
    idx = np.argsort(values)
    v, w = values[idx], np.cumsum(weights[idx])
    return float(v[min(len(v) - 1, np.searchsorted(w, q * w[-1]))])
