"""The engine's step loop, simulated: one replica serving a stream of requests, step by step, as the engine
schedules them.

Each step the scheduler (schedulers.py: vLLM decode-first with chunked prefill, SGLang prefill-first, TensorRT-LLM
in-flight batching without eviction) picks the running sequences' next tokens and prompt chunks up to the step's
token budget (``max_num_batched_tokens``), admits waiting prompts while fewer than ``max_num_seqs`` run and the KV
cache has room, and preempts the last-admitted sequence when the cache is full. The step then takes the time the
per-op roofline gives for exactly that mix (steps.py, ``roofline.step_phase``), so one request alone gets the
single-request TTFT and TPOT, and a decode step that carries another prompt's chunk is slower by the chunk's work.

The load (clients.py) is closed-loop clients or open-loop arrivals. Steps in which only decodes run and nothing
arrives or ends are taken together (their time is the mean of the first and last), so a run costs a few events per
request, not one per token.

The state is named: each request's record (``Requests``: its lengths, how much of its prompt is read, its tokens
still to produce, when it was admitted and produced its first token, the decode step and context at which it
started decoding) and the KV cache (``KVPool``: the tokens of prompts being read, of decoding sequences, and for an
engine that never evicts the full length each running request reserved).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .clients import Arrival, Clients, Lengths, Load, Shape, lengths  # noqa: F401  (Shape, Load: their old home)
from .replica import Replica
from .schedulers import CLIP_MAX_NEW_TOKENS, TokenRatio, engine_loop
from .steps import StepTimes

MAX_STEPS = 2_000_000


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


class Requests:
    """Every request of a run, one record each (parallel lists, indexed by request id): what it asks, how far the
    engine got with it, and when."""

    __slots__ = (
        "prompt_tokens",
        "output_tokens",
        "cached_tokens",
        "new_tokens",
        "prefilled",
        "remaining",
        "admitted_s",
        "first_token_s",
        "joined_step",
        "joined_context",
        "decoding",
    )

    def __init__(self, prompt: list[int], out: list[int], prefix_cache_fraction: float):
        n = len(prompt)
        self.prompt_tokens, self.output_tokens = prompt, out
        self.cached_tokens = [int(p * prefix_cache_fraction) for p in prompt]  # the prefix cache holds these
        self.new_tokens = [max(1, p - c) for p, c in zip(prompt, self.cached_tokens, strict=True)]  # to prefill
        self.prefilled = [0] * n  # prompt tokens read so far (0 again after a preemption)
        self.remaining = list(out)  # output tokens still to produce
        self.admitted_s = [math.nan] * n  # first admitted (send -> admitted is the queue)
        self.first_token_s = [math.nan] * n
        self.joined_step = [0] * n  # the pool's decode step at which it started decoding
        self.joined_context = [0] * n  # its context then
        self.decoding = [False] * n

    def full_length(self, k: int) -> int:
        """Tokens request ``k`` holds at its last token (what an engine that never evicts reserves for it)."""
        return self.prompt_tokens[k] + self.output_tokens[k]


class KVPool:
    """The replica's KV cache in tokens: ``prompts`` held by prompts being read, and the decoding sequences'
    ``offset + decoding x steps`` (each holds its context when it started decoding plus one token per decode step
    since: ``steps`` counts the pool's decode steps, ``offset`` sums context - step at joining). An engine that
    never evicts ``reserve``s each request's full length at admission and ``free``s it at the end."""

    __slots__ = ("capacity", "prompts", "offset", "decoding", "steps", "reserved")

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.prompts = self.offset = self.decoding = self.steps = self.reserved = 0

    def held(self) -> int:
        """Tokens in the cache now."""
        return self.prompts + self.offset + self.decoding * self.steps

    def reserve(self, tokens: int) -> bool:
        """Hold ``tokens`` for a request to come (no-evict admission); False, and nothing held, when they do not
        fit beside what is reserved."""
        if self.reserved + tokens > self.capacity:
            return False
        self.reserved += tokens
        return True

    def free(self, tokens: int) -> None:
        self.reserved -= tokens

    def join(self, context: int) -> None:
        """A sequence of ``context`` tokens starts decoding."""
        self.offset += context - self.steps
        self.decoding += 1

    def leave(self, context: int, step: int) -> None:
        """A sequence that joined at ``step`` with ``context`` tokens stops decoding (it ended or was preempted)."""
        self.offset -= context - step
        self.decoding -= 1


def measured_window(n: int, closed: bool) -> range:
    """The requests a run measures: every one of a closed loop (benchmark semantics); of open-loop arrivals the
    steady state, leaving out the first and last 10% (filling and draining)."""
    return range(n) if closed or n < 20 else range(n // 10, n - n // 10)


def late_enough_to_miss(window: int) -> int:
    """How many of a window's first-token times over a target make its p95 (numpy's linear quantile) over it for
    certain: the p95 lies at or above the value at floor(0.95 x (window - 1)) in sorted order, which exceeds the
    target once that many values from the top do."""
    return window - math.floor(0.95 * (window - 1))


def simulate(
    r: Replica, load: Load, times: StepTimes | None = None, *, give_up_ttft_s: float | None = None
) -> Run | None:
    """Run the replica's step loop under ``load`` until every request has finished. ``give_up_ttft_s``: stop, and
    return None, as soon as the measured requests' p95 first-token time is certain to exceed it (a capacity search
    only asks whether a rate meets its target; a run past the capacity would otherwise drain a growing queue)."""
    times = times or StepTimes(r)
    loop = engine_loop(r.engine, r.request_in_s)
    rng = random.Random(load.shape.seed)
    n = load.count()
    prompt, out = lengths(r, load.shape, n, rng)
    req = Requests(prompt, out, r.wl.prefix_cache_fraction)
    cached, new, done, rem = req.cached_tokens, req.new_tokens, req.prefilled, req.remaining
    joined_step, joined_ctx, decoding_now = req.joined_step, req.joined_context, req.decoding
    kv = KVPool(r.kv_tokens)
    budget_max, seq_cap, kv_cap = r.limits.max_num_batched_tokens, r.limits.max_num_seqs, r.kv_tokens
    prefill_first, no_evict = loop.policy == "prefill_first", loop.policy == "no_evict"
    tr = TokenRatio() if prefill_first else None  # SGLang's estimate of what running requests will still write
    clients = Clients(load, n, loop, rng)
    waiting: deque[int] = deque()
    prefilling: list[int] = []
    ends: list[tuple[int, int]] = []  # (decode step at which it ends, id), a heap
    admission: list[int] = []  # decoding, in admission order (preemption takes the last)
    now, finished, steps, running_max, running_area = 0.0, 0, 0, 0, 0.0  # the tally's counters, kept local
    tally = _Tally()
    add_gap, add_gap_weight = tally.gaps_s.append, tally.gap_weights.append
    window = measured_window(n, load.closed)
    late, give_up_at = 0, late_enough_to_miss(len(window)) if give_up_ttft_s is not None else math.inf

    while finished < n:
        steps += 1
        if steps > MAX_STEPS:
            raise RuntimeError("serving simulation: too many steps (the load does not drain)")
        nxt = clients.next_arrival()
        if nxt <= now:
            waiting.extend(clients.arrived(now))
            nxt = clients.next_arrival()
        n_dec = kv.decoding
        if n_dec == 0 and not prefilling and not waiting:
            now = max(now, nxt)
            continue
        held, preempted = kv.held(), False
        if not no_evict and n_dec > 1 and held + n_dec > kv_cap:  # no room for every decode's next token
            evicted = _preempt(kv, req, admission, waiting, tr)
            tally.preemptions += evicted
            n_dec, held, preempted = kv.decoding, kv.held(), evicted > 0
            if preempted and tr:
                tr.retracted(kv.steps)
        # this step's prompt chunks: (id, tokens) and what the step model reads of each, (cached, new, logits)
        budget = budget_max - (0 if prefill_first else n_dec)
        kv_used = held + (0 if prefill_first else n_dec)
        chunks: list[tuple[int, int]] = []
        spec: list[tuple[int, int, int]] = []
        for k in prefilling:
            c = min(new[k] - done[k], budget)
            if c <= 0:
                break
            chunks.append((k, c))
            spec.append((cached[k] + done[k], c, 1 if done[k] + c >= new[k] else 0))
            budget -= c
            kv_used += c
        step_new = 0  # SGLang: the output tokens this step's admitted prompts reserve
        # vLLM V1 and SGLang admit no waiting prompt in a step that preempted (schedulers.py)
        while waiting and budget > 0 and n_dec + len(prefilling) < seq_cap and not preempted:
            k = waiting[0]
            need = new[k] - done[k]
            c = min(need, budget)
            if no_evict:
                if c < need and (chunks or need <= budget_max - n_dec):
                    break  # whole prompts only, unless it could never fit a step
                if not kv.reserve(req.full_length(k)):
                    break
            elif kv_used + cached[k] + c > kv_cap or (
                tr and not tr.admits(kv_cap - kv_used - cached[k], step_new, kv.steps, need, rem[k])
            ):
                break
            if tr:
                step_new += need - c + min(rem[k], CLIP_MAX_NEW_TOKENS)  # its chunk is in kv_used
            waiting.popleft()
            prefilling.append(k)
            if math.isnan(req.admitted_s[k]):
                req.admitted_s[k] = now
            kv.prompts += cached[k]
            kv_used += cached[k] + c
            chunks.append((k, c))
            spec.append((cached[k] + done[k], c, 1 if done[k] + c >= new[k] else 0))
            budget -= c
        decoding = 0 if (prefill_first and chunks) else n_dec
        ctx_mean = (kv.offset + n_dec * kv.steps) / n_dec if n_dec else 0.0
        running = n_dec + len(prefilling)
        if running > running_max:
            running_max = running
        if chunks:
            t = times.mixed(decoding, ctx_mean, tuple(spec))
            k_steps = 1
        else:  # decodes alone (nothing was admitted: the cache holds ``held``) until one ends or arrives
            k_steps = max(1, ends[0][0] - kv.steps) if ends else 1
            t0 = times.decode(n_dec, ctx_mean)
            if nxt < math.inf:
                k_steps = min(k_steps, max(1, math.ceil((nxt - now) / t0)))
            if not no_evict:
                k_steps = min(k_steps, max(1, (kv_cap - held) // n_dec))
            t1 = times.decode(n_dec, ctx_mean + k_steps - 1) if k_steps > 1 else t0
            t = k_steps * (t0 + t1) / 2
        running_area += running * t
        now += t
        if decoding:
            add_gap(t / k_steps)
            add_gap_weight(decoding * k_steps)
            kv.steps += k_steps
            if tr:
                tr.decoded(k_steps)
        for k, c in chunks:  # prompts that this step finished produce their first token
            done[k] += c
            kv.prompts += c
            if done[k] < new[k]:
                continue
            prefilling.remove(k)
            kv.prompts -= cached[k] + new[k]
            if math.isnan(req.first_token_s[k]):
                req.first_token_s[k] = now
                if give_up_ttft_s is not None and k in window and now - clients.sent[k] > give_up_ttft_s:
                    late += 1
                    if late >= give_up_at:
                        return None
            rem[k] -= 1
            if rem[k] <= 0:
                finished += clients.finish(k, now)
                if no_evict:
                    kv.free(req.full_length(k))
                continue
            joined_ctx[k], joined_step[k], decoding_now[k] = cached[k] + new[k], kv.steps, True
            kv.join(joined_ctx[k])
            heapq.heappush(ends, (kv.steps + rem[k], k))
            if tr:
                tr.join(kv.steps + rem[k], out[k])
            admission.append(k)
        while ends and ends[0][0] <= kv.steps:
            _, k = heapq.heappop(ends)
            if not decoding_now[k] or joined_step[k] + rem[k] != kv.steps:
                continue  # preempted since (its entry is stale)
            decoding_now[k] = False
            kv.leave(joined_ctx[k], joined_step[k])
            if tr:
                tr.leave(joined_step[k] + rem[k], out[k])
            if no_evict:
                kv.free(req.full_length(k))
            finished += clients.finish(k, now)
    tally.steps, tally.running_max, tally.running_area = steps, running_max, running_area
    return _measure(load, clients, req.admitted_s, req.first_token_s, out, tally)


def _preempt(kv: KVPool, req: Requests, admission: list[int], waiting: deque[int], tr: TokenRatio | None) -> int:
    """Preempt the last-admitted decoding sequences until the cache holds one more token for each one left (or
    one is left): each is recomputed later, its prompt and what it produced so far, and goes back to the front of
    the queue. How many were preempted."""
    preempted = 0
    while kv.decoding > 1 and kv.held() + kv.decoding > kv.capacity:
        k = admission.pop()
        if not req.decoding[k]:
            continue
        req.decoding[k] = False
        kv.leave(req.joined_context[k], req.joined_step[k])
        if tr:
            tr.leave(req.joined_step[k] + req.remaining[k], req.output_tokens[k])
        produced = kv.steps - req.joined_step[k]
        req.new_tokens[k] = max(1, req.joined_context[k] + produced - req.cached_tokens[k])
        req.remaining[k] -= produced
        req.prefilled[k] = 0
        waiting.appendleft(k)
        preempted += 1
    return preempted


def _measure(
    load: Load, clients: Clients, admitted: list[float], first: list[float], out: list[int], tally: _Tally
) -> Run:
    n = clients.n
    sent_a, first_a, fin_a = np.array(clients.sent), np.array(first), np.array(clients.fin)
    out_a = np.array(out)
    window = np.array(measured_window(n, load.closed))
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
