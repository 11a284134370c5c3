"""Engine-step times for the serving simulation: the per-op roofline of one step (``roofline.step_phase``) for the
exact mix of decoding sequences and prompt chunks in it, memoised per replica.

A step with prompt chunks is evaluated exactly for its chunks, its decodes at their mean context (attention and KV
reads are linear in the context, so the mean gives the sum) rounded to the nearest point of the context grid. A
decode-only step is interpolated between exact points on a
grid of sequence counts (10% apart) and mean contexts (1% apart): the step time is smooth there, so the error is a
small fraction of a percent, and a capacity search that runs a replica many times reuses the same few points.
"""

from __future__ import annotations

import bisect
import math
import threading
from dataclasses import fields, replace
from functools import lru_cache

import numpy as np

from ..common.jit import array_list, cell_dict, float_list, int_dict, njit
from ..hardware.catalog import GPU
from ..model.arch import ModelArch
from ..results.perf import PhaseReport
from . import step_pack, step_time
from .efficiency import PerfAssumptions
from .replica import Replica
from .roofline import Part, StepCost, Workload
from .speculative import expected_tokens_per_verify

# decoding sequences at which decode steps are evaluated exactly: every count to 16, then ~10% apart
SEQ_GRID: list[float] = sorted({float(n) for n in range(1, 17)} | {float(round(16 * 1.1**i)) for i in range(1, 90)})
CTX_RATIO = 1.01  # mean contexts at which decode steps are evaluated exactly: 1% apart
_LOG_RATIO = math.log(CTX_RATIO)


def _ctx_point(i: int) -> int:
    return max(1, round(CTX_RATIO**i))


NO_POINT = -1.0  # a cell's lower sequence point when the step is evaluated at its upper one alone
_SEQ_POINTS = np.array(SEQ_GRID)
_NO_CHUNKS = np.empty(0, np.int64)


@njit
def nearest_ctx(ctx_mean: float) -> int:
    """The point of the context grid nearest a mean context (what a step with prompt chunks is evaluated at)."""
    return max(1, round(CTX_RATIO ** float(round(math.log(max(1.0, ctx_mean)) / _LOG_RATIO))))  # _ctx_point


@njit
def ctx_cell(ctx_mean: float) -> int:
    """The cell of the context grid a mean context falls in: between points ``j`` and ``j + 1``."""
    return math.floor(math.log(max(1.0, ctx_mean)) / _LOG_RATIO)


@njit
def interpolate(cell, n: int, ctx_mean: float) -> float:
    """A decode step of ``n`` sequences at ``ctx_mean`` from its cell's exact corners (``StepTimes.cell``):
    linear in the context, then in the sequences."""
    lo, hi, c_lo, c_hi, lo_at_c_lo, lo_at_c_hi, hi_at_c_lo, hi_at_c_hi = cell
    if c_hi == c_lo:
        t_hi = hi_at_c_lo
    else:
        t_hi = hi_at_c_lo + (hi_at_c_hi - hi_at_c_lo) * (ctx_mean - c_lo) / (c_hi - c_lo)
    if lo == NO_POINT:
        return t_hi
    if c_hi == c_lo:
        t_lo = lo_at_c_lo
    else:
        t_lo = lo_at_c_lo + (lo_at_c_hi - lo_at_c_lo) * (ctx_mean - c_lo) / (c_hi - c_lo)
    return t_lo + (t_hi - t_lo) * (n - lo) / (hi - lo)


