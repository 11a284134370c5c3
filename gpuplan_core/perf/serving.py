"""Serving under traffic: one replica with continuous batching and chunked prefill, in steady state.

The replica runs engine steps back to back (vLLM V1, SGLang, TensorRT-LLM in-flight batching). A step carries one
new token for every running sequence past its prefill, plus prompt chunks up to the engine's token budget per step
(vLLM ``max_num_batched_tokens``; chunked prefill as in Sarathi-Serve, Agrawal et al. 2024). A step's time is the
same per-op roofline as a single request's (``perf.step_phase``), so at one client this model gives exactly the
single-request TTFT and TPOT.

All requests alike: ``I`` input tokens (``I_new`` of them not prefix-cached) and ``O`` output tokens. With ``X``
requests per second through the replica, and the others' traffic ``X_o`` as seen by one request:

    k      = ceil(I_new / B)                     prefill steps per request, B = budget - decoding sequences
    tau_d  = step(decodes)                       a step with the running decodes only
    tau_p  = step(decodes + one chunk I_new/k)   a step that also carries a prompt chunk
    f      = X_o k tau_p                         share of the time spent in steps that carry another's prefill
    TPOT   = 1 / (f / tau_p + (1 - f) / tau_d)   a decoding sequence gains one token per step
    n_d    = X (O - 1) TPOT                      decoding sequences (Little's law), capped by the KV cache
    TTFT   = slot wait + residual step + W + k tau_p
             W: the prompt queue as M/D/1 (Pollaczek-Khinchine mean, rho = X_o s, s = I_new tau_full / budget),
             with an exponential tail for percentiles (exact for M/M/1; Kingman's heavy-traffic form);
             residual: the step under way when the request arrives (uniform over a step while the engine is busy)
    E2E    = TTFT + (O - 1) TPOT

Closed loop (``concurrency`` N clients, each sending its next request when the last one ends): X = N / E2E, solved
as a fixed point; beyond the running limit S (``max_num_seqs`` or what the KV cache holds) the extra requests wait
for a slot: slot wait = (N - S) / X. Open loop (Poisson arrivals at ``request_rate``): X = rate, and the load is
beyond capacity ("saturated") when the running sequences it needs exceed S, the prompts outgrow the step budget, or
the prompt queue's utilisation reaches 1.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .replica import Replica
from .roofline import Part, step_phase


class ServingResult(BaseModel):
    """One replica under one load. Latencies are None when the load is beyond what the replica can serve."""

    model_config = ConfigDict(frozen=True)

    load_kind: Literal["concurrency", "request_rate"]
    load: float
    saturated: bool
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    tpot_mean_s: float | None = Field(description="mean time per output token after the first")
    tpot_p50_s: float | None = Field(description="median gap between two tokens (inter-token latency)")
    e2e_mean_s: float | None
    output_tokens_per_s: float
    requests_per_s: float
    running_sequences: float
    max_running_sequences: int
    waiting_requests: float
    prefill_steps_per_request: int
    decode_step_s: float
    notes: list[str] = Field(default_factory=list)


def _contexts(r: Replica) -> list[int]:
    """The decode contexts a request passes through, sampled as perf._mean_decode_time samples them."""
    steps = max(1, r.output_tokens - 1)
    n = min(9, steps)
    i = r.input_tokens
    return [i + round(j * (steps - 1) / max(1, n - 1)) for j in range(n)] if n > 1 else [i]


class _Steps:
    """Step times, memoised per (decoding sequences, chunk tokens): the fixed points ask for the same ones."""

    def __init__(self, r: Replica):
        self.r = r
        self.ctxs = _contexts(r)  # one sequence: exactly the single-request sampling
        # many sequences: the step time is close to linear in the context there (KV reads, attention), so the
        # first and last contexts give the mean within a fraction of a percent, 4x faster
        self.ctxs_batch = sorted({self.ctxs[0], self.ctxs[-1]})
        self.memo: dict[tuple[float, int], float] = {}

    def time(self, decodes: float, chunk: int) -> float:
        """Mean step time over the decode contexts with ``decodes`` sequences decoding and a prompt chunk of
        ``chunk`` tokens (0: none). Up to one sequence: exact. Above: interpolated between the neighbouring points
        of a fixed grid (the step time is close to linear in the sequences between them: weights read once, KV
        reads and FLOPs growing with each sequence), so the fixed points reuse the same few exact steps."""
        if decodes <= 1:
            return self._exact(max(0.0, decodes), chunk)
        i = bisect.bisect_left(_GRID, decodes)
        if i >= len(_GRID):
            return self._exact(decodes, chunk)
        lo, hi = _GRID[i - 1], _GRID[i]
        t_lo, t_hi = self._exact(lo, chunk), self._exact(hi, chunk)
        return t_lo + (t_hi - t_lo) * (decodes - lo) / (hi - lo)

    def _exact(self, decodes: float, chunk: int) -> float:
        key = (decodes, chunk)
        if key not in self.memo:
            r = self.r
            share = chunk / r.new_tokens
            parts_pf = [Part(share, r.cached_tokens, r.new_tokens, share)] if chunk else []
            if decodes <= 0:
                t = step_phase("prefill", r.m, r.gpu, r.wl, r.pa, parts_pf, overhead_s=r.pa.prefill_overhead_s).time_s
            else:
                overhead = r.pa.prefill_overhead_s if chunk else r.pa.decode_step_overhead_s
                ctxs = self.ctxs if decodes <= 1 else self.ctxs_batch
                parts = [[Part(decodes, c, 1, decodes), *parts_pf] for c in ctxs]
                t = sum(step_phase("step", r.m, r.gpu, r.wl, r.pa, p, overhead_s=overhead).time_s for p in parts) / len(
                    ctxs
                )
            self.memo[key] = t
        return self.memo[key]


# decoding sequences at which steps are evaluated exactly (1, then about 20% apart up to 100,000)
_GRID = sorted({1.0} | {float(round(1.35**i)) for i in range(1, 40) if round(1.35**i) >= 2})


def _quantile_wait(mean_w: float, rho: float, p: float) -> float:
    """Quantile p of a queue's wait with P(wait > 0) = rho and an exponential tail of mean mean_w / rho."""
    if rho <= 0 or mean_w <= 0 or p <= 1 - rho:
        return 0.0
    return mean_w / rho * math.log(rho / (1 - p))


