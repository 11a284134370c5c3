"""How each serving engine schedules a step, and what a request costs outside the GPU: the simulation's
per-engine defaults (simulate.py), each with the version and file it comes from.

- ``decode_first``: vLLM V1 (vllm/v1/core/sched/scheduler.py, 0.8-0.11): every running sequence first (decodes,
  then the rest of partly prefilled prompts), then waiting prompts in arrival order while the step's token budget
  (``max_num_batched_tokens``) and the KV blocks allow; chunked prefill on; when a running sequence finds no free
  block, the last-admitted one is preempted and recomputed later.
- ``prefill_first``: SGLang (python/sglang/srt/managers/scheduler.py, 0.4-0.5, ``get_next_batch_to_run``): when
  prompts wait and fit, the step is a prefill batch of them (``chunked_prefill_size`` tokens; decodes wait);
  otherwise a decode step of every running sequence. ``--enable-mixed-chunk`` is off by default.
- ``no_evict``: TensorRT-LLM in-flight batching with ``GUARANTEED_NO_EVICT`` (the default CapacitySchedulerPolicy):
  a request starts only when the KV cache can hold its whole prompt and every output token, so nothing is
  preempted; generation requests and whole prompts share a step (``enable_chunked_prefill`` is off by default; a
  prompt longer than the budget is chunked, as the engine would refuse it otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Policy = Literal["decode_first", "prefill_first", "no_evict"]


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


# request_in_s: fitted on the training runs only (bench/fit_serving.py, serving_loso.fit_request_costs: measured -
# predicted TTFT with the costs set to zero, at light load (a closed loop of at most 4 clients or at most 2
# requests/s), prompts of at most 1,024 tokens, runs whose time per token is predicted within 25%; the median per
# source, then over sources): vLLM on 12 rows and SGLang on 15 (gpustack-q3-8b-h100), TensorRT-LLM on 8 (lmdeploy,
# trt014on). They absorb the benchmark clients' HTTP and streaming costs as well as the engines' front ends.
# Held-out median TTFT error of online dense serving with them: 24%.
# request_out_s (detokenisation and the response) is not separable in the published points: 2 ms, stated.
LOOPS: dict[str, EngineLoop] = {
    e.name: e
    for e in (
        EngineLoop(
            "vllm",
            "decode_first",
            0.0486,
            0.002,
            "vLLM V1 scheduler (0.8-0.11); API server and tokenizer process in front of the engine core",
        ),
        EngineLoop(
            "sglang",
            "prefill_first",
            0.0273,
            0.002,
            "SGLang scheduler (0.4-0.5): prefill batches before decode; tokenizer manager process",
        ),
        EngineLoop(
            "trtllm",
            "no_evict",
            0.0094,
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


def engine_loop(engine: str, request_in_s: float | None = None) -> EngineLoop:
    """The scheduling policy and per-request costs of an engine (vLLM's for an unknown one); ``request_in_s``: a
    deployment's own fixed request cost in place of the engine's (a calibrated profile)."""
    loop = LOOPS.get(engine, LOOPS["vllm"])
    return loop if request_in_s is None else replace(loop, request_in_s=request_in_s)