@njit
def cell_of(model, draft, n: int, j: int):
    """``StepTimes.cell`` from the compiled step model (step_time.py; ``draft``: the speculating replica's draft
    model, else ``step_pack.EMPTY``): the same points, the same corners."""
    i = 0
    while i < len(_SEQ_POINTS) and _SEQ_POINTS[i] < n:  # _seq_bracket
        i += 1
    if i >= len(_SEQ_POINTS):
        lo, hi = NO_POINT, float(n)
    elif _SEQ_POINTS[i] == n or i == 0:
        lo, hi = NO_POINT, _SEQ_POINTS[i]
    else:
        lo, hi = _SEQ_POINTS[i - 1], _SEQ_POINTS[i]
    c_lo = max(1, round(CTX_RATIO ** float(j)))  # _ctx_point
    c_hi = max(1, round(CTX_RATIO ** float(j + 1)))
    factor, none = model[0][step_pack.DECODE_FACTOR], np.empty(0, np.int64)
    h_lo = step_time.step_s(model, draft, hi, c_lo, none, 0) * factor
    h_hi = h_lo if c_hi == c_lo else step_time.step_s(model, draft, hi, c_hi, none, 0) * factor
    l_lo = l_hi = math.nan
    if lo != NO_POINT:
        l_lo = step_time.step_s(model, draft, lo, c_lo, none, 0) * factor
        l_hi = l_lo if c_hi == c_lo else step_time.step_s(model, draft, lo, c_hi, none, 0) * factor
    return (lo, hi, float(c_lo), float(c_hi), l_lo, l_hi, h_lo, h_hi)


class StepModel:
    """The engine step of one replica (model, GPU, formats and layout) on the per-op roofline: every latency the
    product shows is a sum of these steps, whether a static batch (``predict``) or the step loop under load
    (``simulate``). ``engine`` given (the replica's): each step's GEMMs, attention and all-reduces are the measured
    kernel times where that engine's tables cover the replica (kernel_steps.py), the calibrated roofline elsewhere;
    the step's report names which (``PhaseReport.kernel_source``).

    Speculative decoding (the workload has a draft, speculative.py): each decoding sequence's step is a verify step
    of ``width`` = k + 1 tokens through the target, after k steps of the draft model over the decoding sequences
    (``draft``, its own StepModel), and yields ``per_step`` = 1 + a + ... + a^k output tokens on average; a
    step's time (``step_s``, ``decode_s``) is the two together, and a step with prompt chunks adds the draft's
    pass over those chunks (the first token: ``first_token_s``). Without a draft: width 1, one token a step."""

    def __init__(self, m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, engine: str | None = None):
        self.m, self.gpu, self.wl, self.pa = m, gpu, wl, pa
        self.cost = StepCost(m, gpu, wl, pa, engine)
        self.draft: StepModel | None = None
        self.width, self.draft_steps, self.per_step = 1, 0, 1.0
        if wl.spec_draft is not None:
            self.draft = step_model(wl.spec_draft, gpu, replace(wl, spec_draft=None), pa, engine)
            self.width, self.draft_steps = wl.spec_tokens + 1, wl.spec_tokens
            self.per_step = expected_tokens_per_verify(wl.spec_tokens, wl.spec_acceptance)
        compiled = step_pack.pack(self.cost)  # the compiled step model's arrays; step_pack.EMPTY: none
        draft = step_pack.EMPTY if self.draft is None else self.draft.compiled
        # compiled only where the draft is too (a draft the compiled model does not cover: the Python model answers)
        self.compiled = compiled if self.draft is None or len(draft[0]) else step_pack.EMPTY
        self.draft_compiled = draft

    def step_s(self, decodes: float, ctx: int, chunks: tuple[tuple[int, int, int], ...]) -> float:
        """``step(decodes, ctx, chunks).time_s`` and the draft's steps, without building the report (the step
        loop's question): the compiled step model's time where the replica has one (step_time.py), equal to
        ``python_step_s``."""
        if len(self.compiled[0]):
            spec = np.array([v for chunk in chunks for v in chunk], np.int64)
            return step_time.step_s(self.compiled, self.draft_compiled, float(decodes), ctx, spec, len(chunks))
        return self.python_step_s(decodes, ctx, chunks)

    def python_step_s(self, decodes: float, ctx: int, chunks: tuple[tuple[int, int, int], ...]) -> float:
        """``step_s`` on the Python model (roofline.StepCost.seconds): where numba is missing or the compiled model
        does not cover the replica, and what the compiled one is tested against."""
        w = self.width
        parts = [(decodes, ctx, w, decodes * w)] if decodes > 0 else []
        parts += [(1, cached, new, last) for cached, new, last in chunks]
        overhead = self.pa.prefill_overhead_s if chunks else self.pa.decode_step_overhead_s
        t = self.cost.seconds(parts, overhead, bool(chunks))
        if self.draft is not None and decodes > 0:
            t += self.draft_steps * self.draft.python_step_s(decodes, ctx, ())
        if self.draft is not None and chunks:  # the draft's pass over the prompt chunks (step_time.step_s)
            t += self.draft.python_step_s(0, 0, chunks)
        return t

    def step(self, decodes: float, ctx: int, chunks: tuple[tuple[int, int, int], ...]) -> PhaseReport:
        """The target's pass of a step of ``decodes`` sequences each adding ``width`` tokens after ``ctx`` and
        prompt chunks ``(cached, new, logits)``: the prefill overhead when it carries a chunk, the decode step's
        otherwise (a speculating replica's draft steps are not in the report: ``step_s``)."""
        w = self.width
        parts = [Part(decodes, ctx, w, decodes * w)] if decodes > 0 else []
        parts += [Part(1, cached, new, last) for cached, new, last in chunks]
        overhead = self.pa.prefill_overhead_s if chunks else self.pa.decode_step_overhead_s
        return self.cost.phase("step", parts, overhead, bool(chunks))

    def prefill(self, batch: int, prompt: int) -> PhaseReport:
        """``batch`` whole prompts read in one step (a static batch's prefill; one request alone at batch 1)."""
        cached = int(prompt * self.wl.prefix_cache_fraction)
        new = max(1, prompt - cached)
        return self.cost.phase("prefill", [Part(batch, cached, new, batch)], self.pa.prefill_overhead_s, True)

    def prefill_s(self, batch: int, prompt: int) -> float:
        """``prefill(batch, prompt).time_s`` without building the report (roofline.StepCost.seconds: the same
        formula)."""
        cached = int(prompt * self.wl.prefix_cache_fraction)
        new = max(1, prompt - cached)
        return self.cost.seconds([(batch, cached, new, batch)], self.pa.prefill_overhead_s, True)

    def first_token_s(self, batch: int, prompt: int) -> float:
        """A static batch's first token: the target's prefill (``prefill_s``) and, where the replica speculates, the
        draft's prefill of the same prompts after it (the step loop's rule, step_time.step_s)."""
        t = self.prefill_s(batch, prompt)
        return t if self.draft is None else t + self.draft.prefill_s(batch, prompt)

    def decode(self, batch: float, ctx: int) -> PhaseReport:
        """The target's pass of a decode step of ``batch`` sequences at context ``ctx`` (a speculative verify step:
        ``width`` tokens each; the draft's steps are not in the report)."""
        part = Part(batch, ctx, self.width, batch * self.width)
        return self.cost.phase("decode", [part], self.pa.decode_step_overhead_s)

    def decode_s(self, batch: float, ctx: int) -> float:
        """A decode step of ``batch`` sequences at context ``ctx``, the draft's steps included where the replica
        speculates (``step_s`` without chunks), from the compiled step model where it covers the replica."""
        if len(self.compiled[0]):
            return step_time.step_s(self.compiled, self.draft_compiled, float(batch), ctx, _NO_CHUNKS, 0)
        return self.python_step_s(batch, ctx, ())


