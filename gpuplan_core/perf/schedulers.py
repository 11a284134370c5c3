"""How each serving engine schedules a step, and what a request costs outside the GPU: the simulation's
per-engine defaults (simulate.py), each with the version and file it comes from.

- ``decode_first``: vLLM V1 (vllm/v1/core/sched/scheduler.py, 0.8-0.11): every running sequence first (decodes,
  then the rest of partly prefilled prompts), then waiting prompts in arrival order while the step's token budget
  (``max_num_batched_tokens``) and the KV blocks allow; chunked prefill on; when a running sequence finds no free
  block, the last-admitted one is preempted and recomputed later.
- ``prefill_first``: SGLang (python/sglang/srt/managers/scheduler.py, 0.4-0.5, ``get_next_batch_to_run``): when
  prompts wait and fit, the step is a prefill batch of them (``chunked_prefill_size`` tokens; decodes wait);
  otherwise a decode step of every running sequence. ``--enable-mixed-chunk`` is off by default. A prompt fits
  only beside what the running sequences are still expected to write (``TokenRatio``: schedule_policy.py
  ``PrefillAdder``), so SGLang queues under KV pressure and retracts a decoding sequence rarely.
- ``no_evict``: TensorRT-LLM in-flight batching with ``GUARANTEED_NO_EVICT`` (the default CapacitySchedulerPolicy):
  a request starts only when the KV cache can hold its whole prompt and every output token, so nothing is
  preempted; generation requests and whole prompts share a step (``enable_chunked_prefill`` is off by default; a
  prompt longer than the budget is chunked, as the engine would refuse it otherwise).
- ``turbomind``: LMDeploy's TurboMind as of v0.1 (src/turbomind/models/llama/LlamaBatch.cc ``contextDecode``): the
  newly admitted requests' prompts are read in context passes of their own (sub-batches of at most
  ``max_context_token_num`` tokens, 4 x session_len by default: LlamaTritonModel multiplies a value at most
  max_batch_size by session_len) before the next generation step, every prompt but its last token ("subtract
  input/context len by 1 to skip last input token (will process with decoder later)"), so a prompt's first token
  comes from the generation step after all of those passes; no eviction (no_evict's admission). LMDeploy's
  published runs are simulated with it (serving_rows.policy_of); the app offers no LMDeploy engine.

vLLM V1 admits no waiting prompt in a step that preempted a running sequence (scheduler.py ``schedule``: "if not
preempted_reqs"), so a preempted sequence is not re-read into the cache it was just evicted from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..common.jit import njit
from ..hardware.engines import release

Policy = Literal["decode_first", "prefill_first", "no_evict", "turbomind"]


@dataclass(frozen=True)
class EngineLoop:
    """One engine's scheduling policy and its fixed per-request costs (seconds).

    ``request_overhead_s`` is the time between the client sending a request and the engine scheduling it, plus the
    time from the last token to the client (HTTP, tokenisation, detokenisation, the scheduler's interval): the
    first token's wait includes ``request_in_s``; a closed-loop client sends its next request ``request_out_s``
    after the last token."""

    name: str
    policy: Policy
    request_in_s: float
    request_out_s: float
    source: str


# request_in_s is the ENGINE's own cost before a request is scheduled (API server, tokenizer, the scheduler's
# interval): no engine publishes it per request or per token, so it is 0.0 here, stated. What the published runs
# show beyond the GPU's time (bench/fit_serving.py --gaps: 3.6 ms under AIPerf to NIM, 2 ms under Triton's client,
# 27-49 ms under `vllm bench serve` over the chat endpoint, 70-110 ms under SGLang's bench_serving) is the benchmark
# CLIENT's, named per client in clients.py BENCH_CLIENTS and applied only to that client's runs; the app's own
# answer adds none. It is not one engine's: TensorRT-LLM's runs show 3.6 ms (NIM, AIPerf), 7 ms (Triton) and 34 ms
# (trtllm-serve over the chat endpoint), so a cost fitted per engine across clients misses each by 2-10x.
# request_out_s (detokenisation and the response) is not separable in the published points: 2 ms, stated.
LOOPS: dict[str, EngineLoop] = {
    e.name: e
    for e in (
        EngineLoop(
            "vllm",
            "decode_first",
            0.0,
            0.002,
            "vLLM V1 scheduler (0.8-0.11); API server and tokenizer process in front of the engine core",
        ),
        EngineLoop(
            "sglang",
            "prefill_first",
            0.0,
            0.002,
            "SGLang scheduler (0.4-0.5): prefill batches before decode; tokenizer manager process",
        ),
        EngineLoop(
            "trtllm",
            "no_evict",
            0.0,
            0.002,
            "TensorRT-LLM in-flight batching, GUARANTEED_NO_EVICT (0.14-1.0); Triton or trtllm-serve front end",
        ),
        EngineLoop(
            "transformers",
            "decode_first",
            0.0,
            0.0,
            "transformers generate() has no scheduler: served figures assume vLLM's",
        ),
    )
}


# SGLang's estimate of what running requests will still write (python/sglang/global_config.py 0.4,
# srt/environ.py 0.5: SGLANG_INIT_NEW_TOKEN_RATIO 0.7, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
# SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600, SGLANG_RETRACT_DECODE_STEPS 20, SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION 4096;
# schedule_conservativeness 1.0)
INIT_NEW_TOKEN_RATIO = 0.7
MIN_NEW_TOKEN_RATIO = INIT_NEW_TOKEN_RATIO * 0.14
NEW_TOKEN_RATIO_DECAY = (INIT_NEW_TOKEN_RATIO - MIN_NEW_TOKEN_RATIO) / 600  # per decode step
RETRACT_DECODE_STEPS = 20
CLIP_MAX_NEW_TOKENS = 4096


@njit
def ratio_decayed(ratio: float, steps: int) -> float:
    """The token ratio after ``steps`` decode steps."""
    return max(MIN_NEW_TOKEN_RATIO, ratio - NEW_TOKEN_RATIO_DECAY * steps)


@njit
def ratio_retracted(end_steps: int, max_new: int, running: int, step: int) -> float:
    """The token ratio after a retraction at decode step ``step`` (``TokenRatio``'s sums)."""
    written = max_new - (end_steps - running * step)
    return min(1.0, (written + RETRACT_DECODE_STEPS * running) / (max_new + 1))


@njit
def ratio_admits(
    ratio: float,
    end_steps: int,
    max_new: int,
    running: int,
    free_tokens: float,
    reserved: int,
    step: int,
    prompt_tokens: int,
    prompt_max_new: int,
) -> bool:
    """``TokenRatio.admits`` on its state (the compiled step loop holds it as numbers)."""
    if running == 0 and reserved == 0:
        return True
    room = free_tokens - reserved - ratio * min(end_steps - running * step, CLIP_MAX_NEW_TOKENS * running)
    return prompt_tokens + min(prompt_max_new, CLIP_MAX_NEW_TOKENS) < room


@dataclass
class TokenRatio:
    """SGLang's admission under KV pressure (schedule_policy.py ``PrefillAdder``): a waiting prompt is admitted
    only when its tokens plus its (clipped) ``max_new_tokens`` fit in the free cache less ``ratio`` x the output
    tokens the running requests have still to write, less what the prompts admitted in the same step reserve.
    ``ratio`` starts at 0.7 and falls by a 600th of (0.7 - 0.098) per decode step to 0.098; a retraction (a
    decoding request evicted because the cache is full) sets it to (tokens decoded + 20 per running request) /
    (their max_new_tokens + 1), at most 1.

    The running requests are held as sums: ``end_steps`` (the decode step at which each ends), ``max_new`` (each
    one's output tokens, as a benchmark client sends them: ``max_new_tokens`` with ``ignore_eos``) and ``running``.
    """

    ratio: float = INIT_NEW_TOKEN_RATIO
    end_steps: int = 0
    max_new: int = 0
    running: int = 0

    def join(self, end_step: int, max_new: int) -> None:
        self.end_steps += end_step
        self.max_new += max_new
        self.running += 1

    def leave(self, end_step: int, max_new: int) -> None:
        self.end_steps -= end_step
        self.max_new -= max_new
        self.running -= 1

    def to_write(self, step: int) -> int:
        """Output tokens the running requests have still to write at decode step ``step``."""
        return self.end_steps - self.running * step

    def decoded(self, steps: int) -> None:
        self.ratio = ratio_decayed(self.ratio, steps)

    def retracted(self, step: int) -> None:
        self.ratio = ratio_retracted(self.end_steps, self.max_new, self.running, step)

    def admits(self, free_tokens: float, reserved: int, step: int, prompt_tokens: int, max_new: int) -> bool:
        """Whether a prompt of ``prompt_tokens`` still to read with ``max_new`` output tokens fits the cache's
        ``free_tokens`` less the ``reserved`` tokens of the prompts admitted in the same step. The first prompt of
        a step with nothing running goes in whenever the cache holds it (a request longer than the estimate allows
        would otherwise never start)."""
        return ratio_admits(
            self.ratio, self.end_steps, self.max_new, self.running, free_tokens, reserved, step, prompt_tokens, max_new
        )


def engine_loop(
    engine: str, request_in_s: float | None = None, version: str | None = None, max_context_tokens: int = 131_072
) -> EngineLoop:
    """The scheduling policy and per-request costs of an engine (vLLM's for an unknown one); ``request_in_s``: a
    deployment's own fixed request cost in place of the engine's (a calibrated profile); ``version``: the engine's
    release line (hardware/engines.py RELEASES; None: its latest), whose policy for a model of
    ``max_context_tokens`` it schedules by (vLLM 0.6 without chunked prefill: whole prompts first, as SGLang's
    prefill batches)."""
    loop = LOOPS.get(engine, LOOPS["vllm"])
    rel = release(engine, version)
    if rel is not None:
        policy, _ = rel.scheduling(max_context_tokens)
        if policy != loop.policy:
            loop = replace(loop, policy=policy, source=f"{loop.source}; as {rel.label}")
    return loop if request_in_s is None else replace(loop, request_in_s=request_in_s)
