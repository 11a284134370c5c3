"""One engine step's time on one replica, compiled (common/jit.py): ``roofline.StepCost.seconds`` and the kernel
tables' look-ups (kernel_steps.py, kernels.py) as one nopython function, so the compiled step loop (step_loop.py)
times a step it has not seen without a call back into Python.

``step_pack.pack(cost, decode_time_factor)`` turns one replica's step model into arrays once (``P.*`` name the
entries of its ``coef``). ``step_s(model, draft, decodes, ctx, spec, count)`` is ``StepModel.step_s`` (``draft``:
a speculating replica's draft model, packed alike, else ``step_pack.EMPTY``; ``target_s`` the target's pass alone)
and ``steps.cell_of(model, draft, n, j)`` is ``StepTimes.cell``: the same operations in the same order on the same
float64 values, so the times are equal to the last bit (tests/core/perf/test_step_time.py holds them to the Python
model on thousands of random steps), a rank of an expert-parallel replica (expert_parallel.py) included. A replica
the compiled model does not cover (MoE or MLA layers timed from the kernel tables, kernel_steps.MEASURED_MOE, or its
draft's) packs to an empty ``coef`` and the loop asks the Python model, as before.
"""

from __future__ import annotations

import math

import numpy as np

from ..common.jit import njit
from . import step_pack as P