@lru_cache(maxsize=512)
def _shared(m: ModelArch, gpu: GPU, wl_fields: tuple, pa: PerfAssumptions, engine: str | None) -> StepModel:
    return StepModel(m, gpu, Workload(*wl_fields), pa, engine)


def step_model(m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, engine: str | None = None) -> StepModel:
    """The one ``StepModel`` of a model, GPU, workload, assumptions and engine, shared by the static views
    (predict.py) and the step loop's tables (``StepTimes``): building one (its kernel tables, the compiled model's
    arrays) takes ~1 ms, and its remembered per-token terms serve every caller."""
    return _shared(m, gpu, tuple(getattr(wl, f.name) for f in fields(wl)), pa, engine)


def forget() -> None:
    """Forget the shared step models (a test's fresh start: plan.replica_runs.forget)."""
    _shared.cache_clear()


def _seq_bracket(n: int) -> tuple[float | None, float]:
    """The points of the sequence grid around ``n`` decoding sequences: (None, n's point) when it is on the grid
    (or below or past it, where the step is evaluated at n itself), else (the point below, the point above)."""
    i = bisect.bisect_left(SEQ_GRID, n)
    if i >= len(SEQ_GRID):
        return None, float(n)
    hi = SEQ_GRID[i]
    if hi == n or i == 0:
        return None, hi
    return SEQ_GRID[i - 1], hi