def _quantile_residual(step_s: float, busy: float, p: float) -> float:
    """Quantile p of the wait for the step under way: 0 while idle, uniform over a step while busy."""
    if busy <= 0 or p <= 1 - busy:
        return 0.0
    return step_s * (p - (1 - busy)) / busy


@dataclass(kw_only=True)
class _State:
    """One pass of the fixed point: every quantity at one throughput, named."""

    x: float  # requests per second through the replica
    others: float  # requests per second of the other clients, as one request sees them
    n_d: float  # sequences decoding, on average
    k: int  # engine steps one prompt's prefill takes (chunks)
    tau_d: float  # a decode-only step, s
    tau_p: float  # a step carrying a prompt chunk, s
    tpot: float  # mean time per output token, s
    tpot_gap_p50: float  # the median gap between tokens, s
    rho: float  # the prompt queue's load
    wait_mean: float  # mean wait in the prompt queue, s
    residual_busy: float  # share of time a step is under way when a request arrives
    slot_wait: float  # closed loop: wait for a running slot, s
    prefill_ok: bool  # prompts arrive slower than the steps can take them

    @property
    def ttft_own(self) -> float:
        return self.k * self.tau_p


def _evaluate(
    r: Replica, steps: _Steps, x: float, others: float, others_decoding: float, busy: float, *, slot_wait: float
) -> _State:
    """Every quantity at throughput ``x`` with the other requests arriving at ``others`` per second and
    ``others_decoding`` of their sequences decoding (one pass of the fixed point)."""
    budget = r.limits.max_num_batched_tokens
    others_decoding = min(others_decoding, r.max_running - 1)
    mine = 1 if r.output_tokens > 1 else 0
    room = max(1, int(budget - others_decoding - mine))
    k = math.ceil(r.new_tokens / room)
    chunk = math.ceil(r.new_tokens / k)
    tau_d = steps.time(mine + others_decoding, 0)
    tau_p = steps.time(others_decoding, chunk)
    f = others * k * tau_p
    prefill_ok = f < 1
    f = min(f, 1.0)
    tpot = 1 / (f / tau_p + (1 - f) / tau_d)
    tpot_gap_p50 = tau_p if f >= 0.5 else tau_d
    # The prompt queue: prompts share the step budget, so one prompt's service is its share of a step full of them.
    full = steps.time(others_decoding, budget)  # a step whose budget is all prompt tokens
    service = r.new_tokens * full / budget
    rho = others * service
    wait_mean = rho * service / (2 * (1 - rho)) if rho < 1 else math.inf
    return _State(
        x=x,
        others=others,
        n_d=others_decoding + mine,
        k=k,
        tau_d=tau_d,
        tau_p=tau_p,
        tpot=tpot,
        tpot_gap_p50=tpot_gap_p50,
        rho=rho,
        wait_mean=wait_mean,
        residual_busy=busy,
        slot_wait=slot_wait,
        prefill_ok=prefill_ok,
    )


