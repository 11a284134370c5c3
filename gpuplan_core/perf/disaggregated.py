"""Disaggregated prefill/decode serving (P/D): x prefill workers that only prefill, y decode workers that only
decode, each prompt's KV cache moved from its prefill worker to a decode worker over the link between them.

The model, one quantity at a time (plan/disaggregated.py sizes and prices it):

    prefill worker  a replica of its layout that serves each request's prompt and first token only: the step loop
                    (simulate.py) run on the same replica with one output token (plan/disaggregated.py
                    ``prefill_question``), so its first
                    token's p95 is the queue for the worker + the engine's fixed cost + the prompt's prefill steps,
                    as the engine batches prompts up to its token budget (DistServe, Zhong et al., OSDI 2024, sec. 3:
                    a prefill instance is a queue of prefill-only batches; Dynamo's disaggregated serving: "prefill
                    engine computes prefill phase and generates KV cache")
    KV transfer     bytes = prompt tokens x KV bytes per token (every layer at full attention, in the KV format:
                    model.arch.kv_bytes_per_token, all ranks together); seconds = bytes / the link's bandwidth
                    (``kv_transfer_s``). The transfer does not hold the prefill worker (Dynamo: NIXL moves the KV
                    from GPU memory to GPU memory and is non-blocking), so it adds to the first token's time only.
                    No fixed cost per transfer is counted (a handshake of tens of microseconds, below these figures'
                    resolution), and the link's load is not checked against the peak's bytes per second
    first token     TTFT = the prefill worker's p95 first token + the KV transfer (DistServe counts the transfer
                    before decoding starts; vLLM's disaggregated prefill example sends the prefill request with
                    max_tokens=1, the decode instance then streams the rest)
    decode worker   only decode steps, never a prompt chunk beside them (no prefill interference: DistServe sec. 2,
                    Splitwise, Patel et al., ISCA 2024): a batch of b sequences at the mean decode context
                    (input + output / 2 tokens: attention is linear in the context, so the mean gives the sum, as
                    steps.py's grid assumes) takes the step model's decode step t(b) (steps.StepModel.decode_s,
                    the engine one quantity has), which is its TPOT. b is the most that both fit the KV cache and
                    the engine's sequence cap and meet the TPOT target (``decode_worker``).
    decode capacity requests per second = b / (n x t(b)) with n = the decode steps a request takes after its first
                    token, output tokens - 1 (Little's law: each request holds a slot for those steps; the prefill
                    worker made the first). At a load below it the batch is the fixed point b = load x n x t(b)
                    (``decode_tpot_at``). A request's wait for a free decode slot is not counted (the pool is sized
                    so the mean batch fits), as Dynamo's SLA planner sizes its decode pool from the step time at the
                    batch its profile gives.
    speculating     a decode worker whose replica speculates (speculative.py) runs the step loop's steps: t(b) is the
                    verify step with the draft's k steps (StepModel.decode_s), each writing E = 1 + a + ... + a^k
                    tokens a sequence, so n = ceil((output - 1) / E) (step_queues.decode_steps) and TPOT = t(b) / E
                    (the static view's, predict.py); the prompt's KV sent over includes the draft's.

One GPU type and one layout per pool (tensor parallel within a machine, no pipeline stages, no expert parallel);
the pools may differ in tensor parallel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware.catalog import GPU
from ..model.arch import ModelArch, kv_bytes_per_token
from ..model.formats import get_format
from .efficiency import PerfAssumptions
from .replica import Replica
from .steps import step_model

FIXED_POINT_STEPS = 30  # iterations of the decode batch's fixed point (converges from above; 1e-6 well within)


def kv_transfer_bytes(m: ModelArch, kv_format: str, prompt_tokens: int, draft: ModelArch | None = None) -> float:
    """The KV cache of one prompt, every rank's share together: prompt tokens x KV bytes per token (2 x layers x KV
    heads x head dim x bytes per value; MLA: layers x (latent + rope dims) x bytes), and a speculating replica's
    ``draft``'s beside it."""
    per_value = get_format(kv_format).bytes_per_value
    sent = prompt_tokens * kv_bytes_per_token(m, per_value)
    return sent if draft is None else sent + prompt_tokens * kv_bytes_per_token(draft, per_value)


def peer_bytes_per_s(gpu: GPU, ranks: int, pa: PerfAssumptions, scale_up: bool = True) -> float:
    """What ``ranks`` pairs of GPUs in one machine move at once from the prefill worker to the decode worker: each
    rank its share over its own peer link (GPU.peer_link: NVLink's per-direction bandwidth x ``link_efficiency``;
    PCIe's, or ``pcie_link_gb_s`` where the catalog states none, x ``pcie_efficiency``), the comm.py rule.
    ``scale_up`` False: the machine joins its GPUs over PCIe whatever the GPU could (the offer says so)."""
    kind, link = gpu.peer_link(2)
    if kind == "pcie" or not scale_up:
        link = link if kind == "pcie" else None
        return ranks * (link or pa.pcie_link_gb_s * 1e9) * pa.pcie_efficiency
    return ranks * link * pa.link_efficiency


