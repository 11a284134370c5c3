"""Methodology's reference text: the defaults per job, how inputs and links work, the use cases' and the market
estimates' sources, and every source the app draws on (pure: no streamlit; methodology.py has the formulas)."""

from __future__ import annotations

from gpuplan_core import USE_CASE_SOURCES, MarketEstimate

DEFAULTS_AND_INPUTS = """
### Defaults per job
- **Inference**: a chat request of 2,000 input + 300 output tokens, batch 8, BF16 weights and KV cache, vLLM's
  defaults, targets p95 time to first token 2 s and time per output token 100 ms (the chat preset).
- **Fine-tuning**: 100 million tokens (about 50,000 examples of 1,000 tokens, twice); QLoRA's frozen base is NF4
  with double quantisation whatever the weights input says, and the app labels it so.
- **Pre-training**: 100 billion tokens (Chinchilla's 20 per parameter is shown when no count is given), mixed
  precision, a 4M-token global batch, MFU predicted; activation recompute (none, selective or full) searched with the
  ZeRO stage, layout and micro-batch (`recompute=auto`). **Fine-tuning**'s recipe: pure BF16 AdamW (torchtune), LoRA
  rank 16 on all linear layers with dropout 0.05 (PEFT), recompute searched the same way, one micro-batch a step.
- **Training or fine-tuning bill** (Cost page, serving jobs): none unless you give one; only then does the lifetime
  chart draw it against the months of serving.

### Inputs and links
Every input below is one record in `gpuplan_core/inputs.py`; the sidebar, the link, the scenario file and the
command line are built from it. **A link** is a page's path plus every input that differs from its default,
written as the widget shows it: `/Memory?model=Llama-3.1-70B&in=7936&out=256&weights=FP8+(E4M3)`. A value that
is not allowed is taken out of the address with a note naming the input and what is allowed. **The request**
is input tokens + output tokens: a request's context (what its KV cache holds at the last token) is their
sum; the memory views' "max context" is the longest such context that still fits. Training uses the sequence
length instead.
"""

SOURCES = """
### Sources
- Seed 000: *Choosing GPUs for LLM work* (hardware families table, memory arithmetic, billing rules, the
  recommendation rule, analyst estimates). Seed 002: training vs inference cost (failed runs 30–50%, lifetime).
- Rajbhandari et al., *ZeRO* (2020); Hugging Face *Model memory anatomy*; Korthikanti et al., *Reducing Activation
  Recomputation in Large Transformer Models* (2022); Leviathan et al., *Fast Inference from Transformers via
  Speculative Decoding* (2023); Dettmers et al., *QLoRA* (2023).
- vLLM KV-cache sizing and the llm-d-planner accuracy report (vLLM 0.19, H100); Microsoft Vidur and NVIDIA
  aiconfigurator per-op profiles; jax-ml *Scaling Book*; TensorRT-LLM and FasterTransformer published benchmarks.
- Training measurements (each row's source, framework version and setup in `data/training_*_measurements.csv`):
  peak memory from pytorch/torchtune's README tables, Lightning-AI/litgpt and lit-gpt resource tables,
  pytorch/torchtitan benchmarks and pytorch/ao training benchmarks; throughput from mosaicml/llm-foundry's
  benchmarking tables, NVIDIA/Megatron-LM's README and Narayanan et al. (2021), NVIDIA NeMo and Megatron-Bridge
  performance summaries, torchtitan's benchmarks and the Llama 3 paper (Table 4); the recipes' defaults from their
  config files (torchtune YAML, torchtitan TOML, litgpt config hub).
- GPU specs: NVIDIA and AMD datasheets via aiconfigurator system files, llm-analysis configs, the seed table
  (per-row sources on the Data page). Prices: SkyPilot catalog snapshots, provider pages and docs (per-row source
  and date on the Data page).
"""


def use_case_sources() -> str:
    return "\n".join(f"- {line}" for line in USE_CASE_SOURCES)


def market_estimates() -> str:
    return "\n".join(f"- {est.label}" for est in MarketEstimate.all())
