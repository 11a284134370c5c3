"""Fit and the inverse answers: what one GPU may fill, whether a job fits, the largest batch and context, the
smallest layout, and the whole catalog at once."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware.catalog import GPU
from ..model.arch import (
    ModelArch,
    check_tp,
    kv_bytes_per_token,
    kv_cache_bytes,
    valid_tp_degrees,
)
from ..model.formats import get_format
from ..scenario.deployment import RuntimeAssumptions
from ..scenario.fields import MAX_BATCH, MAX_CONTEXT_TOKENS, MAX_LAYOUT_GPUS
from .budget import _budget, memory_budget
from .components import MemoryBudget, MemoryRequest, stage_fraction
from .engine_kv import STARTUP_ENGINES, startup_kv
from .inference import KV_COMPONENTS, draft_components


def budget_bytes(gpu: GPU, runtime: RuntimeAssumptions) -> float:
    """What a job may fill on one GPU: usable VRAM x the runtime's memory utilization."""
    return gpu.vram_usable_bytes * runtime.memory_utilization


def kv_capacity_tokens(m: ModelArch, req: MemoryRequest, gpu: GPU) -> int:
    """Tokens of KV cache the engine of ``req`` allocates at start-up on one GPU (memory/engine_kv.py: vLLM,
    SGLang and TensorRT-LLM each by their own rule and version); transformers: what fits beside the budget."""
    check_tp(m, req.parallelism.tp)
    if req.runtime.engine in STARTUP_ENGINES:
        return startup_kv(m, req, gpu).tokens
    b = _budget(m, req, 1, req.context_tokens)
    fixed = b.per_gpu_bytes - sum(b.components.get(k, 0.0) for k in KV_COMPONENTS)
    pool = budget_bytes(gpu, req.runtime) - fixed
    per_tok = kv_bytes_per_token(
        m, get_format(req.formats.kv_format).bytes_per_value, req.parallelism.tp
    ) * stage_fraction(m, req.parallelism.pp)
    draft = draft_components(m, req, 1, 1)  # a speculating replica's draft holds every token too
    per_tok += draft[KV_COMPONENTS[1]] if draft else 0.0
    return max(0, int(pool // per_tok))


def max_batch(m: ModelArch, req: MemoryRequest, gpu: GPU) -> int:
    """Largest batch (sequences) at req.context_tokens that fits one GPU of this layout; 0 if none. A serving
    engine: its start-up KV pool / one sequence's KV at the context (same components as the budget)."""
    check_tp(m, req.parallelism.tp)
    comps = _budget(m, req, 1, req.context_tokens).components  # the model's KV and a speculating replica's draft's
    one_seq = sum(comps.get(k, 0.0) for k in KV_COMPONENTS)
    if req.runtime.engine in STARTUP_ENGINES and one_seq > 0:  # a serving budget (training holds no KV cache)
        return int(min(MAX_BATCH, startup_kv(m, req, gpu).pool_bytes // one_seq))
    one = _budget(m, req, 1, req.context_tokens).per_gpu_bytes
    two = _budget(m, req, 2, req.context_tokens).per_gpu_bytes
    per_seq = two - one
    room = budget_bytes(gpu, req.runtime) - (one - per_seq)
    if room < per_seq:
        return 0
    return int(min(MAX_BATCH, room // per_seq)) if per_seq > 0 else MAX_BATCH


def max_context(m: ModelArch, req: MemoryRequest, gpu: GPU, limit: int | None = None) -> int:
    """Largest context (tokens) at req.batch that fits one GPU of this layout; 0 if none."""
    cap = budget_bytes(gpu, req.runtime)
    hi = limit or MAX_CONTEXT_TOKENS

    check_tp(m, req.parallelism.tp)

    def fits(c: int) -> bool:
        return _budget(m, req, req.batch, c).per_gpu_bytes <= cap

    if not fits(1):
        return 0
    if fits(hi):
        return hi
    if req.job.mode == "inference":  # KV is piecewise linear in context: solve, then check the neighbours
        block = req.assumptions.kv_block_tokens
        fixed = _budget(m, req, req.batch, 0).per_gpu_bytes
        per_tok_layer = kv_cache_bytes(
            m, get_format(req.formats.kv_format).bytes_per_value, 1, req.batch, req.parallelism.tp, req.parallelism.pp
        )
        per_tok_layer /= m.num_layers
        room = (cap - fixed) / per_tok_layer  # token-layers that fit
        full, swa, w = m.num_layers - m.sliding_window_layers, m.sliding_window_layers, m.sliding_window_tokens
        if swa and room >= m.num_layers * w:
            guess = hi if full == 0 else int((room - swa * w) / full)
        else:
            guess = int(room / m.num_layers)
        guess = max(1, min(hi, guess // block * block))
        while guess > 1 and not fits(guess):
            guess -= block if guess > block else 1
        step = block
        while guess + 1 <= hi and fits(guess + 1):
            if guess + step <= hi and fits(guess + step):
                guess += step
            else:
                guess += 1
        return guess
    # training: the budget is exactly quadratic in context (activations s and s^2 terms, logits s)
    f0, f1, f2 = (_budget(m, req, req.batch, c).per_gpu_bytes for c in (0, 1, 2))
    a2 = (f2 - 2 * f1 + f0) / 2
    a1 = f1 - f0 - a2
    room = cap - f0
    guess = room / a1 if a2 <= 0 else (-a1 + math.sqrt(a1 * a1 + 4 * a2 * room)) / (2 * a2)
    lo = max(1, min(hi - 1, int(guess) - 2))
    if fits(lo) and not fits(lo + 8):
        while fits(lo + 1):
            lo += 1
        return lo
    lo = 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


@dataclass
class Layout:
    gpus: int
    tp: int
    pp: int
    dp: int


def layout_table(
    m: ModelArch, req: MemoryRequest, max_count: int = MAX_LAYOUT_GPUS, pipelines: tuple[int, ...] | None = None
) -> list[tuple[int, int, int, float, float]]:
    """Candidate layouts with per-GPU bytes split into (sharded by dp, not sharded): GPU-independent.

    Inference: tensor parallel (only degrees the heads allow, up to 8 in one node) x pipeline stages.
    Training: the same tp x pp grid, with the chosen ZeRO stage sharding over dp.
    Rows: (tp x pp x cp, tp, pp, sharded_bytes_at_dp1, unsharded_bytes). ``pipelines``: only these stage counts
    (a training search's interleaved schedules, which only pipelines whose layers divide run).
    """
    tps = valid_tp_degrees(m, 8)
    pps = [p for p in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64) if p <= m.num_layers]
    if pipelines is not None:
        pps = [p for p in pps if p in pipelines]
    rows = []
    tp_only = {"ep": None} if req.job.mode == "inference" else {}  # serving's EP runs at tp 1 alone: a TP grid
    for tp in tps:
        for pp in pps:
            n0 = tp * pp * req.parallelism.cp  # context parallel: the user's, kept
            if n0 > max_count:
                continue
            r1 = req.model_copy(update={"tp": tp, "pp": pp, "gpus": n0, **tp_only})
            b1 = _budget(m, r1, req.batch, req.context_tokens).per_gpu_bytes
            if req.job.mode == "inference" or req.parallelism.zero_stage == 0:
                rows.append((n0, tp, pp, 0.0, b1))
                continue
            r2 = req.model_copy(update={"tp": tp, "pp": pp, "gpus": 2 * n0})
            b2 = _budget(m, r2, req.batch, req.context_tokens).per_gpu_bytes
            sharded = 2 * (b1 - b2)  # per-GPU = sharded / dp + unsharded
            rows.append((n0, tp, pp, sharded, b1 - sharded))
    if req.job.mode == "inference":  # at equal GPU count, prefer tensor parallel (lower latency) over stages
        rows.sort(key=lambda r: (r[0], -r[1]))
    return rows


def min_gpus(
    m: ModelArch, req: MemoryRequest, gpu: GPU, max_count: int = MAX_LAYOUT_GPUS, table: list | None = None
) -> Layout | None:
    """The smallest GPU count (and its tp x pp x dp layout) whose per-GPU budget fits this GPU."""
    cap = budget_bytes(gpu, req.runtime)
    best: Layout | None = None
    for n0, tp, pp, sharded, unsharded in table if table is not None else layout_table(m, req, max_count):
        if best and n0 >= best.gpus:
            continue
        if sharded <= 0:
            if unsharded <= cap:
                best = Layout(n0, tp, pp, 1)
            continue
        if unsharded >= cap:
            continue
        dp = max(1, math.ceil(sharded / (cap - unsharded) * (1 - 1e-12)))
        while sharded / dp + unsharded > cap:  # float guard
            dp += 1
        n = n0 * dp
        if n <= max_count and (best is None or n < best.gpus):
            best = Layout(n, tp, pp, dp)
    return best


@dataclass
class GpuFit:
    gpu: GPU
    budget_bytes: float
    per_gpu_bytes: float
    fits: bool
    min_layout: Layout | None
    max_batch: int
    max_context: int
    kv_capacity_tokens: int | None

    @property
    def min_gpus(self) -> int | None:
        return None if self.min_layout is None else self.min_layout.gpus


def fit_on_gpu(
    m: ModelArch, req: MemoryRequest, gpu: GPU, budget: MemoryBudget | None = None, table: list | None = None
) -> GpuFit:
    budget = budget or memory_budget(m, req)
    cap = budget_bytes(gpu, req.runtime)
    ctx_limit = max(m.max_context_tokens, req.context_tokens)
    return GpuFit(
        gpu=gpu,
        budget_bytes=cap,
        per_gpu_bytes=budget.per_gpu_bytes,
        fits=budget.per_gpu_bytes <= cap,
        min_layout=min_gpus(m, req, gpu, table=table),
        max_batch=max_batch(m, req, gpu),
        max_context=max_context(m, req, gpu, limit=ctx_limit),
        kv_capacity_tokens=kv_capacity_tokens(m, req, gpu) if req.job.mode == "inference" else None,
    )


def evaluate_catalog(m: ModelArch, req: MemoryRequest, gpus: tuple[GPU, ...]) -> list[GpuFit]:
    budget = memory_budget(m, req)
    table = layout_table(m, req)
    return [fit_on_gpu(m, req, g, budget, table) for g in gpus]
