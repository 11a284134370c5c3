"""Methodology's text: every formula with its source, units and assumptions, as the page shows it (pure: no
streamlit; the page lays these out between its tables, tables_reference.py builds the tables)."""

from __future__ import annotations

from gpuplan_core import (
    BENCH_CLIENTS,
    ENGINE_LOOPS,
    FAST_NETWORK_GBIT_S,
    KV_STARTUP_TEXT,
    Assumptions,
    training_accuracy,
)
from gpuplan_ui.methodology_energy import energy_text

POLICY_WORDS = {
    "decode_first": "running requests first, then waiting prompts in pieces (chunked prefill)",
    "prefill_first": "waiting prompts first, in a step of their own, decodes wait",
    "no_evict": "a request starts only when the cache holds all its tokens; whole prompts",
}


def _serving() -> str:
    engines = "; ".join(f"{k} ({POLICY_WORDS[v.policy]})" for k, v in ENGINE_LOOPS.items() if k != "transformers")
    costs = "; ".join(
        f"`{c.name}` " + ", ".join(f"{e} {s * 1e3:,.1f} ms" for e, s in c.request_in_s)
        for c in BENCH_CLIENTS.values()
        if c.request_in_s
    )
    fronts = "; ".join(
        f"`{c.name}` " + ", ".join(f"{e} {a * 1e3:,.1f} ms + {b * 1e6:,.1f} us a prompt token" for e, a, b in c.ingest)
        for c in BENCH_CLIENTS.values()
        if c.ingest
    )
    return f"""### Serving under traffic (`gpuplan_core/perf/simulate.py`, `serving.py`, `schedulers.py`)
- **The engine's step loop, simulated.** A serving engine works in steps of a few milliseconds. In each step it
  gives every running request its next token, fills what is left of the step's token budget with pieces of
  waiting prompts, and starts a waiting request only while fewer than the engine's limit run and the KV cache has
  room; when the cache is full the newest request is paused and recomputed later. gpuplan replays that loop for a
  few hundred requests, step by step, and times each step with the roofline above for exactly what is in it: a
  step that carries someone's 2,000-token prompt is as slow as that prompt makes it, and everyone decoding in that
  step waits for it. One request alone gets exactly the single-request numbers. One step's mix:

  | in one step (token budget 8,192) | tokens | what it costs |
  |---|---|---|
  | 64 requests decoding, 1 token each | 64 | reading the weights once and 64 KV caches |
  | the rest of a prompt that started last step | 3,000 | matmuls over 3,000 tokens, attention over its prefix |
  | the start of a new prompt | 5,128 | the same; its first token only when its last piece is done |

- **Speculative decoding** (a draft model set under Assumptions, or the model's own MTP module): each decode
  step is k draft steps and one verify step of the big model over k + 1 tokens, writing 1 + a + ... + a^k tokens
  on average at acceptance a (Leviathan et al. 2023); the step loop runs exactly those steps, and a step with
  prompt pieces adds the draft's pass over them (its prefill: vLLM, SGLang and TensorRT-LLM all run it). The
  replica holds the draft: "draft weights" (parameters x bytes per weight / GPUs) and "draft KV cache" in the
  memory budget, the KV pool holding pool / (big model's + draft's bytes per token) tokens. DeepSeek-V3/R1's MTP
  module is a one-token draft (one layer and the model's head a step) at acceptance 0.85, the low end of the
  DeepSeek-V3 report's 85-90% (section 5.4.3). It helps where decode steps are memory-bound (few requests at
  once) and costs where matmuls are compute-bound (many); the plan speculates only where that is cheaper at your
  targets and its why-chain says what the other way costs; a speculating P/D decode pool is sized from the same
  steps (time per token = step / E, ceil((output - 1) / E) steps a request).
- **Engines**: {engines}. Limits: vLLM's defaults for its OpenAI-compatible server (8,192 tokens per step and
  1,024 requests at once on GPUs of at least 70 GiB that are not A100s, 2,048 and 256 on the others), SGLang's
  chunked_prefill_size by GPU memory, TensorRT-LLM's max_num_tokens 8,192; both limits can be set under
  Assumptions.
- **Fixed costs per request, split in two.** The engine's own (API server, tokenizer, scheduling) is 0: no
  engine publishes it per request or per token. What published runs show before the first token beyond the GPU's
  time is their benchmark client's (HTTP, streaming, a chat endpoint's template), named per client and applied only
  to that client's runs, fitted on its training runs at light load, of dense and MoE models alike (a client's
  HTTP and template path does not depend on the model; `bench/fit_serving.py`, `perf/clients.py`): {costs}; the
  others (AIPerf, `benchmark_serving.py`, `trtllm-bench`) have no light-load run to read one from. It is not the
  engine's: TensorRT-LLM's runs show 4 ms (NIM under AIPerf) to 34 ms (trtllm-serve over the chat endpoint).
  The app's own answer adds no client cost, and says so; calibrate to your deployment to add yours.
  A burst sent all at once through a client's serial front end (one worker that takes requests in the order sent,
  for a time per request and per prompt token, and hands them to the engine when nothing more waits) reaches the
  engine only when the whole burst is taken in: fitted on that client's bursts and applied only to its runs
  ({fronts}); no other client's bursts show a wait that does not depend on the GPU.
- **Load as benchmarks and users send it**: a number of clients that start together and each send the next
  request when the last ends (a closed loop: identical requests finish together and arrive together, in waves, so
  a first token waits for a whole wave's prompts), or a request rate with arrivals at random (Poisson) or in bursts
  (gamma gaps, twice as uneven). Lengths: all as set; each drawn between (1 - spread) and 1 times the set length
  (benchmarks' range ratio); or long-tailed like chat traffic (lognormal, sigma 0.9). Runs are seeded, so a link
  gives the same numbers every time. TTFT and the gaps between tokens are the p50, p90, p95 and p99 of the
  simulated requests; a rate is "beyond capacity" at or above the rate with every slot busy, or when the queue
  still grows at the end of the run.
- **KV cache at start-up**: {KV_STARTUP_TEXT}
"""


