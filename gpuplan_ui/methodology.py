"""Methodology's text: every formula with its source, units and assumptions, as the page shows it (pure: no
streamlit; the page lays these out between its tables, tables_reference.py builds the tables)."""

from __future__ import annotations

from gpuplan_core import FAST_NETWORK_GBIT_S, MULTI_NODE_EFFICIENCY, USE_CASE_SOURCES, MarketEstimate


def formulas() -> str:
    """Memory, speed, serving under traffic and cost: each formula with its source."""
    e_hi, e_lo = (eff for _, eff in MULTI_NODE_EFFICIENCY)
    return rf"""
gpuplan computes every number from the formulas below (in `gpuplan_core`; each file's docstring repeats them).
**Units:** bytes internally; **GB = 10^9 bytes, GiB = 2^30 bytes**, and every label says which. Time in seconds,
money in US dollars, compute in FLOPs with **dense** peaks only.

### Memory (`gpuplan_core/memory.py`, `model.py`)
- **Parameters** are counted from the architecture, output layer included (untied models store it separately):
  attention `h·a·d + 2·h·kv·d + a·d·h` (+ biases), gated MLP `3·h·I` (plain `2·h·I`), norms, embeddings;
  MoE counts every expert (total) or the routed top-k + shared experts + router (active); MLA counts its low-rank
  projections. Checked against published counts (Llama-3.1-8B: 8,030,261,248).
- **Weights** = parameters × bytes per weight, scale metadata included (table below).
- **KV cache** = 2 × layers × KV heads × head_dim × bytes × tokens × sequences. Grouped-query attention uses the KV
  heads, not the query heads; MLA (DeepSeek) caches one latent of `kv_lora_rank + qk_rope_head_dim` per layer;
  sliding-window layers hold at most the window. Tensor parallel splits KV heads, never below one per GPU.
- **Training model states**: two accountings that both exist in the wild. *ZeRO paper* (Rajbhandari et al. 2020):
  16 B/param = BF16 weights 2 + BF16 gradients 2 + FP32 master 4 + Adam momentum 4 + variance 4.
  *Hugging Face model-memory anatomy*: 18 B/param = weights 6 (BF16 + FP32 copy) + FP32 gradients 4 + Adam 8.
  ZeRO-1 shards optimizer states over data-parallel GPUs, ZeRO-2 also gradients, ZeRO-3 also weights.
  **ZeRO-3 buffers** (DeepSpeed's defaults, adjustable below): the largest layer's gathered weights and gradients
  (4 B/param, as DeepSpeed's `estimate_zero3_model_states_mem_needs` counts them; the embedding for most models),
  the prefetch bucket (`stage3_prefetch_bucket_size` 5e7 parameters) and the reduce bucket (`reduce_bucket_size`
  5e8 elements). **CPU offload** (DeepSpeed ZeRO-Offload): the optimizer states, master weights and gradients (at
  ZeRO-3 optionally the weights too) move to host RAM; each machine then needs their per-GPU share x its GPUs
  x 1.5 (the estimators' buffer factor); steps slow down, which the time and cost estimates do not include.
- **Activations** (Korthikanti et al. 2022, *Reducing Activation Recomputation*), per layer:
  `s·b·(attention 3h + 4·a·d + 4·kv·d + MLP 3h + 6I + norms 4h)` at 2-byte activations (for GPT-3's shape this is
  the paper's `34·s·b·h`), plus `5·a·s²·b` for attention scores unless FlashAttention; selective recompute drops that
  term, full recompute keeps `2·s·b·h`; each divided by tensor parallelism (sequence parallel); plus FP32 logits
  `s·b·V·4`.
- **Serving overheads** (measured in vLLM 0.19 on H100 by llm-d-planner): activation workspace of the profile step,
  CUDA-graph pool, CUDA context, NCCL buffers at tensor parallel ≥ 2, and the memory-utilization headroom.
- Every budget names its scope: *weights only*, *model states* (training) or *whole runtime*, and every
  component says whether it is **exact** (counted from the architecture, formats and shapes: weights, KV cache,
  gradients, optimizer states, logits) or **estimated** (a runtime's working memory: activations, CUDA graphs,
  CUDA context, NCCL buffers, allocator reserve).

### Speed (`gpuplan_core/perf.py`)
- **Prefill** processes the prompt: many tokens reuse each weight → high arithmetic intensity → compute-bound.
  **Decode** makes one token per sequence per step and rereads all weights plus every sequence's KV cache → low
  intensity → bandwidth-bound at small batch (seed 000). Batching shares the weight reads, not the KV reads.
- FLOPs: `2 × active matmul parameters × tokens` + causal attention `2·a·(d_qk + d_v)` per attended pair (the
  S² term halved by the causal mask); MoE counts the routed experts; decode reads the experts the batch touches.
- **Ridge point** = dense peak FLOP/s ÷ bandwidth. Time per op = max(FLOPs ÷ (peak × MFU), bytes ÷ (bandwidth ×
  MBU)), summed over the weight matmuls and attention, plus fixed overheads and tensor-parallel all-reduces
  (2 per layer). MFU and MBU grow with op size (curves from Vidur and NVIDIA aiconfigurator per-op data).
- **TTFT** = prefill time + overhead; **TPOT** is the mean decode step over the output, *exclusive* of the first
  token (the inclusive variant is shown beside it).
- **Engines without CUDA graphs** (plain transformers `generate()`): the host launches every layer's kernels
  while the GPU runs them, so a pass takes the longer of the GPU's time and layers x 0.7 ms (measured: 24.4 ms per
  token for Llama-3.1-8B on H100, where the host limits; 17.1 ms on an RTX 4090, where the GPU does).

### Serving under traffic (`gpuplan_core/serving.py`)
- One replica runs **engine steps** back to back (continuous batching, as vLLM, SGLang and TensorRT-LLM do): each
  step carries one new token for every running request past its prompt, plus prompt chunks up to the engine's
  token budget per step (chunked prefill, Sarathi-Serve). A step's time is the same per-op roofline as above, so
  one client gets exactly the single-request TTFT and TPOT. Engine limits are vLLM's defaults for its
  OpenAI-compatible server: 8,192 tokens per step and 1,024 requests in flight on GPUs with at least 70 GiB that
  are not A100s, 2,048 and 256 on the others; the KV cache may allow fewer.
- **TPOT** = 1 / (f / step with a prompt chunk + (1 - f) / decode-only step), f = the share of steps that carry
  someone else's prompt. **TTFT** = wait for the step under way + wait in the prompt queue + the request's own
  prompt steps. The prompt queue is an **M/D/1 queue** (Pollaczek-Khinchine mean wait, deterministic prompt work
  at fixed lengths) with an **exponential tail** for the median and p95 (exact for M/M/1; Kingman's heavy-traffic
  form): an approximation, named as such.
- **Loads**: a number of clients (closed loop: each sends its next request when the last ends; beyond the
  requests that fit, the rest wait for a slot) or a request rate (open loop, Poisson arrivals). Above what one
  replica serves, the app says "beyond capacity" instead of a latency.
- **Capacity** = the largest request rate with p95 TTFT and mean TPOT within the targets; **replicas** =
  ceil(peak rate / capacity), peak rate = requests per day / 86,400 x peak-to-average. The recommendation, the
  Cost page and serverless use it whenever a traffic estimate is given.
- **Serverless**: a worker batches like a replica; workers = rate / capacity; each worker's busy periods
  (M/G/inf, mean (exp(r x) - 1) / r), idle gaps billed up to the idle timeout, and a cold start only after a gap
  longer than the timeout (renewal-reward per cycle).
- How far to trust it: the calibration table on Performance compares it with 506 published serving points.

### Cost (`gpuplan_core/cost.py`, `plan.py`, `pricing.py`)
- **Always-on** = nodes × node price × 730 h/month: a running instance is billable while idle.
- **Per run** = nodes × node price × billed time; billed time = runtime rounded to the contract's increment, at least
  its minimum (AWS: per second, 60 s minimum; Azure: whole minutes, rounded down). Nodes are whole: 10 GPUs on
  8-GPU nodes pay for 16.
- **Serverless** bills worker start-up, execution and the idle timeout (RunPod, Modal rules).
- **Training** compute = 6 × parameters × tokens (+ attention) ÷ (dense peak × MFU); real budgets add failed runs
  and sweeps (industry estimates 30–50% of compute, seed 002).
- **The recommendation**: the least expensive configuration that fits the complete memory budget and meets the
  latency (p95 TTFT, mean TPOT) or completion-time target (seed 000). Pay for compute when arithmetic limits the
  job, for bandwidth when moving data limits token generation.
- **The search** (`search.py`): every GPU type x weights format (only the one chosen, unless "also consider FP8
  and INT4" is on) x layout x offer. Layouts: tensor parallel 1, 2, 4 or 8 inside one machine, and pipeline stages
  of 8 GPUs across machines only when no machine holds the model; a layout the user set is the only one tried. A
  layout fits when the complete budget at the scenario's batch fits each GPU (the same test as the Memory page,
  so no page shows a price beside "does not fit"). With traffic, replicas = ceil(peak rate / one replica's
  capacity within the targets).
- **What an offer can rent** (its columns `max_gpus_per_node`, `intra_node_link`, `inter_node_network`,
  `inter_node_gbit_s`, each with a source; "unknown" allowed): tensor parallel only within one machine, and above
  2 only over **NVLink** (PCIe or an unstated link: at most 2); pipeline stages and training across machines only
  over a **stated RDMA network (InfiniBand, RoCE or EFA) of at least {FAST_NETWORK_GBIT_S:,.0f} Gbit/s per node**
  (the A100-era HGX minimum: 4 x 100 Gbit/s; H100-era nodes have 3,200). Replicas on single-GPU rentals are
  independent servers (allowed); a training job is never spread over them. Across machines, training keeps
  {e_hi:.0%} of its MFU at 3,200 Gbit/s or more and {e_lo:.0%} at 400 (gradient all-reduces; assumptions).
- **Training picks** respect the GPU chosen (with "any GPU", the cheapest per GPU type) and fit at the chosen ZeRO
  stage or the lowest above it that fits (the pick says so). A GPU count above 1 is yours: the layout uses exactly
  that many (tensor x pipeline x data parallel), on as many machines as the offer's machines require; where it
  cannot run (memory, tensor parallel, no fast network between machines) the plan says why and prices the nearest
  count that runs. With the count left at 1, the smallest count that holds the job, grown in steps of the layout
  to meet a deadline.
- **The why-chain** on the home page: requests/day -> peak requests/s -> one replica's capacity -> replicas ->
  GPUs and machines -> GPUs x price per GPU-hour x hours = monthly cost (whole nodes where rented whole); for
  training: FLOPs -> GPUs (and how the count was chosen) -> GPU-hours at MFU -> wall time -> machines -> GPUs x
  price -> cost with failed runs.
- **The Pareto front**: the configurations no other beats on both monthly cost and p95 TTFT.
- **Deployment export**: `vllm serve` with `--tensor-parallel-size`, `--pipeline-parallel-size`, `--max-model-len`
  (input + output), `--gpu-memory-utilization`, `--kv-cache-dtype`, `--quantization fp8` for FP8 weights from a
  16-bit checkpoint (AWQ/GPTQ and NVFP4 need a quantised checkpoint); a SkyPilot task with `accelerators:
  GPU:count`, `num_nodes` and that command.
"""


