"""Every way to serve the scenario on the offers: GPU type x weights format x layout x offer.

For each GPU type and weights format, the layouts that hold the complete memory budget with at least one sequence
are judged once, whatever the offer (capacity.py remembers each replica's judgement by what it depends on): tensor
parallel 1, 2, 4 or 8 within one machine, and pipeline stages of 8 GPUs across machines when no machine holds the
model. Without a traffic estimate a layout is judged on the static batch (perf.predict); with one, on one replica's
capacity within the targets under continuous batching (perf/serving.py) and the replicas the peak needs:
replicas = ceil(peak rate / capacity), the latencies those replicas give at the peak (``served``).

The search's two shapes are here: a ``Layout`` (one that holds the budget, with its replica's judgement) and
``Served`` (that layout under the traffic). Then each offer either rents that layout (rent.py, whose
``inference_candidates`` tries every offer: a ``Pick``) or is rejected with the reason (Offer.layout_problem):
tensor parallel only within one machine and, above 2, only over NVLink; stages across machines only over a stated
fast network. Replicas on single-GPU rentals are independent servers, which is allowed. A layout the user set (GPU
count, tensor parallel, pipeline stages) is the only one tried. A mixture-of-experts model is also tried at expert
parallel 2, 4 and 8 (perf/expert_parallel.py: experts over the GPUs, attention data-parallel; rented as tensor
parallel over as many GPUs of one machine), judged as one of its ranks with ep x its rate (capacity.py); a dense
model never is.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from ..common.text import counted
from ..hardware.catalog import GPU
from ..hardware.engines import engine_gpu_problem
from ..memory.components import MemoryRequest
from ..model.arch import ModelArch
from ..model.formats import get_format
from ..perf.replica import rank_limits, scenario_limits
from ..perf.serving import shape_for
from ..perf.workload import workload_for
from ..pricing.billing import replicas_for_traffic, replicas_held
from ..pricing.offers import Offer
from ..results.plan import Pick, Rejected, layout_label
from ..scenario.deployment import Pricing, RuntimeAssumptions, Traffic
from ..scenario.layout import Parallelism
from ..scenario.parts import Formats, Request
from ..scenario.scenario import Scenario
from .capacity import ReplicaBound, ReplicaEval, ReplicaQuestion, evaluate_replica, replica_bound, workload_key
from .capacity import forget as forget_replicas
from .fitting import PP_STAGES, TP_DEGREES, _fitting

NO_FIT = "does not fit the complete memory budget on any layout tried"
Rejection = Rejected  # the name training.py imports


def target_misses(traffic: Traffic, ttft_s: float | None, tpot_s: float | None, what: str = "TTFT") -> list[str]:
    """The latency targets a layout's predicted times miss, in words."""
    misses = []
    if traffic.ttft_target_s and ttft_s is not None and ttft_s > traffic.ttft_target_s:
        misses.append(f"{what} {ttft_s * 1e3:,.0f} ms > target {traffic.ttft_target_s * 1e3:,.0f} ms")
    if traffic.tpot_target_s and tpot_s is not None and tpot_s > traffic.tpot_target_s:
        misses.append(f"TPOT {tpot_s * 1e3:,.1f} ms > target {traffic.tpot_target_s * 1e3:,.1f} ms")
    return misses


@dataclass(frozen=True)
class ServingAsk:
    """The parts of the scenario the serving search reads: the request, the traffic and its targets, the formats,
    the runtime assumptions, the layout the user set and the prices' terms. Not the site, the model source or the
    training inputs (the model arrives resolved)."""

    request: Request
    traffic: Traffic
    formats: Formats
    assumptions: RuntimeAssumptions
    parallelism: Parallelism
    pricing: Pricing
    interactive: bool

    @classmethod
    def of(cls, sc: Scenario) -> ServingAsk:
        return cls(
            sc.request,
            sc.traffic,
            sc.formats,
            sc.assumptions,
            sc.parallelism,
            sc.pricing,
            sc.job.serving == "interactive",
        )