def formulas() -> str:
    """Memory, speed, serving under traffic and cost: each formula with its source."""
    t = training_accuracy()
    return rf"""
gpuplan computes every number from the formulas below (in `gpuplan_core`; each file's docstring repeats them).
**Units:** bytes internally; **GB = 10^9 bytes, GiB = 2^30 bytes**, and every label says which. Time in seconds,
money in US dollars, compute in FLOPs with **dense** peaks only.

### One engine per quantity
Each quantity has one model, and every page, the report and the CLI read it. **Latency** (first token, time per
token, tokens per second, capacity): one engine, the serving engine's step loop over engine steps on the roofline; a
static view ("one request alone", "a batch at once") is that engine in a static mode, the same step model with no
queue, and says so. **GPU count and memory per GPU**: one layout search, the one the answer uses (serving: each GPU
type, weights format and TP x PP that holds the budget, sized to the traffic; training: ZeRO stage, TP x PP x DP,
micro-batch, recompute, pipeline schedule and, for a mixture of experts, expert parallel searched together),
budgeted at the pick's own layout. The Overview's pick, the Memory page's count and memory per GPU, the Cost page's
row per offer and Compare's sides all read it; the Performance page's per-GPU table shows each type as the plan
would run it at your load; Compare's sides are each the answer to their scenario.

### Memory (`gpuplan_core/memory.py`, `model.py`)
- **Parameters** are counted from the architecture, output layer included (untied models store it separately):
  attention `h·a·d + 2·h·kv·d + a·d·h` (+ biases), gated MLP `3·h·I` (plain `2·h·I`), norms, embeddings;
  MoE counts every expert (total) or the routed top-k + shared experts + router (active); MLA counts its low-rank
  projections. Checked against published counts (Llama-3.1-8B: 8,030,261,248).
- **Weights** = parameters × bytes per weight, scale metadata included (table below).
- **KV cache** = 2 × layers × KV heads × head_dim × bytes × tokens × sequences. Grouped-query attention uses the KV
  heads, not the query heads; MLA (DeepSeek) caches one latent of `kv_lora_rank + qk_rope_head_dim` per layer;
  sliding-window layers hold at most the window. Tensor parallel splits KV heads, never below one per GPU.
- **Training model states** by precision recipe, bytes per trainable parameter (weights / gradients / FP32 master /
  optimizer states). *Mixed* (Megatron, torchtitan's FSDP mixed precision; pre-training's default): two published
  accountings, *ZeRO paper* (Rajbhandari et al. 2020) 2 / 2 / 4 / 8 = 16 B and *Hugging Face model-memory anatomy*
  2 / 4 / 4 / 8 = 18 B. *Pure BF16* (torchtune's recipes, TRL with a BF16 model; fine-tuning's default): 2 / 2 / 0 / 4
  = 8 B, AdamW's two states in BF16. *FP8 / MXFP8 / NVFP4* (torchao float8, Blackwell): mixed, plus one block's weights
  and transposes cast to the low format with their block scales (1/32, 1/16). 8-bit AdamW (bitsandbytes, paged or
  not): 2 B of states. ZeRO-1 shards optimizer states over the data-parallel (and context-parallel) GPUs, ZeRO-2 also
  gradients, ZeRO-3 / FSDP also weights; **FSDP gathers one transformer block's BF16 weights** at a time, prefetches
  the next and reduce-scatters one block's gradients (FSDP2's defaults). **CPU offload** (DeepSpeed ZeRO-Offload):
  the optimizer states, master weights and gradients (at ZeRO-3 optionally the weights too) move to host RAM; each
  machine then needs their per-GPU share x its GPUs x 1.5 (the estimators' buffer factor).
- **Activations**, counted as autograd keeps them, per layer and token (`gpuplan_core/memory/activations.py`): norm
  inputs 2h + norm outputs 2h + q, k, v + attention output + SwiGLU gate, activation, up and product 4I (GELU: 2I) at
  the activation's bytes (Korthikanti et al. 2022 count the same tensors for GPT: `34·s·b·h`), plus `5·a·s²·b` for
  the scores without FlashAttention. A frozen base (LoRA, QLoRA) keeps no inputs for weight gradients. Checkpointing:
  *none* keeps everything; *selective, per op* (torchtitan) keeps the layer input, the attention output and every
  other matmul output; *full* keeps each layer's input (optionally on every k-th layer only); with recompute one
  layer's tensors live again during its backward. Tensor parallelism (with sequence parallel) and context
  parallelism divide them; Megatron's **interleaved 1F1B** with v chunks per stage holds 1 + (pp - 1) / (pp v) times
  1F1B's on the first stage (Korthikanti et al. 2022, 4.2.3). **Expert parallel** (EP, within the data-parallel
  ranks) holds 1 / EP of the routed experts' weights, gradients and states; ZeRO then shards them over dp / EP.
  **HSDP** shards ZeRO-3's states over a group of data-parallel ranks only (one machine's), replicated across groups.
  **Activation offloading** keeps two layers' activations on the GPU and the rest in host RAM. A **paged
  optimizer** (bitsandbytes' paged AdamW) keeps its states in unified memory: out of the GPU's need, in host RAM at
  their own size, the step paying twice the states that do not fit beside the rest over PCIe.
  **LoRA adapters** keep their input after dropout (2 B + a 1-byte mask, when dropout > 0) and their rank-r output;
  adapting the LM head adds a logits-sized output. **Logits**: the full loss in eager
  PyTorch holds, per token, the BF16 logits, their FP32 copy and the FP32 log-softmax it saves (`10·V` bytes;
  torchtune's flags table: chunking saves 8.9 bytes per logit on Llama 3.2 3B); a chunked loss keeps BF16 logits and
  upcasts 8 chunks in turn (`(2 + 4/8)·V`). **QLoRA**: every library dequantises one linear layer to BF16 at a time;
  bitsandbytes (litgpt, PEFT) holds {Assumptions().qlora_bnb_overhead_bytes_per_param:g} B per base parameter above
  the NF4 storage (fitted on two thirds of the measured litgpt runs); PEFT's `prepare_model_for_kbit_training` also
  upcasts the weights it keeps unquantised (embeddings, LM head, norms) to FP32. **Loading** (the checkpoint's share
  plus its largest tensor in 16 bit) is its own budget, said when it is the larger.
- **Checked against measured peaks** ({t.memory_points} published runs of torchtune, litgpt, torchtitan and torchao; no
  term fitted on them but bitsandbytes' QLoRA buffers, on two thirds of their runs): {t.memory_line}. Paged
  optimizers ({t.memory_paged_points} runs) move their states off the GPU under pressure, so their measured peak may
  sit below the budget.
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
  MLA (DeepSeek) decodes in the absorbed form, `2·a·(2·kv_lora_rank + qk_rope)` per attended pair (QK^T over the
  latent and its RoPE key, AV over the latent: DeepSeek-V2 §2.1.3, vLLM's MLA backend) at the efficiency of a GEMM
  with the GPU's heads as rows (every head reads the same latent), and its query and latent
  down-projections are whole on every tensor-parallel GPU (replicated layers in vLLM and SGLang).
- **Ridge point** = dense peak FLOP/s ÷ bandwidth. Time per op = max(FLOPs ÷ (peak × MFU), bytes ÷ (bandwidth ×
  MBU)), summed over the weight matmuls and attention, plus fixed overheads and tensor-parallel all-reduces
  (2 per layer). MFU and MBU grow with op size (curves from Vidur and NVIDIA aiconfigurator per-op data).
- **TTFT** = prefill time + overhead; **TPOT** is the mean decode step over the output, *exclusive* of the first
  token (the inclusive variant is shown beside it).
- **Engines without CUDA graphs** (plain transformers `generate()`): the host launches every layer's kernels
  while the GPU runs them, so a pass takes the longer of the GPU's time and layers x 0.7 ms (measured: 24.4 ms per
  token for Llama-3.1-8B on H100, where the host limits; 17.1 ms on an RTX 4090, where the GPU does). Engines that
  graph decode-only steps (vLLM 0.6-0.7, SGLang, TensorRT-LLM's PyTorch backend) launch a step with prompt tokens
  the same way: an MoE model's such step takes at least its layers x 0.7 ms (routing, permutation and grouped-GEMM
  launches issued from Python).

{_serving()}
- **Capacity** = the largest request rate with p95 TTFT and mean TPOT within the targets; **replicas** =
  ceil(peak rate / capacity), peak rate = requests per day / 86,400 x peak-to-average. The recommendation, the
  Cost page and serverless use it whenever a traffic estimate is given.
- **Serverless**: a worker batches like a replica; workers = rate / capacity; each worker's busy periods
  (M/G/inf, mean (exp(r x) - 1) / r), idle gaps billed up to the idle timeout, and a cold start only after a gap
  longer than the timeout (renewal-reward per cycle).
- How far to trust it: the calibration table on Performance compares the simulation with 1,160 published serving
  measurements, a third of each source's runs held out from every fit; the held-out errors per regime are there.
- **Calibrate to your deployment** (`gpuplan_core/perf/deployment_fit.py`, Performance's section, `calibrate --from
  FILE`): each run of your own benchmark file (vLLM `bench serve` JSON / JSON Lines, SGLang `bench_serving`,
  GenAI-Perf / AIPerf) is simulated as it was sent, on the same path as the published rows. Two constants: decode
  time factor = median over runs of measured / predicted time per token (from 2 runs with one; it multiplies every
  decode-only step); request cost = median over light-load runs (at most 4 clients or 2 requests/s, prompts up to
  1,024 tokens; else every run that is not a burst) of measured - predicted TTFT with that factor and no cost, at
  least 0. The errors are shown before, in-sample, and with each run left out of its own fit (leave one run out):
  only the last says how the profile does on a load you have not measured. The profile is kept on the server and
  named in the link (`profile`); the scenario file carries it.

### Cost (`gpuplan_core/cost.py`, `plan.py`, `pricing.py`)
- **Always-on** = nodes × node price × 730 h/month: a running instance is billable while idle.
- **Per run** = nodes × node price × billed time; billed time = runtime rounded to the contract's increment, at least
  its minimum (AWS: per second, 60 s minimum; Azure: whole minutes, rounded down). Nodes are whole: 10 GPUs on
  8-GPU nodes pay for 16.
- **Serverless** bills worker start-up, execution and the idle timeout (RunPod, Modal rules).
- **Training** compute = 6 × parameters × tokens (+ attention; 4 × with LoRA and QLoRA, whose frozen base has no
  weight gradients) ÷ (dense peak × MFU); real budgets add failed runs and sweeps (industry estimates 30–50% of
  compute, seed 002).
- **Training speed** (`gpuplan_core/perf/training_step.py`): the MFU is **predicted** for each layout and offer (an
  MFU you give overrides it). One step = micro-batches x (matmuls at a GEMM efficiency that grows with the width per
  GPU, FlashAttention forward and backward, elementwise traffic over HBM, tensor- and context-parallel exchanges over
  NVLink, a cost per layer) x (1 + the pipeline bubble (pp - 1) / (micro-batches x v)); under the **zero-bubble
  ZB-H1** schedule (Qi et al. 2023, v = 1, 1F1B's activation memory) the bubble is (pp - 1) / micro-batches of the
  compute less twice the weight-gradient matmuls (a third of 1F1B's where F = B = W) + the pipeline's sends (v x
  a micro-batch's activations and gradients per stage; exposed under 1F1B, hidden behind compute when interleaved,
  as Megatron-Bridge sets it) + the data-parallel traffic compute does not hide (gradient all-reduce, or FSDP's
  gathers and reduce-scatter, over NVLink or the offer's network per GPU; HSDP: inside its group, then each GPU's
  share of the gradients all-reduced across groups) + the optimizer's pass over its states + activation offloading's
  PCIe copies (out beside the forward, back beside the backward) where those passes are the shorter.
  Recompute adds a forward pass (full) or half of one (per op). Its
  constants are fitted on two thirds of {t.speed_runs} published runs (llm-foundry, Megatron-LM, NeMo /
  Megatron-Bridge, torchtitan, the Llama 3 paper; a third of each publisher's held out by CRC-32 of the run):
  **held out, {t.speed_line}**; a fixed MFU of 0.40 on the same held-out runs is
  {t.speed_fixed_mfu_median:.0%} off at the median. With each source (repository or paper) left out in turn, the
  constants fitted on the others' runs (`python -m bench.fit_training_sources`), the median |error| is
  {t.speed_by_source}: within the 12% aimed at for dense pre-training and fine-tuning. Attention efficiency,
  elementwise traffic and the hidden share of tensor-parallel traffic are fitted per kernel stack (Megatron-Core
  with Transformer Engine, or PyTorch FSDP; the planner assumes the latter), and the GEMM ceiling and FP8 speedup
  of H100 and B200 are measured kernels' (aiconfigurator-core's tables), not fitted. The band shown beside a
  predicted MFU is the held-out 80th percentile, ±{t.speed_band:.0%}. Mixture of experts: the routed experts'
  grouped GEMMs at one fitted efficiency and expert parallelism's all-to-all (dispatch and combine, forward and
  backward): {t.speed_moe_median:.0%} off at the median on {t.speed_moe_points} held-out runs, band
  ±{t.speed_moe_band:.0%}.
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
  independent servers (allowed); a training job is never spread over them. Across machines, the training step
  model reads the offer's network per GPU for the data-parallel traffic (Training speed, below).
- **Training picks** respect the GPU chosen (with "any GPU", the cheapest per GPU type) and fit at the chosen ZeRO
  stage or the lowest above it that fits (the pick says so). A GPU count above 1 is yours: the layout uses exactly
  that many (tensor x pipeline x data parallel), on as many machines as the offer's machines require; where it
  cannot run (memory, tensor parallel, no fast network between machines) the plan says why and prices the nearest
  count that runs. With the count left at 1, the smallest count that holds the job, grown in steps of the layout
  to meet a deadline.
- **The why-chain** on the home page: requests/day -> peak requests/s -> one replica's capacity -> replicas ->
  GPUs and machines -> machines (or GPUs) x price x hours = monthly cost (whole nodes where rented whole); for
  training: FLOPs -> GPUs (and how the count was chosen) -> GPU-hours at MFU -> wall time -> machines -> price
  per hour -> hours billed (the billing increment and minimum, spot restarts) -> cost with failed runs. Each step
  prints the numbers it multiplies, to the precision that multiplies out to what it prints, and the chain's cost
  is the headline's figure.
- **The Pareto front**: the configurations no other beats on both monthly cost and p95 TTFT.
- **Deployment export**: `vllm serve` with `--tensor-parallel-size`, `--pipeline-parallel-size`, `--max-model-len`
  (input + output), `--gpu-memory-utilization`, `--kv-cache-dtype`, `--quantization fp8` for FP8 weights from a
  16-bit checkpoint (AWQ/GPTQ and NVFP4 need a quantised checkpoint); SGLang's `python -m sglang.launch_server`
  (`--tp-size`, `--pp-size`, `--context-length`, `--mem-fraction-static`) or TensorRT-LLM's `trtllm-serve`
  (`--backend pytorch`, `--tp_size`, `--pp_size`, `--max_seq_len`; FP8 from a quantised checkpoint) where the
  scenario's engine is one of them; a SkyPilot task with `accelerators: GPU:count`, `num_nodes`, the engine's
  install and that command, speculating where the pick does (its engine's flags: `plan/deploy_spec.py`).
""" + energy_text()


