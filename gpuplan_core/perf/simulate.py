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

The loop runs compiled (step_loop.py, numba: ~1-2 ms a run where Python took ~15-25 ms), on each request's
record and the KV cache held as arrays and numbers (step_loop.py names them), and reads its step times from the
replica's ``StepTimes`` tables, asking the step model in Python for a step it has not seen; its runs are those of
the Python loop it replaced bit for bit (tests/core/perf/test_step_loop.py: 290 recorded runs).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..common.jit import njit
from . import step_loop
from .clients import (  # noqa: F401
    Arrival,
    Lengths,
    Load,
    RunDraws,
    Shape,
    first_sends,
    ingest_done,
    length_arrays,
    lengths,
    send_array,
)
from .replica import Replica
from .schedulers import engine_loop
from .step_loop import MAX_STEPS  # noqa: F401  (its old home)
from .steps import StepTimes

_POLICY = {
    "decode_first": step_loop.DECODE_FIRST,
    "prefill_first": step_loop.PREFILL_FIRST,
    "no_evict": step_loop.NO_EVICT,
    "turbomind": step_loop.TURBOMIND,
}
_HANDLES = itertools.count()  # each running loop's name for its step times (step_loop.ASKING)


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
    """Run the replica's step loop under ``load`` until every request has finished (step_loop.run_loop, compiled).
    ``give_up_ttft_s``: stop, and return None, as soon as the measured requests' p95 first-token time is certain to
    exceed it (a capacity search only asks whether a rate meets its target; a run past the capacity would otherwise
    drain a growing queue)."""
    times = times or StepTimes(r)
    loop = engine_loop(r.engine, r.request_in_s)
    policy = r.limits.policy or loop.policy  # a release line's (replica.engine_limits), else the engine's
    rng = RunDraws(load.shape.seed)  # random.Random(seed)'s draws, remembered (clients.py)
    n = load.count()
    prompt, out = length_arrays(r, load.shape, n, rng)
    cached = (prompt * r.wl.prefix_cache_fraction).astype(np.int64)  # the prefix cache holds these
    new = np.maximum(1, prompt - cached)  # to prefill (its context again after a preemption)
    next_id, sent = send_array(load, n, rng)  # (clients.Clients: the loop sends a closed loop's next ones)
    done = ingest_done(load.shape, sent, prompt) if load.shape.ingests else sent  # a client's front end (clients.py);
    # a closed loop's later requests reach the engine ``request_in_s`` after they are sent (step_queues.send_next)
    window = measured_window(n, load.closed)
    handle = next(_HANDLES)
    with times.lock:  # the tables are this run's while it runs (step_loop.run_loop lets go of the GIL)
        step_loop.ASKING[handle] = times
        try:
            status, admitted, first, fin, gaps, weights, steps, preemptions, running_max, running_area = (
                step_loop.run_loop(
                    handle,
                    _POLICY[policy],
                    r.limits.max_num_batched_tokens,
                    r.limits.max_num_seqs,
                    r.kv_tokens,
                    load.closed,
                    next_id,
                    loop.request_in_s,
                    loop.request_out_s,
                    prompt,
                    out,
                    cached,
                    new,
                    sent,
                    done + loop.request_in_s,  # when the engine sees each
                    window.start,
                    window.stop,
                    give_up_ttft_s is not None,
                    math.inf if give_up_ttft_s is None else give_up_ttft_s,
                    late_enough_to_miss(len(window)) if give_up_ttft_s is not None else n + 1,
                    times.cell_table,
                    times.mixed_index,
                    times.mixed_keys,
                    times.mixed_times,
                    times.compiled,
                    times.draft,
                    times.model.width,
                    times.model.per_step,
                    r.wl.dp_ranks,
                )
            )
        finally:
            del step_loop.ASKING[handle]
    if status == step_loop.STOPPED:
        return None
    tally = _Tally(steps, preemptions, running_area, running_max, gaps, weights if len(weights) else np.array([]))
    return _measure(load, sent, admitted, first, fin, out, tally)


@dataclass(frozen=True)
class _Tally:
    """What a run counted: steps, preemptions, the running sequences (their time integral and peak), and the
    inter-token gaps of its decode steps with how many tokens had each."""

    steps: int
    preemptions: int
    running_area: float
    running_max: int
    gaps_s: np.ndarray
    gap_weights: np.ndarray