def serve(
    r: Replica, concurrency: int | None = None, request_rate: float | None = None, steps: _Steps | None = None
) -> ServingResult:
    """Predicted latency and throughput of one replica under ``concurrency`` clients (closed loop) or Poisson
    arrivals at ``request_rate`` requests per second (open loop); exactly one of the two. ``steps`` lets several
    loads of one replica share their step times."""
    if (concurrency is None) == (request_rate is None):
        raise ValueError("load: give exactly one of concurrency or request_rate")
    if concurrency is not None and concurrency < 1:
        raise ValueError("concurrency: must be at least 1")
    if request_rate is not None and not request_rate > 0:
        raise ValueError("request_rate: must be more than 0 requests per second")
    steps = steps or _Steps(r)
    s = r.max_running
    o = r.output_tokens
    if s < 1:
        raise ValueError("the model does not fit this layout: no sequence can run")
    closed = concurrency is not None
    n_clients = float(concurrency or 0)
    running = min(n_clients, s)  # closed loop: clients with a request running; the rest wait for a slot
    # start from the single-request cycle
    st = _evaluate(r, steps, 0.0, 0.0, 0.0, 0.0, slot_wait=0.0)
    e2e = st.ttft_own + (o - 1) * st.tpot
    x = running / e2e if closed else float(request_rate)
    for _ in range(60):
        n_d = x * (o - 1) * st.tpot  # decoding sequences, Little's law
        if closed:
            share = (running - 1) / running  # the others' part of what runs
            others, others_decoding, busy, slot_wait = x * share, n_d * share, min(1.0, running - 1), 0.0
        else:
            others, others_decoding, slot_wait = x, n_d, 0.0
            busy = min(1.0, x * (st.ttft_own + (o - 1) * st.tpot))
        st = _evaluate(r, steps, x, others, others_decoding, busy, slot_wait=slot_wait)
        if not closed:
            if abs(n_d - x * (o - 1) * st.tpot) <= 1e-3 * max(1.0, n_d) or n_d > 2 * s:
                break
            continue
        ttft = busy * st.tau_d / 2 + (st.wait_mean if st.rho < 1 else 10 * e2e) + st.ttft_own
        x_new = running / (ttft + (o - 1) * st.tpot)
        if abs(x_new - x) <= 1e-6 * x:
            x = x_new
            break
        x = 0.5 * (x + x_new)
    if closed and n_clients > s:  # the clients beyond S wait for a slot: Little's law on the waiting line
        st.slot_wait = (n_clients - s) / x
    if not closed:
        running = x * (st.ttft_own + (o - 1) * st.tpot)
    saturated = (not closed) and (running > s or not st.prefill_ok or st.rho >= 1)
    notes = []
    if r.wl.spec_draft is not None:
        notes.append("Speculative decoding is not modelled under load: steps are plain decode steps.")
    waiting = max(0.0, n_clients - s) if closed else 0.0
    if waiting:
        notes.append(
            f"{n_clients:,.0f} clients but at most {s:,} sequences run at once (KV cache or max_num_seqs): "
            f"{waiting:,.0f} requests wait for a slot."
        )
    if saturated:
        notes.append("The load is beyond what one replica serves: queues grow without bound.")
        return ServingResult(
            load_kind="request_rate",
            load=float(request_rate),
            saturated=True,
            ttft_mean_s=None,
            ttft_p50_s=None,
            ttft_p95_s=None,
            tpot_mean_s=None,
            tpot_p50_s=None,
            e2e_mean_s=None,
            output_tokens_per_s=0.0,
            requests_per_s=0.0,
            running_sequences=float(s),
            max_running_sequences=s,
            waiting_requests=math.inf,
            prefill_steps_per_request=st.k,
            decode_step_s=st.tau_d,
            notes=notes,
        )
    busy = st.residual_busy
    residual_mean = busy * st.tau_d / 2
    ttft_mean = st.slot_wait + residual_mean + st.wait_mean + st.ttft_own
    quant = {
        p: st.slot_wait + _quantile_residual(st.tau_d, busy, p) + _quantile_wait(st.wait_mean, st.rho, p) + st.ttft_own
        for p in (0.5, 0.95)
    }
    tpot = st.tpot if o > 1 else None
    e2e = ttft_mean + (o - 1) * st.tpot
    return ServingResult(
        load_kind="concurrency" if closed else "request_rate",
        load=n_clients if closed else float(request_rate),
        saturated=False,
        ttft_mean_s=ttft_mean,
        ttft_p50_s=quant[0.5],
        ttft_p95_s=quant[0.95],
        tpot_mean_s=tpot,
        tpot_p50_s=st.tpot_gap_p50 if o > 1 else None,
        e2e_mean_s=e2e,
        output_tokens_per_s=x * o,
        requests_per_s=x,
        running_sequences=running,
        max_running_sequences=s,
        waiting_requests=waiting,
        prefill_steps_per_request=st.k,
        decode_step_s=st.tau_d,
        notes=notes,
    )