ENGINES = (
    "### Serving engines\nThe memory budget's runtime terms follow the engine chosen under Assumptions (the "
    "`memory` JSON names it as `engine`). A quantised weights format applies to the decoder's linear layers: GPTQ, "
    "AWQ, FP8, NVFP4 and bitsandbytes keep the embeddings, the LM head and the norms in 16 bit (only the ideal "
    "packed 4-bit lower bound applies to every parameter); a Hugging Face config's `quantization_config` sets the "
    "checkpoint's format. A decode step streams every weight except the input embedding table, of which it gathers "
    "one row per sequence."
)

ENGINE_RELEASES = (
    "The engine's release line (Assumptions: Engine release; `--engine-version`, `engine_v` in the link) sets how it "
    "schedules where lines differ; unset, the engine's latest. The published runs are simulated with the line their "
    "source ran. What an engine runs where: TensorRT-LLM runs on NVIDIA GPUs only, with FP8 from Ada (SM 89) on "
    "(NVIDIA TensorRT-LLM docs, reference/support-matrix.md: Ampere SM80/SM86 runs FP32, FP16, BF16, INT8, INT4), so "
    "the search refuses its FP8 weights on Ampere and older; a pick on a GPU its release does not list as supported "
    "(1.x: the docs' 'Supported Hardware' page, B200, H100, H200, L40/L40S and A100 among the catalog's; 0.x: the "
    "Blackwell, Hopper, Ada and Ampere architectures) says so. vLLM and SGLang run FP8 weights on Ampere as "
    "weight-only kernels (vLLM docs, 'Supported Hardware' for quantization: Marlin FP8 on Ampere). A line older "
    "than the kernel tables (TensorRT-LLM 0.x's C++ runtime: TensorRT engines of its own release, each step prepared "
    "on the host only after the last ended, no overlap scheduler) takes every step, prompt chunks and decodes alike, "
    "at step model x its measured step factor: the median over its saturated runs (dense bursts at fixed, stated "
    "lengths) of predicted / measured output tokens/s at factor 1, 1.175 on TensorRT-LLM 0.14's offline throughput "
    "table; left out by source, read on the line's other sources only."
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

SERVING_TRUST = (
    "**Serving under load**, held out: a third of each source's published runs (every metric of a run together) "
    "were left out of every fit; the simulation's error on them, per regime and metric, is below. The only "
    "constants fitted on serving data, the benchmark clients' costs before the first token (each applied to its own "
    "client's runs only), used the other two thirds."
)


def serving_trust(cal) -> str:
    """The serving paragraph with validation by source: each published source left out in turn (request costs
    fitted on the others), its figures from the report (``serving_left_out_source``)."""
    by = {(e.by, e.group, e.metric): e for e in cal.serving_left_out_source}
    sources = len({e.group for e in cal.serving_left_out_source if e.by == "source"})

    def line(group: str) -> str:
        cells = [by.get(("regime", group, m)) for m in ("ttft", "itl", "output_tokens_per_s")]
        if not all(cells):
            return "no points"
        return "TTFT {:.0%}, time per token {:.0%}, output tokens/s {:.0%}".format(*(c.median_abs_error for c in cells))

    return (
        SERVING_TRUST
        + f" **Validation by source**: each of the {sources} sources left out in turn (its client's cost fitted "
        "again on the other sources that client sent, else none; its runs simulated with it; "
        "`data/serving_loso.csv`, `calibrate --json` `serving_left_out_source`), median error of online dense "
        f"serving {line('online, dense')}; "
        f"mixture-of-experts {line('MoE')}. First-token time transfers worst: of the sources with light-load "
        "runs only GPUStack's two and the SGLang cookbook's two share a client, so the others, left out, get no "
        "client cost; a release line's step factor is read on its other sources too, and so are the MoE experts' "
        "efficiency factors and routing floor for the three sources their stored fit read. LMDeploy's runs are "
        "scheduled "
        "as TurboMind v0.1 (its prompts read in passes of their own, each first token from the generation step "
        "after them). Attention data-parallel ranks run each step together: a rank's decode steps wait for the other "
        "ranks' prompt steps where their loads differ. " + KERNELS
    )


KERNELS = (
    "**Measured kernel times**: where NVIDIA aiconfigurator-core 0.12.0's measured tables cover a replica (H100 SXM, "
    "H200 and B200; vLLM, SGLang and TensorRT-LLM; BF16, FP16 and FP8 dense models with 128-wide attention heads), "
    "each engine step's GEMMs, attention and tensor-parallel all-reduces are those measured times, interpolated "
    "between measured shapes (`perf/kernel_steps.py`, `docs/aiconfigurator.md`); elsewhere, and for any part of a "
    "step outside the tables, the calibrated roofline. Every step names its source (`perf --json`: `kernel_source`). "
    "MoE and MLA layers stay on the roofline: measured on current engines they run faster than every published MoE "
    "run, and worsen its left-out time per token (22% -> 30%). "
    "The static views (one request alone, a batch at once) are the same step model."
)


EFFICIENCY = (
    "Weight-read efficiency per GPU generation and format family, where measurements pin it (elsewhere the defaults "
    "below apply by width: 8-bit 0.7 on HBM, 4-bit 0.45): `data/efficiency.csv`."
)