@njit
def window_measures(sent, admitted, first, fin, out, lo, hi):
    """The measured window's (requests lo .. hi - 1) per-request figures, as simulate._measure reads them: TTFT and
    end to end (from the send), TPOT of those with more than one output token ((last - first) / (tokens - 1)) and
    the queue's wait (send -> admitted); numpy's element by element operations, float for float, in one pass."""
    m = hi - lo
    ttft, e2e, waits = np.empty(m), np.empty(m), np.empty(m)
    multi = 0
    for i in range(lo, hi):
        if out[i] > 1:
            multi += 1
    tpot = np.empty(multi)
    j = 0
    for i in range(lo, hi):
        ttft[i - lo] = first[i] - sent[i]
        e2e[i - lo] = fin[i] - sent[i]
        waits[i - lo] = admitted[i] - sent[i]
        if out[i] > 1:
            tpot[j] = (fin[i] - first[i]) / float(out[i] - 1)
            j += 1
    return ttft, e2e, tpot, waits


def _measure(
    load: Load, sent_a: np.ndarray, admitted: np.ndarray, first_a: np.ndarray, fin_a: np.ndarray, out_a, tally: _Tally
) -> Run:
    n = len(sent_a)
    w = measured_window(n, load.closed)  # a contiguous range
    ttft, e2e, tpot, waits = window_measures(sent_a, admitted, first_a, fin_a, out_a, w.start, w.stop)
    span = fin_a.max() - sent_a.min()
    lo = hi = 0.0
    if load.closed:
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
        gaps_s=tally.gaps_s,
        gap_weights=tally.gap_weights,
        requests_per_s=float(rps),
        output_tokens_per_s=float(tps),
        running_mean=tally.running_area / span if span > 0 else 0.0,
        running_max=int(tally.running_max),
        preemptions=int(tally.preemptions),
        steps=int(tally.steps),
        waits_s=waits,
        makespan_s=float(span),
        output_tokens_total=int(out_a.sum()),
    )


def mean(values: np.ndarray) -> float:
    """``np.mean`` of a non-empty float array, float for float (its pairwise sum over the count), without its
    dispatch (a run's measures take several)."""
    return float(values.sum()) / len(values)


def median(values: np.ndarray) -> float:
    """``np.median`` of a non-empty array without NaN, float for float: the middle value, or the mean of the
    middle two."""
    v = np.sort(values)
    k = len(v) // 2
    return float(v[k]) if len(v) % 2 else (float(v[k - 1]) + float(v[k])) / 2


def quantiles(values: np.ndarray, qs) -> list[float]:
    """``np.quantile(values, qs)`` (its default linear method, float for float: the virtual index (n - 1) x q, the
    neighbours around it, numpy's two-sided lerp), the values sorted once; NaN when any value is."""
    v = np.sort(values)
    n = len(v)
    if n == 0 or math.isnan(v[-1]):
        return [math.nan] * len(qs)
    out = []
    for q in qs:
        at = (n - 1) * q
        if at >= n - 1:
            out.append(float(v[-1]))
            continue
        lo = math.floor(at)
        a, b, t = float(v[lo]), float(v[lo + 1]), at - lo
        out.append(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)
    return out


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, qs) -> list[float]:
    """Quantiles ``qs`` of values each counted ``weights`` times (inter-token gaps, one entry per kind of step), the
    values sorted once."""
    if len(values) == 0:
        return [math.nan] * len(qs)
    idx = np.argsort(values)
    v, w = values[idx], np.cumsum(weights[idx])
    at = np.minimum(len(v) - 1, np.searchsorted(w, np.asarray(qs, dtype=np.float64) * w[-1]))
    return [float(x) for x in v[at]]


def warm() -> None:
    """Compile the loop (or read it from numba's cache): a Docker build runs this once, so no process pays the
    compile (~30 s on a 2-core machine) on its first question."""
    from ..scenario.scenario import Scenario
    from .replica import replica_for

    r, _ = replica_for(Scenario(preset="Llama-3.1-8B", input_tokens=500, output_tokens=20), "H100-SXM")
    simulate(r, Load(concurrency=2, shape=Shape(requests=4)))
    simulate(r, Load(request_rate=1.0, shape=Shape(requests=4)), give_up_ttft_s=1.0)