def replica_question(
    m: ModelArch, ask: ServingAsk, gpu: GPU, fmt: str, tp: int, pp: int, kv: int, ep: int = 1
) -> ReplicaQuestion:
    """What a replica of this layout reads of the question (capacity.py's key). An expert-parallel replica (``ep``
    above 1) is asked about one of its ranks: the sequences one GPU's KV cache holds, its share of the batch."""
    tr, req = ask.traffic, ask.request
    return ReplicaQuestion(
        model=m,
        gpu=gpu,
        workload=workload_key(workload_for(ask.formats, ask.assumptions, tp, pp, fmt, ep, m)),
        kv_sequences=kv,
        batch=kv if req.batch == "max" else min(-(-req.batch // ep), kv),
        input_tokens=req.input_tokens,
        output_tokens=req.output_tokens,
        limits=rank_limits(scenario_limits(gpu, ask.assumptions, m.max_context_tokens), ask.assumptions.engine, ep),
        engine=ask.assumptions.engine,
        shape=shape_for(tr),
        targets=(tr.ttft_target_s, tr.tpot_target_s) if ask.interactive else (None, None),
        traffic=bool(tr.requests_per_day),
        request_in_s=ask.assumptions.request_in_s,
        decode_time_factor=ask.assumptions.decode_time_factor,
    )


def _replica_part(ask: ServingAsk) -> ServingAsk:
    """The ask with only what a replica's judgement reads of the traffic (its shape, its targets, whether there is
    any): requests per day 1 or 0 and the peak factor 1, no prices (a replica reads none, and their table of your
    prices is not hashable), so asks that differ in volume or prices alone share their layouts."""
    volume = {"requests_per_day": 1.0 if ask.traffic.requests_per_day else 0.0, "peak_to_average": 1.0}
    return replace(ask, traffic=ask.traffic.model_copy(update=volume), pricing=None)


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int


class Judgements:
    """The layouts' judgements, the most recent ``size`` kept (functools.lru_cache's rule), which can also say
    whether one is kept without judging it (``judge_all`` sends only those that are not to its threads)."""

    def __init__(self, size: int, judge):
        """``judge(*key)``: the judgement of the layout ``key`` names (made outside the lock)."""
        self.size, self.judge, self.lock, self.kept = size, judge, threading.Lock(), OrderedDict()
        self.hits = self.misses = 0

    def __contains__(self, key: tuple) -> bool:
        with self.lock:
            return key in self.kept

    def __call__(self, *key):
        with self.lock:
            got = self.kept.get(key)
            if got is not None:
                self.kept.move_to_end(key)
                self.hits += 1
                return got
            self.misses += 1
        got = self.judge(*key)  # outside the lock: judgements of other layouts go on
        with self.lock:
            self.kept[key] = got
            if len(self.kept) > self.size:
                self.kept.popitem(last=False)
        return got

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self.size, len(self.kept))

    def cache_clear(self) -> None:
        with self.lock:
            self.kept.clear()
            self.hits = self.misses = 0


# The replica's judgement for an ask of ``_replica_part`` (its question built once, not per traffic):
# _judged(m, ask, gpu, fmt, tp, pp, kv, ep).
_judged = Judgements(4096, lambda *key: evaluate_replica(replica_question(*key)))


@lru_cache(maxsize=4096)
def _bounded(m: ModelArch, ask: ServingAsk, gpu: GPU, fmt: str, tp: int, pp: int, kv: int, ep: int) -> ReplicaBound:
    """The replica's bounds (capacity.py ``replica_bound``) for an ask of ``_replica_part``."""
    return replica_bound(replica_question(m, ask, gpu, fmt, tp, pp, kv, ep))


def judge(m: ModelArch, ask: ServingAsk, gpu: GPU, fmt: str, tp: int, pp: int, kv: int, ep: int = 1) -> Layout:
    """One layout judged on the ask (its replica's judgement remembered apart from the volume and the prices)."""
    return Layout(gpu, fmt, tp, pp, kv, _judged(m, _replica_part(ask), gpu, fmt, tp, pp, kv, ep), ep)


def bound(m: ModelArch, ask: ServingAsk, gpu: GPU, fmt: str, tp: int, pp: int, kv: int, ep: int = 1) -> ReplicaBound:
    """One layout's bounds before its judgement (plan/prune.py), remembered as the judgement is."""
    return _bounded(m, _replica_part(ask), gpu, fmt, tp, pp, kv, ep)


def cache_info():
    """The layouts' judgements remembered apart from the traffic's volume and the prices (as functools.lru_cache's)."""
    return _judged.cache_info()


def forget() -> None:
    """Forget every remembered layout and replica: the next question is judged from nothing (tests, benchmarks)."""
    _judged.cache_clear()
    _bounded.cache_clear()
    forget_replicas()


JUDGE_THREADS = max(1, int(os.environ.get("GPUPLAN_JUDGE_THREADS", min(2, os.cpu_count() or 1))))
_POOL = ThreadPoolExecutor(JUDGE_THREADS, thread_name_prefix="judge") if JUDGE_THREADS > 1 else None


def judge_all(m: ModelArch, ask: ServingAsk, wanted: list[tuple[GPU, str, int, int, int]]) -> None:
    """Judge these layouts ((gpu, format, tp, pp, sequences, ep) each) in JUDGE_THREADS threads, so the search's calls
    that follow read them remembered: a judgement is mostly step-loop runs, which let go of the GIL
    (step_loop.run_loop), so two of them run side by side on two cores. Each layout is one thread's (its step
    times' tables are its own); what is judged, and so every figure, is what one thread judges."""
    part = _replica_part(ask)
    new = [w for w in wanted if (m, part, *w) not in _judged]  # a remembered one costs a look-up, not a thread
    if _POOL is not None and len(new) > 1:
        list(_POOL.map(lambda w: _judged(m, part, *w), new))


def rentable_layouts(
    m: ModelArch,
    ask: ServingAsk,
    gpu: GPU,
    fmt: str,
    memory: MemoryRequest,
    fixed: bool = False,
    *,
    offers: list[Offer] | None = None,
) -> tuple[list[tuple[int, int, int]], list[Rejected]]:
    """The layouts (tp, pp, sequences the KV cache holds, ep) of this GPU and format that hold the complete memory
    budget (stages only when no single machine does, and then the fewest) and, with ``offers`` (this GPU's), that
    one of them can rent; the others recorded as rejected. ``memory``: the question's memory budget in this
    format. Nothing is judged. An engine that cannot serve the format on the GPU at all (TensorRT-LLM's FP8 on
    Ampere, or on a GPU not NVIDIA's) rejects every layout of it."""
    if problem := engine_gpu_problem(ask.assumptions.engine, gpu, fmt):
        return [], [Rejected(gpu.gpu, problem, fmt)]
    fitting = _fitting(m, ask.parallelism, fixed, gpu, memory, ask.request.batch_or_one)
    if not fitting:
        return [], [Rejected(gpu.gpu, NO_FIT, fmt)]
    kept: list[tuple[int, int, int, int]] = []
    rejected: list[Rejected] = []
    for tp, pp, kv, ep in fitting:
        problems = [o.layout_problem(tp, pp, ep) for o in offers or []]  # EP: ep GPUs of one machine, as TP
        if offers and all(problems):
            rejected.append(Rejected(gpu.gpu, str(problems[0]), fmt, None, layout_label(gpu.gpu, tp, pp, ep)))
        else:
            kept.append((tp, pp, kv, ep))
    return kept, rejected


def evaluate_layouts(
    m: ModelArch,
    ask: ServingAsk,
    gpu: GPU,
    fmt: str,
    memory: MemoryRequest,
    fixed: bool = False,
    *,
    offers: list[Offer] | None = None,
) -> tuple[list[Layout], list[Rejected]]:
    """Every layout ``rentable_layouts`` keeps, judged on the traffic or the static batch (the serving search is
    the costly part). What a layout reads of the question is remembered apart from the traffic's volume and the
    prices, so a change to those judges nothing again."""
    kept, rejected = rentable_layouts(m, ask, gpu, fmt, memory, fixed, offers=offers)
    part = _replica_part(ask)
    return [
        Layout(gpu, fmt, tp, pp, kv, _judged(m, part, gpu, fmt, tp, pp, kv, ep), ep) for tp, pp, kv, ep in kept
    ], rejected


@dataclass(frozen=True)
class Layout:
    """One layout of one GPU type and weights format that holds the complete memory budget, and its replica's
    judgement (capacity.py)."""

    gpu: GPU
    weights_format: str
    tp: int
    pp: int
    kv_sequences: int  # sequences of input + output tokens the KV cache holds (one GPU's under expert parallel)
    replica: ReplicaEval
    ep: int = 1  # MoE: experts over this many GPUs, attention data-parallel (tp = pp = 1; perf/expert_parallel.py)

    @property
    def replica_gpus(self) -> int:
        return self.tp * self.pp * self.ep

    @property
    def label(self) -> str:
        return layout_label(self.gpu.gpu, self.tp, self.pp, self.ep)


@dataclass(frozen=True)
class Served:
    """A layout under the scenario's traffic: the replicas its peak needs, each replica's capacity and the
    latencies at that load (p95 TTFT, mean TPOT; the static batch's without traffic), the targets they miss and
    how they follow, in words. ``set_replicas``: the replicas the GPU count the user set holds (1: none set)."""

    replicas: int
    capacity_per_s: float
    ttft_s: float
    tpot_s: float
    e2e_s: float
    misses: tuple[str, ...]
    lines: tuple[str, ...]
    set_replicas: int = 1


def set_replicas(lay: Layout, gpus: int) -> int:
    """The replicas a GPU count the user set holds at this layout (at least one): 2 GPUs at TP 1 are 2 replicas."""
    return replicas_held(gpus, lay.replica_gpus)


def served(lay: Layout, traffic: Traffic, gpus: int = 1) -> Served:
    """The layout under the traffic (the module docstring): replicas for the peak, the latencies at that load.
    ``gpus``: the count the user set; the layout runs at least the replicas it holds (``set_replicas``)."""
    r = lay.replica
    least = set_replicas(lay, gpus)
    held = (f"the {counted(gpus, 'GPU')} set hold {counted(least, 'replica')}",) if least > 1 else ()
    if not traffic.requests_per_day:
        st = r.static
        misses = tuple(target_misses(traffic, st.ttft_s, st.tpot_s))
        line = f"batch {r.serving_batch:,} of at most {lay.kv_sequences:,} sequences that fit"
        return Served(least, r.capacity_per_s, st.ttft_s, st.tpot_s, st.e2e_request_s, misses, (line, *held), least)
    if r.capacity_per_s <= 0:
        light = r.light
        misses = tuple(
            f"{x} even at light load" for x in target_misses(traffic, light.ttft_p95_s, light.tpot_mean_s, "p95 TTFT")
        )
        return Served(least, 0.0, light.ttft_p95_s, light.tpot_mean_s, light.e2e_mean_s, misses, held, least)
    peak = traffic.peak_requests_per_s
    need = replicas_for_traffic(traffic.requests_per_day, traffic.peak_to_average, r.capacity_per_s)
    replicas = max(need, least)
    at = r.at(peak / replicas)
    while at.saturated:  # a load point under the capacity that the queue model calls saturated: one more replica
        replicas += 1
        at = r.at(peak / replicas)
    line = (
        f"{peak:,.2f} req/s at peak ({traffic.requests_per_day:,.0f}/day x {traffic.peak_to_average:g}) over "
        f"{counted(replicas, 'replica')} of {r.capacity_per_s:,.2f} req/s each (continuous batching: p95 TTFT "
        f"{at.ttft_p95_s * 1e3:,.0f} ms, TPOT {at.tpot_mean_s * 1e3:,.1f} ms at that load)"
    )
    if least > need:
        line += f"; {held[0]}, more than the peak needs ({counted(need, 'replica')})"
    return Served(replicas, r.capacity_per_s, at.ttft_p95_s, at.tpot_mean_s, at.e2e_mean_s, (), (line,), least)


def binding_constraint(
    tr: Traffic, input_tokens: int, layouts: list[Layout], picks: list[Pick], rejected: list[Rejected]
) -> str:
    """Why nothing qualifies, with numbers, in one sentence (the traffic's targets, the prompt's length)."""
    if not layouts and all(r.reason == NO_FIT for r in rejected):
        return (
            "The model does not fit the complete memory budget on any GPU and layout tried (up to "
            f"{max(TP_DEGREES)} GPUs per machine and {max(PP_STAGES)} stages); try a smaller weights format."
        )
    if not layouts and (refused := sorted({r.reason for r in rejected if not r.offer_id and r.reason != NO_FIT})):
        return refused[0][0].upper() + refused[0][1:] + "."  # the engine cannot serve the format there at all
    if not picks:
        reasons = sorted({r.reason for r in rejected if r.offer_id})
        return "No offer can rent a layout that fits: " + "; ".join(reasons[:3]) + "."
    if tr.ttft_target_s:
        best = min(layouts, key=lambda x: x.replica.floor_ttft_s)
        if best.replica.floor_ttft_s > tr.ttft_target_s:
            return (
                f"The {input_tokens:,}-token prompt alone prefills in {best.replica.floor_ttft_s:,.2f} s "
                f"on the fastest layout ({best.label}, {get_format(best.weights_format).label}); a TTFT of "
                f"{tr.ttft_target_s:g} s is not reachable with these GPUs."
            )
    if tr.tpot_target_s:
        best = min(layouts, key=lambda x: x.replica.floor_tpot_s)
        if best.replica.floor_tpot_s > tr.tpot_target_s:
            return (
                f"Even one request alone takes {best.replica.floor_tpot_s * 1e3:,.1f} ms per token on the fastest "
                f"layout ({best.label}); a TPOT of {tr.tpot_target_s * 1e3:,.0f} ms is not reachable with these GPUs."
            )
    misses = sorted({x for p in picks for x in p.misses})
    return "Every configuration misses a target: " + "; ".join(misses[:3]) + "."