ENGINES = (
    "### Serving engines\nThe memory budget's runtime terms follow the engine chosen under Assumptions (the "
    "`memory` JSON names it as `engine`). A quantised weights format applies to the decoder's linear layers: GPTQ, "
    "AWQ, FP8, NVFP4 and bitsandbytes keep the embeddings, the LM head and the norms in 16 bit (only the ideal "
    "packed 4-bit lower bound applies to every parameter); a Hugging Face config's `quantization_config` sets the "
    "checkpoint's format. A decode step streams every weight except the input embedding table, of which it gathers "
    "one row per sequence."
)

TRUST = (
    "### How far to trust each number\n"
    "Every predicted time and throughput in the app carries the error of its **regime**: the GPU generation, the "
    "weights format family and the phase (prefill, decode, throughput of 16 or more sequences), with MoE models "
    "and engines without CUDA graphs apart. The band is the median absolute error of the published measurements "
    "in that regime (`data/measurements.csv`, each with its source, engine version and setup); where a regime has "
    "none, the number is a roofline estimate and says so. Serving under traffic has its own table on Performance. "
    "Bias: + where the model has been optimistic (faster than measured)."
)

EFFICIENCY = (
    "Weight-read efficiency per GPU generation and format family, where measurements pin it (elsewhere the defaults "
    "below apply by width: 8-bit 0.7 on HBM, 4-bit 0.45): `data/efficiency.csv`."
)

DEFAULTS_AND_INPUTS = """
### Defaults per job
- **Inference**: a chat request of 2,000 input + 300 output tokens, batch 8, BF16 weights and KV cache, vLLM's
  defaults, targets p95 time to first token 2 s and time per output token 100 ms (the chat preset).
- **Fine-tuning**: 100 million tokens (about 50,000 examples of 1,000 tokens, twice); QLoRA's frozen base is NF4
  with double quantisation whatever the weights input says, and the app labels it so.
- **Pre-training**: 100 billion tokens (Chinchilla's 20 per parameter is shown when no count is given), MFU 0.40.
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
- GPU specs: NVIDIA and AMD datasheets via aiconfigurator system files, llm-analysis configs, the seed table
  (per-row sources on the Data page). Prices: SkyPilot catalog snapshots, provider pages and docs (per-row source
  and date on the Data page).
"""


def use_case_sources() -> str:
    return "\n".join(f"- {line}" for line in USE_CASE_SOURCES)


def market_estimates() -> str:
    return "\n".join(f"- {est.label}" for est in MarketEstimate.all())
