"""The step loop itself, compiled (common/jit.py): what simulate.py's docstring describes, run on arrays.

Per request (indexed by id): ``prompt``, ``out`` (its lengths), ``cached`` (prompt tokens the prefix cache holds),
``new`` (prompt tokens to read: its context again after a preemption), ``done`` (read so far), ``rem`` (output
tokens still to write), ``admitted``, ``first`` and ``fin`` (times), ``joined_step`` / ``joined_ctx`` (the decode
step and context at which it started decoding) and ``decoding_now``. The KV cache (``kv_*``): tokens of prompts being
read, ``offset + decoding x steps`` of the decoding sequences, and what a no-evict engine reserved. SGLang's token
ratio (``tr_*``: schedulers.TokenRatio's state). Queues: engine arrivals (a heap by arrival time), ``waiting`` (a
ring, preempted sequences back at its front), ``prefilling`` (in admission order), decode ends (a heap by decode
step) and ``admission`` (preemption takes the last).

Step times come from the replica's ``StepTimes`` (steps.py): the tables compiled code reads (``cells``, the decode
grid's cells; ``mixed_*``, the steps with prompt chunks, keyed by a hash of exactly what the step model reads and
checked entry by entry), and a step not yet in them is asked of the step model in Python (``objmode``) once.
"""

from __future__ import annotations

import math

import numpy as np

from ..common.jit import njit, njit_nogil, objmode
from .schedulers import CLIP_MAX_NEW_TOKENS, INIT_NEW_TOKEN_RATIO, ratio_admits, ratio_decayed, ratio_retracted
from .step_queues import decode_steps, first_at, grown, kv_held, pop, push, rank_wait, record_gap, send_next, written
from .step_time import draft_s, target_s
from .steps import cell_of, ctx_cell, interpolate, nearest_ctx

MAX_STEPS = 2_000_000
DECODE_FIRST, PREFILL_FIRST, NO_EVICT, TURBOMIND = 0, 1, 2, 3  # schedulers.Policy, as the compiled loop reads it
COMPLETED, STOPPED = 0, 1  # how a run ended: every request done, or its p95 first token certainly late

_HASH_MASK = (1 << 60) - 1
_HASH_START = 14695981039346656037 & _HASH_MASK
ASKING: dict = {}  # handle -> the StepTimes a running loop asks for steps it has not seen


def ask_cell(handle: int, n: int, j: int) -> np.ndarray:
    return np.array(ASKING[handle].cell(n, j), dtype=np.float64)


def ask_mixed(handle: int, decoding: int, ctx: int, spec: np.ndarray) -> float:
    s = spec.tolist()
    chunks = tuple(zip(s[0::3], s[1::3], s[2::3], strict=True))
    return ASKING[handle].mixed_at((float(decoding), ctx, chunks))


@njit
def _known_decode_s(cells, n, ctx_mean):
    """``_decode_s`` where its cell is in the table already (nearly always), else NaN: the loop passes the step
    model's arrays only when a cell is new (passing them costs more than the look-up)."""
    key = (n, ctx_cell(ctx_mean))
    if key in cells:
        return interpolate(cells[key], n, ctx_mean)
    return np.nan


@njit
def _decode_s(handle, model, draft, cells, n, ctx_mean):
    """A decode step of ``n`` sequences at mean context ``ctx_mean`` (StepTimes.decode; a speculating replica's
    ``draft``: its steps included, steps.cell_of)."""
    j = ctx_cell(ctx_mean)
    key = (n, j)
    if key in cells:
        c = cells[key]
    elif len(model[0]):  # the compiled step model (step_time.py)
        c = cell_of(model, draft, n, j)
        cells[key] = c
    else:
        with objmode(got="float64[:]"):
            got = ask_cell(handle, n, j)
        c = (got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7])
        cells[key] = c
    return interpolate(c, n, ctx_mean)


