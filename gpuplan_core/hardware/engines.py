"""Serving engines: the runtime terms of the memory budget, from each engine's documented defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Engine = Literal["vllm", "sglang", "trtllm", "transformers"]


@dataclass(frozen=True)
class EngineProfile:
    """The runtime terms of a serving engine's memory budget, from its documented defaults."""

    name: str
    label: str
    cuda_graphs: bool  # a CUDA-graph pool (Assumptions.cuda_graph_bytes)
    prefill_chunk_tokens: int | None  # tokens per step of chunked prefill; None: the whole prompt x batch at once
    logits_sequences: int | None  # sequences whose fp32 logits the peak holds; None: the batch
    kv_block_tokens: int  # KV cache allocated in blocks of this many tokens (1: per token)
    source: str


ENGINES: dict[str, EngineProfile] = {
    e.name: e
    for e in (
        EngineProfile(
            "vllm", "vLLM (V1, defaults)", True, 8192, 256, 16,
            "vLLM engine args: max_num_batched_tokens 8,192 on >= 70 GiB GPUs (EngineArgs.get_batch_defaults), the "
            "profile run's 256 sampled sequences, block_size 16, CUDA graphs on; measured overheads from the "
            "llm-d-planner accuracy report (vLLM 0.19, H100)",
        ),
        EngineProfile(
            "sglang", "SGLang", True, 8192, 160, 1,
            "SGLang server_args: chunked_prefill_size 8,192 on 35-160 GB GPUs (2,048 below, 16,384 above), "
            "cuda_graph_max_bs 160, page_size 1 (token-level KV), CUDA graphs on",
        ),
        EngineProfile(
            "trtllm", "TensorRT-LLM", True, 8192, 2048, 32,
            "TensorRT-LLM LLM API: max_num_tokens 8,192, max_batch_size 2,048, KvCacheConfig.tokens_per_block 32, "
            "CUDA graphs in the PyTorch backend",
        ),
        EngineProfile(
            "transformers", "Hugging Face transformers generate()", False, None, None, 1,
            "transformers generate(): no CUDA graphs, the whole prompt of every sequence in one forward pass, logits "
            "of the last token only (logits_to_keep, transformers >= 4.45), a KV cache that grows token by token",
        ),
    )
}  # fmt: skip