def network_bytes_per_s(node_gbit_s: float, node_gpus: int, ranks: int) -> float:
    """What ``ranks`` GPUs of a machine move over the machine's network of ``node_gbit_s`` shared by its
    ``node_gpus`` GPUs (a NIC per GPU on HGX machines: 8 x 400 Gbit/s), at the stated line rate (RDMA reaches most
    of it; an upper bound)."""
    return node_gbit_s * 1e9 / 8 / max(1, node_gpus) * min(ranks, max(1, node_gpus))


def kv_transfer_s(transfer_bytes: float, link_bytes_per_s: float) -> float:
    """Seconds to move one prompt's KV cache: its bytes over the link's bandwidth (no fixed cost: the docstring)."""
    return transfer_bytes / link_bytes_per_s


def decode_context(input_tokens: int, output_tokens: int) -> int:
    """The mean context of a request's decode steps: input + output / 2 tokens (rounded down)."""
    return input_tokens + output_tokens // 2


@dataclass(frozen=True)
class DecodeWorker:
    """A decode-only worker at the TPOT target (the module docstring): ``batch`` sequences decode at once, each step
    ``step_s`` (the TPOT at that batch), so it serves ``capacity_per_s`` requests a second."""

    batch: int
    step_s: float
    capacity_per_s: float
    context_tokens: int  # the mean decode context the steps are timed at
    tokens_per_step: float = 1.0  # output tokens a step writes a sequence (speculating: E = 1 + a + ... + a^k)

    @property
    def tpot_s(self) -> float:
        """Time per output token at the full batch: the step over the tokens it writes a sequence."""
        return self.step_s / self.tokens_per_step

    @property
    def tokens_per_s(self) -> float:
        """Output tokens a second at the full batch."""
        return self.batch * self.tokens_per_step / self.step_s


def decode_steps_after_first(r: Replica) -> int:
    """Decode steps a request takes after its first token: output - 1, or ceil((output - 1) / E) speculating
    (step_queues.decode_steps: the step loop's count)."""
    tokens, per_step = r.output_tokens - 1, step_model(r.m, r.gpu, r.wl, r.pa, r.engine).per_step
    return tokens if per_step == 1.0 else math.ceil(tokens / per_step)


def decode_step_s(r: Replica, batch: float) -> float:
    """One decode-only step of ``batch`` sequences at the mean decode context, in seconds: the step model's
    (steps.StepModel.decode_s) x the deployment's decode-time factor (1 unless calibrated)."""
    sm = step_model(r.m, r.gpu, r.wl, r.pa, r.engine)
    return sm.decode_s(batch, decode_context(r.input_tokens, r.output_tokens)) * r.decode_time_factor


def decode_worker(r: Replica, tpot_target_s: float | None) -> DecodeWorker | None:
    """The decode worker of this replica's layout: the largest batch (at most the KV cache's and the engine's
    ``max_running``) whose time per token (the step / E: 1 without speculation) meets the TPOT target, found by
    bisection (the step grows with the batch); None where one sequence alone misses it, or the request has no token
    after its first."""
    most, tokens = r.max_running, decode_steps_after_first(r)
    if most < 1 or tokens < 1:
        return None
    ctx = decode_context(r.input_tokens, r.output_tokens)
    per_step = step_model(r.m, r.gpu, r.wl, r.pa, r.engine).per_step
    speculating = per_step != 1.0

    def step(b: int) -> float:  # compared with the TPOT target: a speculating step over the tokens it writes
        return decode_step_s(r, b) / per_step if speculating else decode_step_s(r, b)

    if tpot_target_s is not None and step(1) > tpot_target_s:
        return None
    lo, hi = 1, most
    if tpot_target_s is None or step(most) <= tpot_target_s:
        lo = most
    while hi > lo:  # the largest b with step(b) <= target
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if step(mid) <= tpot_target_s else (lo, mid - 1)
    t = decode_step_s(r, lo)
    return DecodeWorker(lo, t, lo / (tokens * t), ctx, per_step)


def decode_tpot_at(r: Replica, w: DecodeWorker, requests_per_s: float) -> float:
    """The TPOT of a decode worker at ``requests_per_s`` (at most its capacity): the step at the batch that load
    keeps running, the fixed point b = rate x n x t(b) (n: ``decode_steps_after_first``), iterated from the worker's
    full batch, over the tokens a step writes (1, or E speculating)."""
    if requests_per_s >= w.capacity_per_s:
        return w.tpot_s
    b, tokens = float(w.batch), decode_steps_after_first(r)
    for _ in range(FIXED_POINT_STEPS):
        b = max(1.0, requests_per_s * tokens * decode_step_s(r, b))
    t = decode_step_s(r, b)
    return t if w.tokens_per_step == 1.0 else t / w.tokens_per_step