@njit
def _mixed_s(handle, index, keys, times, decoding, ctx_mean, spec, count):
    """A step of ``decoding`` decodes at mean context ``ctx_mean`` and the prompt chunks ``spec[:3 count]``
    (cached, new, logits each) of a replica without a compiled step model: StepTimes.mixed, remembered (a compiled
    one's is worked out in the loop: nearly every such step is new)."""
    ctx = nearest_ctx(ctx_mean) if decoding else 0
    key = np.empty(2 + 3 * count, np.int64)
    key[0], key[1] = decoding, ctx
    key[2:] = spec[: 3 * count]
    h = _HASH_START  # FNV-1a over the key's integers, kept to 60 bits (numba's typed dict mishashes an int64
    for v in key:  # past 2^61; the low bits of a wrapped product are Python's: the same hash compiled or not)
        h = ((h ^ int(v)) * 1099511628211) & _HASH_MASK
    i = np.int64(-1)
    if h in index:
        i = index[h]
        old = keys[i]
        if len(old) == len(key) and np.all(old == key):
            return times[i]
    with objmode(t="float64"):
        t = ask_mixed(handle, decoding, ctx, key[2:].copy())
    if i < 0:  # (a hash that collides with another step's is asked again each time: exact, never confused)
        index[h] = len(keys)
        keys.append(key)
        times.append(t)
    return t