def meets(res: ServingResult, ttft_p95_target_s: float | None, tpot_target_s: float | None) -> bool:
    """Not saturated, p95 TTFT and mean TPOT within their targets (a target of None is no target)."""
    if res.saturated:
        return False
    if ttft_p95_target_s and res.ttft_p95_s > ttft_p95_target_s:
        return False
    return not (tpot_target_s and res.tpot_mean_s is not None and res.tpot_mean_s > tpot_target_s)


def max_request_rate(r: Replica, steps: _Steps | None = None) -> float:
    """The request rate at which the replica saturates: its throughput with every slot busy."""
    return serve(r, concurrency=r.max_running, steps=steps).requests_per_s


def capacity(
    r: Replica, ttft_p95_target_s: float | None = None, tpot_target_s: float | None = None, iterations: int = 9
) -> float:
    """The largest request rate (requests per second) one replica sustains with p95 TTFT and mean TPOT within
    the targets; 0 when even a trickle misses them. Latency grows with the rate, so a bisection finds it (to
    within 0.1% of the saturation rate, rounded down)."""
    steps = _Steps(r)
    hi = max_request_rate(r, steps)

    def ok(rate: float) -> bool:
        return meets(serve(r, request_rate=rate, steps=steps), ttft_p95_target_s, tpot_target_s)

    if ok(0.99 * hi):  # lax targets: the saturation rate, with a 1% margin, decides
        return 0.99 * hi
    lo = hi * 1e-3
    if not ok(lo):
        return 0.0
    hi = 0.99 * hi
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def load_curve(r: Replica, points: int = 14) -> list[ServingResult]:
    """The replica from a trickle to just under saturation, at request rates spaced evenly on a log scale."""
    steps = _Steps(r)
    top = max_request_rate(r, steps)
    lo = top / 200
    rates = [lo * (0.97 * top / lo) ** (i / (points - 1)) for i in range(points)]
    return [serve(r, request_rate=x, steps=steps) for x in rates]