@njit
def _bisect_left(a, lo, hi, x):
    """The first index in a[lo:hi] whose value is >= x (bisect.bisect_left)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit
def _axis(grids, start, n, x):
    """Where ``x`` falls on one axis's grid (grids[start:start + n]): (its index or -1 when it is between points,
    the indices below and above, the upper point's weight (kernels._Table.look_up's, 0 on a point), inside)."""
    i = _bisect_left(grids, start, start + n, x)
    if i < start + n and grids[i] == x:
        return i - start, i - start, i - start, 0.0, True
    if i == start or i == start + n:
        return -1, 0, 0, 0.0, False
    lo, up = grids[i - 1], grids[i]
    return -1, i - 1 - start, i - start, (math.log(x) - math.log(lo)) / (math.log(up) - math.log(lo)), True


@njit
def look_up(model, t, x0, x1, x2):
    """kernels._Table.look_up of table ``t`` at the point (x0, x1, x2) in seconds (x2 = 0 on a two-axis table), the
    corners weighted in its order; NaN where it has no figure."""
    meta, grids, ms, logs = model[2], model[3], model[4], model[5]
    if meta[t, 0] == 0:
        return np.nan
    g0, n0, n1, n2, v0 = meta[t, 1], meta[t, 2], meta[t, 3], meta[t, 4], meta[t, 5]
    e0, lo0, up0, w0, in0 = _axis(grids, g0, n0, x0)
    e1, lo1, up1, w1, in1 = _axis(grids, g0 + n0, n1, x1)
    e2, lo2, up2, w2, in2 = _axis(grids, g0 + n0 + n1, n2, x2)
    if e0 >= 0 and e1 >= 0 and e2 >= 0:  # a row of the table
        got = ms[v0 + (e0 * n1 + e1) * n2 + e2]
        if not math.isnan(got):
            return got / 1e3
    if not (in0 and in1 and in2):
        return np.nan
    log_ms = 0.0
    for mask in range(8):  # the corners around the point, each weighted by its share on every axis
        w = 1.0
        if mask & 1:
            i0, w = up0, w * w0
        else:
            i0, w = lo0, w * (1.0 - w0)
        if mask >> 1 & 1:
            i1, w = up1, w * w1
        else:
            i1, w = lo1, w * (1.0 - w1)
        if mask >> 2 & 1:
            i2, w = up2, w * w2
        else:
            i2, w = lo2, w * (1.0 - w2)
        if w == 0.0:
            continue
        lv = logs[v0 + (i0 * n1 + i1) * n2 + i2]
        if math.isnan(lv):
            return np.nan
        log_ms += w * lv
    return math.exp(log_ms) / 1e3


@njit
def _gemm_s(model, t, m, n, k):
    """kernel_steps._gemm_s: one GEMM, a dimension past the tables split into equal measured pieces."""
    pm, pn, pk = math.ceil(m / P.MAX_M), math.ceil(n / P.MAX_DIM), math.ceil(k / P.MAX_DIM)
    got = look_up(model, t, math.ceil(m / pm), math.ceil(n / pn), math.ceil(k / pk))
    return got * pm * pn * pk


@njit
def _gemms_s(model, tokens, logits):
    """The step's dense GEMMs at ``tokens`` tokens (each shape's measured time x its runs, in order) and, unless
    that is NaN (not measured), its LM head's at ``logits`` rows; each remembered in the replica's memo by its count
    (step_pack.MEMO_*: the same look-ups, so the same floats)."""
    memo, c = model[6], model[0]
    g = P.UNSET
    if tokens <= P.MEMO_TOKENS:
        g = memo[tokens]
    if g == P.UNSET:
        g = 0.0
        for s in range(len(model[1])):
            runs = model[1][s, 2]
            t = _gemm_s(model, P.T_GEMM, tokens, model[1][s, 0], model[1][s, 1]) if runs else 0.0
            g += t * runs
        if tokens <= P.MEMO_TOKENS:
            memo[tokens] = g
    if math.isnan(g) or not logits:
        return g
    at = P.MEMO_AT_LOGITS + logits
    lm = memo[at] if logits <= P.MEMO_LOGITS else P.UNSET
    if lm == P.UNSET:
        lm = _gemm_s(model, P.T_GEMM16, logits, np.int64(c[P.LM_N]), np.int64(c[P.LM_K]))
        if logits <= P.MEMO_LOGITS:
            memo[at] = lm
    return g + lm


@njit
def _kv_bytes(c, context_tokens, sequences):
    """model.arch.KVCacheBytes."""
    if context_tokens <= 0 or sequences <= 0:
        return 0.0
    tokens_swa = min(context_tokens, c[P.KV_WINDOW]) if c[P.KV_SWA] else 0.0
    total = c[P.KV_PER_LAYER] * (c[P.KV_FULL] * context_tokens + c[P.KV_SWA] * tokens_swa) * sequences
    if not math.isnan(c[P.KV_SHARE]):
        total *= c[P.KV_SHARE]
    return total


@njit
def _attended(c, cached, new):
    """roofline._attended."""
    causal = new * cached + new * (new + 1) / 2
    total = (c[P.NUM_LAYERS] - c[P.SWA_LAYERS]) * causal
    if c[P.SWA_LAYERS]:
        w = np.int64(c[P.SWA_TOKENS])
        k = min(max(w - cached, 0), new)
        total += c[P.SWA_LAYERS] * (k * cached + k * (k + 1) // 2 + (new - k) * w)
    return total


@njit
def _touched(c, tokens):
    """roofline.expected_experts_touched (a float power, as Python's)."""
    e = c[P.EXPERTS]
    return e * (1 - (1 - c[P.TOPK] / e) ** max(tokens, 0.0))


@njit
def _allreduce_s(c, message_bytes):
    """roofline.allreduce_time over the replica's tensor-parallel GPUs."""
    n, kind, bw = c[P.TP], c[P.AR_KIND], c[P.AR_BW]
    if kind == P.AR_NONE:
        return 0.0
    ring_bytes = 2 * (n - 1) / n * message_bytes
    if kind == P.AR_PCIE:
        return c[P.AR_LAT] + ring_bytes / bw
    one_shot = c[P.AR_LAT] + (n - 1) * message_bytes / bw
    two_shot = c[P.AR_LAT2] + ring_bytes / bw
    return min(one_shot, two_shot) + c[P.AR_SYNC]


@njit
def _touched_weight_bytes(c, tokens, touched):
    """moe_weights.weight_bytes_touched, the experts ``touched`` the step's tokens hit (none for a dense model)."""
    w_bytes = c[P.W_BASE]
    if c[P.UNTIED]:
        w_bytes += min(tokens, c[P.VOCAB]) * c[P.HIDDEN] * c[P.EMB_BYTES]
    if c[P.IS_MOE]:
        w_bytes -= (c[P.EXPERTS] - touched) * c[P.ONE_EXPERT] * c[P.MOE_LAYERS] * c[P.BPV]
    return w_bytes


@njit
def _tp_terms(c, tokens):
    """roofline.StepCost._token_terms over tp x pp GPUs: weights read and the experts' share of them per GPU,
    tokens per expert GEMM, the all-reduces' seconds."""
    ex_bytes = ex_tokens = 0.0
    touched = _touched(c, tokens) if c[P.IS_MOE] else 0.0
    w_bytes = _touched_weight_bytes(c, tokens, touched)
    if c[P.IS_MOE]:
        ex_bytes = touched * c[P.ONE_EXPERT] * c[P.MOE_LAYERS] * c[P.BPV] / c[P.SHARD]
        ex_tokens = tokens * c[P.TOPK] / touched if touched else 0.0
    comm = 2 * c[P.NUM_LAYERS] * _allreduce_s(c, tokens * c[P.HIDDEN] * c[P.ACT_BYTES])
    return w_bytes / c[P.SHARD] + c[P.REPL] * c[P.BPV], ex_bytes, ex_tokens, comm


@njit
def _ep_terms(c, tokens):
    """expert_parallel.token_terms, one rank of an EP replica of ``ep`` GPUs (tp = pp = 1): the dense part whole
    and the rank's 1 / ep of the experts every rank's tokens (routed = ep x tokens) touch, tokens per expert GEMM at
    routed, and the dispatch and combine all-to-alls of every MoE layer (comm.all_to_all_time)."""
    ep = c[P.EP]
    routed = tokens * ep
    touched = _touched(c, tokens)
    dense = _touched_weight_bytes(c, tokens, touched) - touched * c[P.ONE_EXPERT] * c[P.MOE_LAYERS] * c[P.BPV]
    hit = _touched(c, routed)
    ex_bytes = hit * c[P.ONE_EXPERT] * c[P.MOE_LAYERS] * c[P.BPV] / ep
    ex_tokens = routed * c[P.TOPK] / hit if hit else 0.0
    sent = (ep - 1) / ep * (tokens * c[P.TOPK] * c[P.HIDDEN] * c[P.ACT_BYTES])
    comm = 2 * c[P.MOE_LAYERS] * (c[P.A2A_LAT] + sent / c[P.A2A_BW] + c[P.A2A_SYNC])
    return dense + ex_bytes, ex_bytes, ex_tokens, comm


@njit
def _to(p0, p1, seconds):
    """kernel_steps._to."""
    top = max(p0, p1)
    return (p0 * seconds / top, p1 * seconds / top) if top > 0 else (seconds, 0.0)


@njit
def _part(model, seqs, cached, new):
    """One part's attention seconds from the tables (kernel_steps.MeasuredSteps._attention), NaN: not measured."""
    batch = max(1, round(seqs))
    if new == 1:
        t = look_up(model, P.T_DECODE, batch, max(1, cached), 0)
    else:
        t = look_up(model, P.T_PREFILL, batch, new, 0)
        if not math.isnan(t) and cached:
            t *= (new * cached + new * (new + 1) / 2) / (new * (new + 1) / 2)
    return t * seqs / batch


@njit
def _chunk_s(model, cached, new):
    """``_part(model, 1.0, cached, new)``, a prompt chunk's attention: its look-up (batch 1, ``new`` tokens) kept in
    the replica's memo by ``new`` (step_pack.MEMO_AT_CHUNKS), the cached context's share applied after, as there."""
    if new == 1 or new > P.MEMO_TOKENS or len(model[6]) == 0:
        return _part(model, 1.0, cached, new)
    memo = model[6]
    t = memo[P.MEMO_AT_CHUNKS + new]
    if t == P.UNSET:
        t = look_up(model, P.T_PREFILL, 1, new, 0)
        memo[P.MEMO_AT_CHUNKS + new] = t
    if not math.isnan(t) and cached:
        t *= (new * cached + new * (new + 1) / 2) / (new * (new + 1) / 2)
    return t * 1.0 / 1


@njit
def target_s(model, decodes, ctx, spec, count):
    """StepModel.target_s: the target model's pass of a step of ``decodes`` sequences each running ``SPEC_WIDTH``
    tokens (1: a plain decode; k + 1: a speculative verify step) after ``ctx`` and the prompt chunks
    ``spec[:3 count]`` ((cached, new, logits) each), in seconds."""
    c = model[0]
    w = np.int64(c[P.SPEC_WIDTH])  # tokens per decoding sequence: 1, or a speculative verify step's k + 1
    tokens = lm_tokens = attn = kv = absorbed = 0.0
    mla = c[P.IS_MLA] != 0.0
    if decodes > 0:  # roofline.StepCost._parts_sums: the decodes' part, then each chunk's
        tokens += decodes * w
        lm_tokens += decodes * w
        if mla:  # every token has logits: MLA's absorbed form
            absorbed += c[P.PER_PAIR_DECODE] * _attended(c, ctx, w) * decodes
        else:
            attn += c[P.PER_PAIR] * _attended(c, ctx, w) * decodes
        kv += _kv_bytes(c, ctx, decodes) + _kv_bytes(c, w, decodes)
    for j in range(count):
        cached, new = spec[3 * j], spec[3 * j + 1]
        tokens += 1.0 * new
        lm_tokens += spec[3 * j + 2]
        if mla and spec[3 * j + 2] == new:
            absorbed += c[P.PER_PAIR_DECODE] * _attended(c, cached, new) * 1.0
        else:
            attn += c[P.PER_PAIR] * _attended(c, cached, new) * 1.0
        kv += _kv_bytes(c, cached, 1.0) + _kv_bytes(c, new, 1.0)
    # roofline.StepCost._token_terms (an EP rank: expert_parallel.token_terms)
    w_bytes, ex_bytes, ex_tokens, comm = _ep_terms(c, tokens) if c[P.EP] > 1 else _tp_terms(c, tokens)
    acts = 2 * tokens * c[P.HIDDEN] * c[P.ACT_BYTES] * c[P.NUM_LAYERS] / c[P.PP]
    ex_flops = c[P.EX_FLOPS_PER_TOKEN] * tokens / c[P.SHARD]
    mm_flops = (2 * c[P.DENSE] * tokens + 2 * c[P.LM_HEAD] * lm_tokens) / c[P.SHARD]
    mm_flops += 2 * c[P.REPL] * tokens
    # roofline.StepCost._op_times
    bw, peak = c[P.BW], c[P.PEAK]
    mfu = c[P.MFU_MAX] * tokens / (tokens + c[P.MFU_HALF])
    mfu_16 = c[P.MFU_MAX16] * tokens / (tokens + c[P.MFU_HALF])
    x = w_bytes / c[P.LAYERS]
    w_mbu = c[P.W_MBU_MAX] * x / (x + c[P.MBU_HALF]) if x > 0 else c[P.W_MBU_MAX]
    x = kv / c[P.LAYERS]
    kv_mbu = c[P.KV_MBU_MAX] * x / (x + c[P.KV_MBU_HALF]) if x > 0 else c[P.KV_MBU_MAX]
    ex_f = c[P.EX_F] if (ex_flops or ex_bytes) else 1.0
    ex_comp = ex_flops / (peak * (c[P.MFU_MAX] * ex_tokens / (ex_tokens + c[P.MFU_HALF])) * ex_f) if ex_flops else 0.0
    ex_mem = ex_bytes / (bw * w_mbu * ex_f)
    mm_comp = (mm_flops - ex_flops) / (peak * mfu)
    mm_mem = (w_bytes - ex_bytes + acts) / (bw * w_mbu)
    both, absorbed = attn / c[P.SHARD] + absorbed / c[P.SHARD], absorbed / c[P.SHARD]
    at_comp = (both - absorbed) / (c[P.ATTN_PEAK] * mfu_16) + absorbed / (c[P.ATTN_PEAK] * c[P.ABS_MFU])
    at_mem = kv / (bw * kv_mbu) if kv else 0.0
    if c[P.KERNELS] and tokens > 0:  # roofline.StepCost._measured: kernel_steps.MeasuredSteps.groups, measured_ops
        t_all, t_lm = max(1, round(tokens)), round(lm_tokens)
        g = _gemms_s(model, t_all, t_lm)
        a = _part(model, decodes, ctx + w - 1, 1) if decodes > 0 else 0.0  # a verify step: kernel_steps' rule
        for j in range(count):
            a += _chunk_s(model, spec[3 * j], spec[3 * j + 1])
        a *= c[P.NUM_LAYERS]
        if not math.isnan(g):
            mm_comp, mm_mem = _to(mm_comp, mm_mem, g / c[P.PP] + acts / (bw * c[P.W_MBU_MAX]))
        if not math.isnan(a):
            at_comp, at_mem = _to(at_comp, at_mem, a / c[P.PP])
        if c[P.TP] > 1 and comm:
            ar = look_up(model, P.T_ALL_REDUCE, np.int64(c[P.TP]), t_all * np.int64(c[P.HIDDEN]), 0)
            if not math.isnan(ar):
                comm = 2 * c[P.NUM_LAYERS] * ar
    # roofline.StepCost._total
    experts = max(ex_comp, ex_mem) + (c[P.EXPERTS_FIXED_S] if c[P.IS_MOE] else 0.0)
    core = (max(mm_comp, mm_mem) + experts + max(at_comp, at_mem)) * c[P.PP]
    waiting = max(0.0, (c[P.HOST_PREFILL_S] if count else c[P.HOST_S]) - core - comm)
    return (core + comm + waiting + (c[P.PREFILL_OVERHEAD] if count else c[P.DECODE_OVERHEAD])) * c[P.STEP_FACTOR]


_NONE = np.empty(0, np.int64)


@njit
def step_s(model, draft, decodes, ctx, spec, count):
    """StepModel.step_s: one engine step, in seconds: the target's pass (``target_s``) and, where the replica
    speculates (``draft`` not empty), the draft's k steps of the decoding sequences at ``ctx`` before it and the
    draft's own pass over the step's prompt chunks (speculative.py). Without a draft, ``target_s`` itself."""
    t = target_s(model, decodes, ctx, spec, count)
    if decodes > 0 and len(draft[0]):
        t += draft_s(model, draft, decodes, ctx)
    if count and len(draft[0]):
        t += target_s(draft, 0.0, 0, spec, count)  # the draft reads the prompt chunks too
    return t


@njit
def draft_s(model, draft, decodes, ctx):
    """The draft's part of a speculating replica's step: k = SPEC_WIDTH - 1 decode steps of the ``decodes``
    sequences at ``ctx`` through the ``draft`` model."""
    return (model[0][P.SPEC_WIDTH] - 1) * target_s(draft, decodes, ctx, _NONE, 0)