@njit_nogil
def run_loop(
    handle,
    policy,
    budget_max,
    seq_cap,
    kv_cap,
    closed,
    next_id,
    request_in_s,
    request_out_s,
    prompt,
    out,
    cached,
    new,
    sent,
    arrive,
    window_lo,
    window_hi,
    give_up,
    give_up_ttft_s,
    give_up_at,
    cells,
    index,
    keys,
    times,
    model,
    draft,
    width,
    per_step,
    ranks,
):
    """Run the step loop until every request has finished (simulate.simulate, whose arguments these unpack): the
    status (COMPLETED, or STOPPED once the p95 first-token time is certainly over ``give_up_ttft_s``), each
    request's admission, first-token and end times, the decode steps' gaps and their token counts, and the tally
    (steps, preemptions, the running sequences' peak and time integral). ``new`` and ``sent`` / ``arrive`` (a
    closed loop's next sends) are written in place. Speculative decoding (``draft`` not empty, speculative.py): each
    decode step verifies ``width`` = k + 1 tokens per sequence (its KV slots and token budget) and writes
    ``per_step`` tokens on average, so a sequence of ``rem`` tokens to go decodes for ``decode_steps(rem)`` steps
    and its context grows by ``per_step`` a step, and a step with prompt chunks adds the draft's pass over them;
    ``width`` 1 and ``per_step`` 1.0: plain decoding. ``ranks``: the busy attention data-parallel ranks whose steps
    this one's wait for (step_queues.rank_wait; 1: none)."""
    n = len(prompt)
    prefill_first, no_evict = policy == PREFILL_FIRST, policy == NO_EVICT or policy == TURBOMIND  # noqa: SIM109 (numba)
    # TurboMind (schedulers.py): whole prompts in passes of their own before the decodes, as SGLang's prefill batches,
    # without eviction, and each prompt's first token from the generation step after them (``pending``)
    turbomind = policy == TURBOMIND
    prompts_apart = prefill_first or turbomind
    pending, pend_n = np.empty(n, np.int64), 0
    done = np.zeros(n, np.int64)
    rem = out.copy()
    admitted, first, fin = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    joined_step, joined_ctx = np.zeros(n, np.int64), np.zeros(n, np.int64)
    decoding_now = np.zeros(n, np.bool_)
    kv_prompts = kv_offset = kv_dec = kv_steps = kv_reserved = 0
    joined_sum = 0  # the decoding sequences' joined_step, summed (their decode steps: kv_dec x kv_steps - this)
    speculating = per_step != 1.0
    tr_ratio, tr_end, tr_max, tr_run = INIT_NEW_TOKEN_RATIO, 0, 0, 0
    arr_t, arr_k, arr_n = np.empty(n), np.empty(n, np.int64), 0  # engine arrivals not yet seen (a heap)
    for k in range(next_id):
        push(arr_t, arr_k, arr_n, arrive[k], k)
        arr_n += 1
    waiting, w_head, w_n = np.empty(n, np.int64), 0, 0  # a ring
    prefilling, p_n = np.empty(n, np.int64), 0
    end_s, end_k, end_n = np.empty(n, np.int64), np.empty(n, np.int64), 0  # (decode step it ends at, id), a heap
    admission, a_n = np.empty(n, np.int64), 0
    ch_k, ch_c, spec = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(3 * n, np.int64)
    gaps, weights, g_n = np.empty(256), np.empty(256, np.int64), 0
    sync = np.zeros(3)  # this rank's steps, of them with prompt chunks, their seconds (rank_wait)
    now, finished, steps, preemptions, running_max, running_area, late = 0.0, 0, 0, 0, 0, 0.0, 0
    status = COMPLETED

    while finished < n:
        steps += 1
        if steps > MAX_STEPS:
            raise RuntimeError("serving simulation: too many steps (the load does not drain)")
        nxt = arr_t[0] if arr_n else np.inf
        if nxt <= now:
            while arr_n and arr_t[0] <= now:
                waiting[(w_head + w_n) % n] = pop(arr_t, arr_k, arr_n)
                arr_n -= 1
                w_n += 1
            nxt = arr_t[0] if arr_n else np.inf
        n_dec = kv_dec
        if n_dec == 0 and p_n == 0 and w_n == 0:
            now = max(now, nxt)
            continue
        held, preempted = kv_held(kv_prompts, kv_offset, kv_dec, kv_steps, joined_sum, per_step), False
        if not no_evict and n_dec > 1 and held + n_dec * width > kv_cap:  # no room for every decode's next tokens
            evicted = 0  # the last admitted go back to the front of the queue, to be recomputed
            while (
                kv_dec > 1
                and kv_held(kv_prompts, kv_offset, kv_dec, kv_steps, joined_sum, per_step) + kv_dec * width > kv_cap
            ):
                a_n -= 1
                k = admission[a_n]
                if not decoding_now[k]:
                    continue
                decoding_now[k] = False
                kv_offset -= joined_ctx[k] - joined_step[k]
                joined_sum -= joined_step[k]
                kv_dec -= 1
                if prefill_first:
                    tr_end = tr_end - (joined_step[k] + decode_steps(rem[k], per_step))
                    tr_max, tr_run = tr_max - out[k], tr_run - 1
                produced = written(kv_steps - joined_step[k], per_step)
                new[k] = max(1, joined_ctx[k] + produced - cached[k])
                rem[k] -= produced
                done[k] = 0
                w_head = (w_head - 1) % n
                waiting[w_head] = k
                w_n += 1
                evicted += 1
            preemptions += evicted
            n_dec, preempted = kv_dec, evicted > 0
            held = kv_held(kv_prompts, kv_offset, kv_dec, kv_steps, joined_sum, per_step)
            if preempted and prefill_first:
                tr_ratio = ratio_retracted(tr_end, tr_max, tr_run, kv_steps)
        # this step's prompt chunks: ids and tokens, and what the step model reads of each (cached, new, logits)
        budget = budget_max - (0 if prompts_apart else n_dec * width)
        kv_used = held + (0 if prompts_apart else n_dec * width)
        n_ch = 0
        for i in range(p_n):
            k = prefilling[i]
            c = min(new[k] - done[k], budget)
            if c <= 0:
                break
            ch_k[n_ch], ch_c[n_ch] = k, c
            spec[3 * n_ch], spec[3 * n_ch + 1] = cached[k] + done[k], c
            spec[3 * n_ch + 2] = 1 if done[k] + c >= new[k] else 0
            n_ch += 1
            budget -= c
            kv_used += c
        step_new = 0  # SGLang: the output tokens this step's admitted prompts reserve
        # vLLM V1 and SGLang admit no waiting prompt in a step that preempted (schedulers.py)
        while w_n and budget > 0 and n_dec + p_n < seq_cap and not preempted:
            k = waiting[w_head]
            need = new[k] - done[k]
            c = min(need, budget)
            if no_evict:
                if c < need and (n_ch or need <= budget_max - (0 if prompts_apart else n_dec)):
                    break  # whole prompts only, unless it could never fit a step
                if kv_reserved + prompt[k] + out[k] > kv_cap:
                    break
                kv_reserved += prompt[k] + out[k]
            elif kv_used + cached[k] + c > kv_cap or (
                prefill_first
                and not ratio_admits(
                    tr_ratio, tr_end, tr_max, tr_run, kv_cap - kv_used - cached[k], step_new, kv_steps, need, rem[k]
                )
            ):
                break
            if prefill_first:
                step_new += need - c + min(rem[k], CLIP_MAX_NEW_TOKENS)  # its chunk is in kv_used
            w_head, w_n = (w_head + 1) % n, w_n - 1
            prefilling[p_n] = k
            p_n += 1
            if math.isnan(admitted[k]):
                admitted[k] = now
            kv_prompts += cached[k]
            kv_used += cached[k] + c
            ch_k[n_ch], ch_c[n_ch] = k, c
            spec[3 * n_ch], spec[3 * n_ch + 1] = cached[k] + done[k], c
            spec[3 * n_ch + 2] = 1 if done[k] + c >= new[k] else 0
            n_ch += 1
            budget -= c
        decoding = 0 if (prompts_apart and n_ch) else n_dec
        ctx_mean = (kv_offset + n_dec * kv_steps) / n_dec if n_dec else 0.0
        if speculating and n_dec:  # what the decode steps wrote past one token each
            ctx_mean += (per_step - 1.0) * (n_dec * kv_steps - joined_sum) / n_dec
        running = n_dec + p_n
        if running > running_max:
            running_max = running
        q, waited, own = 0.0, 0.0, 0.0  # rank_wait's share and time, this rank's own decode step
        if n_ch and len(model[0]):  # the compiled step model's time (steps.StepModel.step_s)
            ctx = nearest_ctx(ctx_mean) if decoding else 0
            t = target_s(model, float(decoding), ctx, spec, n_ch)
            if width > 1 and decoding:
                t += draft_s(model, draft, float(decoding), ctx)
            if width > 1:  # the draft's pass over the prompt chunks (step_time.step_s)
                t += target_s(draft, 0.0, 0, spec, n_ch)
            k_steps = 1
        elif n_ch:
            t = _mixed_s(handle, index, keys, times, decoding, ctx_mean, spec, n_ch)
            k_steps = 1
        else:  # decodes alone (nothing was admitted: the cache holds ``held``) until one ends or arrives
            k_steps = max(1, end_s[0] - kv_steps) if end_n and not pend_n else 1
            t0 = _known_decode_s(cells, n_dec, ctx_mean)
            if math.isnan(t0):
                t0 = _decode_s(handle, model, draft, cells, n_dec, ctx_mean)
            if nxt < np.inf:
                k_steps = min(k_steps, max(1, int(math.ceil((nxt - now) / t0))))
            if not no_evict:
                k_steps = min(k_steps, max(1, (kv_cap - held) // (n_dec * width)))
            last = ctx_mean + (k_steps - 1) * per_step if speculating else ctx_mean + k_steps - 1
            t1 = _known_decode_s(cells, n_dec, last) if k_steps > 1 else t0
            if math.isnan(t1):
                t1 = _decode_s(handle, model, draft, cells, n_dec, last)
            t, q, own, waited = rank_wait(sync, ranks, k_steps * (t0 + t1) / 2, k_steps)
        sync[0], sync[1], sync[2] = sync[0] + k_steps, sync[1] + (1 if n_ch else 0), sync[2] + (t if n_ch else 0.0)
        running_area += running * t
        now += t
        if decoding and pend_n:  # the generation step after their prompts: their first tokens (TurboMind)
            t_first = now - t + t / k_steps
            late += first_at(pending, pend_n, first, t_first, sent, window_lo, window_hi, give_up, give_up_ttft_s)
            pend_n = 0
            if give_up and late >= give_up_at:
                status = STOPPED
                break
        if decoding:
            per = per_step if speculating else 1.0
            gaps, weights, g_n = record_gap(gaps, weights, g_n, t, k_steps, decoding, per, q, own, waited)
            kv_steps += k_steps
            if prefill_first:
                tr_ratio = ratio_decayed(tr_ratio, k_steps)
        for i in range(n_ch):  # prompts that this step finished produce their first token
            k = ch_k[i]
            done[k] += ch_c[i]
            kv_prompts += ch_c[i]
            if done[k] < new[k]:
                continue
            j = 0
            while prefilling[j] != k:
                j += 1
            prefilling[j : p_n - 1] = prefilling[j + 1 : p_n].copy()
            p_n -= 1
            kv_prompts -= cached[k] + new[k]
            if turbomind and math.isnan(first[k]):
                pending[pend_n] = k
                pend_n += 1
                rem[k] += 1  # its first token is the next decode step's, not this pass's
            elif math.isnan(first[k]):
                first[k] = now
                if give_up and window_lo <= k < window_hi and now - sent[k] > give_up_ttft_s:
                    late += 1
                    if late >= give_up_at:
                        status = STOPPED
                        break
            rem[k] -= 1
            if rem[k] <= 0:
                fin[k] = now
                finished += 1
                next_id, arr_n = send_next(
                    closed, next_id, n, now, request_in_s, request_out_s, sent, arrive, arr_t, arr_k, arr_n
                )
                if no_evict:
                    kv_reserved -= prompt[k] + out[k]
                continue
            joined_ctx[k], joined_step[k], decoding_now[k] = cached[k] + new[k], kv_steps, True
            kv_offset += joined_ctx[k] - kv_steps
            joined_sum += kv_steps
            kv_dec += 1
            if end_n == len(end_s):
                end_s, end_k = grown(end_s), grown(end_k)
            push(end_s, end_k, end_n, kv_steps + decode_steps(rem[k], per_step), k)
            end_n += 1
            if prefill_first:
                tr_end = tr_end + kv_steps + decode_steps(rem[k], per_step)
                tr_max, tr_run = tr_max + out[k], tr_run + 1
            if a_n == len(admission):
                admission = grown(admission)
            admission[a_n] = k
            a_n += 1
        if status == STOPPED:
            break
        while end_n and end_s[0] <= kv_steps:
            k = pop(end_s, end_k, end_n)
            end_n -= 1
            if not decoding_now[k] or joined_step[k] + decode_steps(rem[k], per_step) != kv_steps:
                continue  # preempted since (its entry is stale)
            decoding_now[k] = False
            kv_offset -= joined_ctx[k] - joined_step[k]
            joined_sum -= joined_step[k]
            kv_dec -= 1
            if prefill_first:
                tr_end = tr_end - (joined_step[k] + decode_steps(rem[k], per_step))
                tr_max, tr_run = tr_max - out[k], tr_run - 1
            if no_evict:
                kv_reserved -= prompt[k] + out[k]
            fin[k] = now
            finished += 1
            next_id, arr_n = send_next(
                closed, next_id, n, now, request_in_s, request_out_s, sent, arrive, arr_t, arr_k, arr_n
            )
    return (
        status,
        admitted,
        first,
        fin,
        gaps[:g_n].copy(),
        weights[:g_n].copy(),
        steps,
        preemptions,
        running_max,
        running_area,
    )