class StepTimes:
    """Step times of one replica, memoised: ``decode(n, ctx)`` and ``mixed(n, ctx, chunks)`` in seconds. The
    tables the compiled step loop reads (step_loop.py) are kept here too, so every run of one step model shares
    them: ``cell_table`` (the decode grid's cells) and ``mixed_index`` / ``mixed_keys`` / ``mixed_times`` (the
    steps with prompt chunks it has seen)."""

    def __init__(self, r: Replica):
        self.r = r
        self.model = step_model(r.m, r.gpu, r.wl, r.pa, r.engine)
        self.memo: dict[tuple, float] = {}
        self.cells: dict[tuple[int, int], tuple] = {}  # (n, context cell) -> its exact points (``cell``)
        self.cell_table = cell_dict()
        self.mixed_index, self.mixed_keys, self.mixed_times = int_dict(), array_list(), float_list()
        self.compiled = step_pack.with_factor(self.model.compiled, r.decode_time_factor)  # EMPTY: ask in Python
        self.draft = self.model.draft_compiled  # a speculating replica's draft (step_pack.EMPTY: none)
        self.lock = threading.Lock()  # one run at a time fills the tables (the step loop runs without the GIL)

    def _exact(self, n: float, ctx: int, chunks: tuple[tuple[int, int, int], ...]) -> float:
        key = (n, ctx, chunks)
        t = self.memo.get(key)
        if t is None:
            t = self.model.step_s(n, ctx, chunks)
            t = self.memo[key] = t if chunks else t * self.r.decode_time_factor  # a calibrated deployment's
        return t

    def decode(self, n: int, ctx_mean: float) -> float:
        """A step of ``n`` decoding sequences at a mean context of ``ctx_mean`` tokens (bilinear on the grids)."""
        return interpolate(self.cell(n, ctx_cell(ctx_mean)), n, ctx_mean)

    def cell(self, n: int, j: int) -> tuple:
        """The exact points around ``n`` sequences in context cell ``j``: the sequence grid's points ``lo``
        (NO_POINT when ``n`` is on the grid or off it: the step is evaluated at ``hi`` alone) and ``hi``, the
        cell's contexts ``c_lo`` and ``c_hi``, and the step times at the four corners (each remembered in
        ``memo``), as floats."""
        got = self.cells.get((n, j))
        if got is None and len(self.compiled[0]):
            got = self.cells[n, j] = cell_of(self.compiled, self.draft, n, j)
        elif got is None:
            lo, hi = _seq_bracket(n)
            c_lo, c_hi = _ctx_point(j), _ctx_point(j + 1)
            corners = []
            for seqs in (lo, hi):
                if seqs is None:
                    corners += [math.nan, math.nan]
                    continue
                t_lo = self._exact(seqs, c_lo, ())
                corners += [t_lo, t_lo if c_hi == c_lo else self._exact(seqs, c_hi, ())]
            got = self.cells[n, j] = (NO_POINT if lo is None else lo, hi, float(c_lo), float(c_hi), *corners)
        return got

    def mixed(self, n: int, ctx_mean: float, chunks: tuple[tuple[int, int, int], ...]) -> float:
        """A step of ``n`` decodes at mean context ``ctx_mean`` and prompt chunks ``(cached, new, logits)``: each
        chunk ``new`` prompt tokens after ``cached`` ones, ``logits`` 1 when it ends its prompt."""
        if not chunks:
            return self.decode(n, ctx_mean)
        return self.mixed_at((float(n), nearest_ctx(ctx_mean) if n else 0, chunks))

    def mixed_at(self, key: tuple[float, int, tuple[tuple[int, int, int], ...]]) -> float:
        """The step ``(decodes, context point, chunks)``, remembered."""
        t = self.memo.get(key)
        if t is None:
            t = self.memo[key] = self.model.step_s(*key)
        return t
