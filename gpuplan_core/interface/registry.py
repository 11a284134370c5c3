"""Every user input, one record each (``record.py`` says what a record holds).

The records drive the sidebar and Compare's B-side inputs (``gpuplan_ui/widgets.py`` renders a record as a widget),
links and the scenario file (``links.py``) and the Scenario (``inputs.to_scenario``). A record that sets a
Scenario field reads its default, range and help from the field (``scenario/parts.py``, ``deployment.py``); the
CLI's flags are derived from the same fields (``cli.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..hardware.engines import ENGINES
from ..model.formats import FORMATS, KV_FORMATS, WEIGHT_FORMATS
from ..scenario.fields import MAX_BATCH, MAX_LAYOUT_GPUS
from .record import ALL_JOBS, DEFAULT_JOB, DEFAULT_SOURCE, INFERENCE, JOBS, MAIN, TRAINING, Group, Input

GROUPS = {
    g.title: g
    for g in (
        Group(MAIN, lazy=False, expanded=True),
        Group("GPU count and parallelism"),
        Group("Training", lazy=False, expanded=True),
        Group("Traffic and latency targets"),
        Group("Pricing"),
        Group("Site and owning"),
        Group("Assumptions"),
    )
}
# Pages with inputs of their own (url path -> title). They are in the link like every other input.
PAGE_OVERVIEW, PAGE_COST, PAGE_COMPARE = "", "Cost", "Compare"

# ---- option lists and their labels ---------------------------------------------------------------

MODEL_SOURCES = {"preset": "Published model", "size": "Model size only", "config": "Hugging Face config"}
SIZES_B = (0.5, 1, 1.5, 2, 3, 4, 7, 8, 9, 13, 14, 20, 27, 32, 34, 40, 47, 70, 72, 90, 110, 120, 175, 235, 340, 405,
           480, 671, 1000, 1800, 2000)  # fmt: skip
SEQUENCE_LENGTHS = tuple(2**i for i in range(7, 21))  # 128 ... 1,048,576
METHODS = {"full": "Full fine-tuning", "lora": "LoRA", "qlora": "QLoRA (4-bit base)"}
BILLING = {
    "any": "Any billing",
    "on_demand": "On-demand",
    "spot": "Spot / interruptible",
    "reserved": "Reserved",
    "serverless": "Serverless",
}
PRICE_SOURCES = {"add": "Bundled + yours (yours win on the same offer id)", "only": "Yours only"}
ACCOUNTING = {"zero": "ZeRO paper, 16 B/param", "hf": "Hugging Face, 18 B/param"}
RECOMPUTE = {
    "full": "Full (recompute every layer; the usual fine-tuning setting)",
    "selective": "Selective, per op (keep matmul outputs, recompute the rest; torchtitan)",
    "none": "None (keep every activation)",
}
PRECISIONS = {
    "mixed": "Mixed: BF16 + FP32 master (Megatron, torchtitan)",
    "bf16": "Pure BF16, no master copy (torchtune, TRL)",
    "fp8": "FP8 linear layers (torchao float8)",
    "mxfp8": "MXFP8 linear layers (Blackwell)",
    "nvfp4": "NVFP4 linear layers (Blackwell)",
    "fp32": "FP32",
}
CROSS_ENTROPY = {"full": "Full (FP32 logits)", "chunked": "Chunked (torchtune, 8 chunks)"}
LORA_TARGETS = {
    "qv": "q and v (PEFT, litgpt default)",
    "attention": "All attention projections",
    "all-linear": "All linear layers",
    "all-linear+head": "All linear + LM head",
}
QLORA_LIBRARIES = {
    "peft": "bitsandbytes via PEFT (Hugging Face)",
    "bitsandbytes": "bitsandbytes alone (litgpt)",
    "torchao": "torchao NF4 (torchtune)",
}
OPTIMIZERS = {"adamw": "AdamW", "adam8bit": "8-bit Adam", "sgd": "SGD with momentum"}
OFFLOAD = {
    "none": "None: everything on the GPUs",
    "optimizer": "Optimizer to CPU RAM (DeepSpeed ZeRO-Offload)",
    "optimizer+params": "Optimizer and weights to CPU RAM (ZeRO-3 only)",
}
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
PP_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
MARKET = {
    "none": "No projection",
    "a16z": "a16z (~10x/yr)",
    "epoch": "Epoch AI (~47%/quarter)",
    "stanford": "Stanford AI Index (>280x in 2 yrs)",
}
SAME = "same"  # Compare's B side: "same as A"
ARRIVALS = {"poisson": "At random (Poisson)", "bursty": "In bursts (twice as uneven)"}
LENGTHS = {
    "fixed": "All the set lengths",
    "uniform": "Each between (1 - spread) and 1 x the set lengths",
    "chat": "Long-tailed, like chat traffic",
}
ENGINE_LABELS = {k: e.label for k, e in ENGINES.items()}

# Use-case presets: what picking one sets (input values, in the inputs' own units). Typical values, ours,
# informed by the sources on Methodology (USE_CASE_SOURCES). "chat", the default, is the Scenario's defaults.
USE_CASES: dict[str, dict] = {
    "custom": {"label": "Custom (set the numbers below)"},
    "chat": {"label": "Chat assistant", "in": 2000.0, "out": 300.0, "ttft_ms": 2000.0, "tpot_ms": 100.0},
    "rag": {"label": "RAG over documents (long input, short output)", "in": 8000.0, "out": 300.0,
            "ttft_ms": 3000.0, "tpot_ms": 100.0},
    "code": {"label": "Code completion (short, strict first token)", "in": 1500.0, "out": 100.0, "ttft_ms": 300.0,
             "tpot_ms": 30.0},
    "summarize": {"label": "Summarisation / batch jobs (no first-token target)", "in": 6000.0, "out": 500.0,
                  "ttft_ms": 0.0, "tpot_ms": 0.0},
    "agent": {"label": "Agent steps (long context, short tool calls)", "in": 4000.0, "out": 200.0,
              "ttft_ms": 1000.0, "tpot_ms": 50.0},
}  # fmt: skip
USE_CASE_SOURCES = (
    "Chat: a first token within ~2 s and decoding faster than reading speed (~5-10 tokens/s, TPOT <= 100 ms); "
    "DistServe (Zhong et al. 2024, hao-ai-lab blog) on chatbot vs code-completion latency needs; guidellm's SLO "
    "example (TTFT 200 ms, ITL 25 ms for an interactive chat).",
    "RAG and summarisation: long inputs, short outputs, as in the NVIDIA NIM benchmarking guide's use-case "
    "lengths (e.g. 5,000 in / 500 out) and the Sarathi-Serve prefill-heavy traces.",
    "Code completion: short outputs that must start at once (DistServe: fast end-to-end for real-time suggestions).",
    "Agent steps: each tool call re-sends a growing context and returns a short call; many steps per task make "
    "each step's latency add up.",
)


def tokens_label(n: int) -> str:
    return f"{n // 1024:,}k" if n >= 1024 and n % 1024 == 0 else f"{n:,}"


def _gpu_ids() -> list[str]:
    from ..hardware.catalog import load_gpus

    return [g.gpu for g in load_gpus()]


def _gpu_label(gid: str) -> str:
    from ..hardware.catalog import get_gpu

    return get_gpu(gid).label


def _presets() -> list[str]:
    from ..model.presets import load_presets

    return list(load_presets())


@lru_cache(maxsize=1)
def _regions() -> tuple[str, ...]:
    from ..pricing.energy import region_ids

    return tuple(region_ids())


def _region_label(r: str) -> str:
    from ..pricing.energy import regions_table

    t = regions_table()
    rows = t[t.region == r]
    return str(rows.iloc[0].label) if len(rows) else r


def _providers() -> tuple[str, ...]:
    from ..pricing.csv_file import load_pricing

    return ("any", *sorted({o.provider for o in load_pricing().offers}))


def _same_or(options: Callable[[], Sequence] | Sequence) -> Callable[[], list]:
    return lambda: [SAME, *(options() if callable(options) else options)]


# ---- composite fields ---------------------------------------------------------------------------


def _job_fields(job: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    mode = "inference" if job in INFERENCE else ("training" if job == "pretrain" else "finetune")
    return {"mode": mode, "serving": "batch" if job == "batch" else "interactive"}


def _batch_fields(v: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    inference = values.get("workload", DEFAULT_JOB) in INFERENCE
    return {"batch": "max" if inference and values.get("batch_max") else round(float(v))}


def _zero_fields(v: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    return {"zero_auto": True} if v == "auto" else {"zero_stage": int(v), "zero_auto": False}


# ---- the registry -------------------------------------------------------------------------------

_TARGETS = frozenset({"interactive"})
_PAR, _TRAIN, _TRAFFIC, _PRICE, _SITE, _ASSUME = (
    "GPU count and parallelism", "Training", "Traffic and latency targets", "Pricing", "Site and owning",
    "Assumptions",
)  # fmt: skip

# One record per input, compact on purpose: a catalog to read down (ruff format would give each argument a line).
# fmt: off
RECORDS: tuple[Input, ...] = (
    # the job and the model
    Input("workload", "Job", "select", options=tuple(JOBS), labels=JOBS, to_fields=_job_fields,
          sets=("mode", "serving"), default=DEFAULT_JOB, help="What the GPUs will do. Inference is judged by "
          "latency and tokens per dollar; training by completion time and cost per run."),
    Input("usecase", "Use case", "select", options=tuple(USE_CASES), labels=lambda k: USE_CASES[k]["label"],
          jobs=INFERENCE, default="chat", help="Sets input and output tokens and the latency targets to typical "
          "values for the use case (Methodology says where they come from); change any of them afterwards."),
    Input("src", "Model", "radio", options=tuple(MODEL_SOURCES), labels=MODEL_SOURCES, default=DEFAULT_SOURCE,
          help="A published model with its exact architecture, a bare size (an approximate Llama-style shape is "
          "derived), or any Hugging Face config.json."),
    Input("model", "Published model", "select", field="preset", options=_presets, source="preset", short="model"),
    Input("size_b", "Model size (billions of parameters)", "select_slider", field="params", options=SIZES_B,
          labels=lambda v: f"{v:g}B", scale=1e9, source="size", default=7),  # the field's default: a preset
    Input("hf", "Hugging Face model id", "text", sets=("config_text",), source="config", default="",
          help="Fetched from huggingface.co when the server is online; otherwise upload the config.json below."),
    Input("method", "Fine-tuning method", "select", field="method", options=tuple(METHODS), labels=METHODS,
          jobs=frozenset({"finetune"}), short="method"),
    Input("weights", "Weights format", "select", field="weights_format", options=tuple(WEIGHT_FORMATS),
          labels=lambda f: FORMATS[f].label),
    Input("kv", "KV-cache format", "select", field="kv_format", options=tuple(KV_FORMATS),
          labels=lambda f: FORMATS[f].label, jobs=INFERENCE),
    # the request shape
    Input("in", "Input tokens per request", "number", field="input_tokens", step=100, jobs=INFERENCE,
          short="input tokens"),
    Input("out", "Output tokens per request", "number", field="output_tokens", step=50, jobs=INFERENCE,
          short="output tokens"),
    Input("ctx", "Sequence length (tokens)", "select_slider", field="sequence_tokens", options=SEQUENCE_LENGTHS,
          labels=tokens_label, jobs=TRAINING),
    Input("batch_max", "Use the largest batch that fits", "toggle", modifies="batch", jobs=INFERENCE,
          default=False, help="Throughput at the most concurrent sequences the memory allows."),
    Input("batch", "Batch (concurrent sequences)", "number", field="batch", step=1, to_fields=_batch_fields,
          job_labels={"pretrain": "Micro-batch per GPU", "finetune": "Micro-batch per GPU"}),
    Input("gpu", "GPU", "select", field="gpu", options=lambda: ["any", *_gpu_ids()],
          labels=lambda g: "Any GPU" if g == "any" else _gpu_label(g), none_when="any"),
    Input("meeting", "Meeting view", "toggle", default=False, help="For a projector: hides this sidebar and the "
          "detail tables and enlarges the type, leaving each page's answer, headline numbers and one chart. In the "
          "link; 'Leave meeting view' at the top of each page turns it off."),
    # GPU count and parallelism
    Input("gpus", "GPUs", "number", group=_PAR, field="gpus", step=1, short="GPUs"),
    Input("tp", "Tensor parallel", "select", group=_PAR, field="tp", options=TP_CHOICES, short="tensor parallel"),
    Input("pp", "Pipeline stages", "select", group=_PAR, field="pp", options=PP_CHOICES, short="pipeline stages"),
    # training
    Input("tokens_b", "Training tokens (billions)", "number", group=_TRAIN, field="training_tokens", step=10,
          fmt="%.3f", scale=1e9, jobs=frozenset({"pretrain"}), short="training tokens (B)"),
    Input("ft_tokens_m", "Fine-tuning tokens (millions)", "number", group=_TRAIN, field="training_tokens", step=10,
          fmt="%.1f", scale=1e6, jobs=frozenset({"finetune"}), short="fine-tuning tokens (M)"),
    Input("mfu", "MFU (0 = predicted)", "number", group=_TRAIN, field="mfu", step=0.01, fmt="%.2f", none_when=0,
          jobs=TRAINING),
    Input("prec", "Precision recipe", "select", group=_TRAIN, field="precision", options=tuple(PRECISIONS),
          labels=PRECISIONS, jobs=frozenset({"pretrain"})),
    Input("ft_prec", "Precision recipe", "select", group=_TRAIN, field="precision", options=tuple(PRECISIONS),
          labels=PRECISIONS, jobs=frozenset({"finetune"})),
    Input("zero", "ZeRO stage", "select", group=_TRAIN, options=("auto", 0, 1, 2, 3), to_fields=_zero_fields,
          sets=("zero_stage", "zero_auto"), default="auto", jobs=TRAINING, help="ZeRO: 1 shards optimizer states, 2 "
          "also gradients, 3 also weights over the data-parallel GPUs. auto: the planner searches the stages with "
          "the layout and keeps the cheapest; a stage set here is kept, and a cheaper one is shown beside it."),
    Input("acct", "Memory accounting", "select", group=_TRAIN, field="accounting", options=tuple(ACCOUNTING),
          labels=ACCOUNTING, jobs=TRAINING),
    Input("opt", "Optimizer", "select", group=_TRAIN, field="optimizer", options=tuple(OPTIMIZERS),
          labels=OPTIMIZERS, jobs=TRAINING),
    Input("offload", "CPU offload", "select", group=_TRAIN, field="offload", options=tuple(OFFLOAD),
          labels=OFFLOAD, jobs=TRAINING),
    Input("recompute", "Activation checkpointing", "select", group=_TRAIN, field="recompute",
          options=tuple(RECOMPUTE), labels=RECOMPUTE, jobs=TRAINING),
    Input("ac_every", "Checkpoint every k-th layer", "number", group=_TRAIN, field="recompute_every", step=1,
          jobs=TRAINING),
    Input("ce", "Cross-entropy loss", "select", group=_TRAIN, field="cross_entropy", options=tuple(CROSS_ENTROPY),
          labels=CROSS_ENTROPY, jobs=TRAINING),
    Input("cp", "Context parallel", "number", group=_PAR, field="cp", step=1, jobs=TRAINING, short="context parallel"),
    Input("lora_rank", "LoRA rank", "number", group=_TRAIN, field="lora_rank", step=8, jobs=frozenset({"finetune"})),
    Input("lora_targets", "LoRA targets", "select", group=_TRAIN, field="lora_targets", options=tuple(LORA_TARGETS),
          labels=LORA_TARGETS, jobs=frozenset({"finetune"})),
    Input("lora_dropout", "LoRA dropout", "number", group=_TRAIN, field="lora_dropout", step=0.05, fmt="%.2f",
          jobs=frozenset({"finetune"})),
    Input("qlora_lib", "QLoRA library", "select", group=_TRAIN, field="qlora_library",
          options=tuple(QLORA_LIBRARIES), labels=QLORA_LIBRARIES, jobs=frozenset({"finetune"})),
    Input("deadline_h", "Finish within (hours, 0 = no deadline)", "number", group=_TRAIN, field="deadline_hours",
          step=24, fmt="%.0f", none_when=0, jobs=TRAINING),
    Input("default_deadline_h", "Without a count or deadline, aim at (hours, 0 = fewest GPUs)", "number",
          group=_TRAIN, field="default_deadline_hours", step=24, fmt="%.0f", none_when=0, jobs=TRAINING),
    Input("overhead", "Failed runs and sweeps", "slider", group=_TRAIN, field="overhead_factor", step=0.05,
          jobs=TRAINING),
    # traffic and latency targets
    Input("rpd", "Requests per day", "number", group=_TRAFFIC, field="requests_per_day", step=1000, fmt="%.0f",
          none_when=0, jobs=INFERENCE, short="requests/day"),
    Input("peak", "Peak-to-average traffic", "number", group=_TRAFFIC, field="peak_to_average", step=0.5,
          jobs=INFERENCE, short="peak/average"),
    Input("ttft_ms", "TTFT target, p95 (ms, 0 = none)", "number", group=_TRAFFIC, field="ttft_target_s", step=100,
          fmt="%.0f", scale=1e-3, none_when=0, jobs=_TARGETS, short="TTFT target ms"),
    Input("tpot_ms", "TPOT target, mean (ms, 0 = none)", "number", group=_TRAFFIC, field="tpot_target_s", step=5,
          fmt="%.0f", scale=1e-3, none_when=0, jobs=_TARGETS, short="TPOT target ms"),
    Input("arrival", "How requests arrive", "select", group=_TRAFFIC, field="arrival", options=tuple(ARRIVALS),
          labels=ARRIVALS, jobs=INFERENCE, short="arrivals"),
    Input("lengths", "Request lengths", "select", group=_TRAFFIC, field="lengths", options=tuple(LENGTHS),
          labels=LENGTHS, jobs=INFERENCE, short="lengths"),
    Input("spread", "Length spread (uniform lengths)", "slider", group=_TRAFFIC, field="length_spread", step=0.05,
          jobs=INFERENCE, short="length spread"),
    Input("growth", "Traffic growth per month (%)", "number", group=_TRAFFIC, field="monthly_growth", step=5,
          fmt="%.1f", scale=0.01, jobs=INFERENCE, short="growth %/month"),
    Input("spike_m", "Traffic spike in month (0 = none)", "number", group=_TRAFFIC, field="spike_month", step=1,
          fmt="%.0f", none_when=0, jobs=INFERENCE, short="spike month"),
    Input("spike_x", "Spike: times the usual traffic", "number", group=_TRAFFIC, field="spike_factor", step=0.5,
          jobs=INFERENCE, short="spike x"),
    # pricing
    Input("billing", "Billing", "select", group=_PRICE, field="billing", options=tuple(BILLING), labels=BILLING,
          none_when="any"),
    Input("provider", "Provider", "select", group=_PRICE, field="provider", options=_providers, none_when="any"),
    Input("accel", "Also consider TPUs, Trainium, Inferentia and Gaudi", "toggle", group=_PRICE,
          field="allow_accelerators", short="other accelerators"),
    Input("prices", "Your pricing file", "select", group=_PRICE, field="price_source", options=tuple(PRICE_SOURCES),
          labels=PRICE_SOURCES, short="your prices"),
    Input("myprice", "Your prices (USD per GPU-hour)", "text", group=_PRICE, field="your_prices", max_chars=1000,
          short="your prices", checked_alone="the catalog prices are used"),
    Input("hours", "Hours per month", "number", group=_PRICE, field="hours_per_month", step=10, fmt="%.0f",
          short="hours/month"),
    Input("busy", "Serving utilization (for $ per 1M tokens)", "slider", group=_PRICE, field="utilization",
          step=0.05, short="serving utilization"),
    Input("spot_restart", "Spot restart overhead", "slider", group=_PRICE, field="spot_restart_overhead",
          step=0.05, short="spot restarts"),
    # the site and owning
    Input("region", "Region (grid, electricity, PUE)", "select", group=_SITE, field="region", options=_regions,
          labels=_region_label, short="region"),
    Input("pue", "PUE (0 = the region's)", "number", group=_SITE, field="pue", step=0.05, fmt="%.2f", none_when=0,
          short="PUE"),
    Input("kwh_usd", "Electricity, USD per kWh (0 = the region's)", "number", group=_SITE,
          field="electricity_usd_per_kwh", step=0.01, fmt="%.3f", none_when=0, short="USD/kWh"),
    Input("gco2", "Grid, g CO2 per kWh (0 = the region's)", "number", group=_SITE, field="grid_gco2_per_kwh",
          step=10, fmt="%.0f", none_when=0, short="g CO2/kWh"),
    Input("server_usd", "Owning: server price per GPU, USD (0 = sourced default)", "number", group=_SITE,
          field="server_usd_per_gpu", step=1000, fmt="%.0f", none_when=0, short="server USD/GPU"),
    Input("amort_y", "Owning: amortisation (years)", "number", group=_SITE, field="amortisation_years", step=0.5,
          fmt="%.1f", short="amortisation years"),
    Input("host_kw", "Owning: hosting, USD per kW-month", "number", group=_SITE, field="hosting_usd_per_kw_month",
          step=10, fmt="%.0f", short="hosting USD/kW-month"),
    Input("own_util", "Owning: share of hours busy", "slider", group=_SITE, field="own_utilization", step=0.05,
          short="busy share"),
    # assumptions
    Input("util", "Memory utilization", "slider", group=_ASSUME, field="memory_utilization", step=0.01,
          short="memory utilization"),
    Input("engine", "Serving engine", "select", group=_ASSUME, field="engine", options=tuple(ENGINE_LABELS),
          labels=ENGINE_LABELS, jobs=INFERENCE, short="engine"),
    Input("max_seqs", "Engine: sequences at once (0 = engine default)", "number", group=_ASSUME,
          field="max_num_seqs", step=64, fmt="%.0f", none_when=0, jobs=INFERENCE, short="max_num_seqs"),
    Input("max_tokens", "Engine: tokens per step (0 = engine default)", "number", group=_ASSUME,
          field="max_num_batched_tokens", step=1024, fmt="%.0f", none_when=0, jobs=INFERENCE,
          short="max_num_batched_tokens"),
    Input("prefix", "Prompt share already cached (prefix caching)", "slider", group=_ASSUME,
          field="prefix_cache_fraction", step=0.05, jobs=INFERENCE, short="prefix cached"),
    Input("spec_b", "Speculative decoding: draft model (billions, 0 = off)", "number", group=_ASSUME,
          field="spec_draft_params", step=0.5, scale=1e9, none_when=0, jobs=INFERENCE, short="draft model (B)"),
    Input("spec_k", "Speculative tokens per step", "number", group=_ASSUME, field="spec_tokens", step=1,
          jobs=INFERENCE, short="draft tokens"),
    Input("spec_accept", "Draft acceptance rate", "slider", group=_ASSUME, field="spec_acceptance", step=0.05,
          jobs=INFERENCE, short="acceptance"),
    # the pages' own inputs
    Input("alt_formats", "Also consider FP8 and INT4 weights (a quality trade-off to check)", "toggle",
          page=PAGE_OVERVIEW, default=False, help="Searches the other weight formats too; check the model's "
          "quality in them before relying on it."),
    Input("market", "Project this month's cheapest cost with", "radio", options=tuple(MARKET), labels=MARKET,
          page=PAGE_COST, default="none", help="One estimate at a time: they use different baselines and are "
          "never averaged."),
    Input("train_bill", "Training or fine-tuning bill (USD, 0 = none)", "number", lo=0, hi=1e11, step=1000,
          fmt="%.0f", page=PAGE_COST, default=0.0, help="What you paid to train or fine-tune the model you serve: "
          "the Cost page then draws it against the months of serving. 0: no such bill (a published model you only "
          "serve)."),
    Input("b_gpu", "B: GPU", "select", options=_same_or(_gpu_ids), page=PAGE_COMPARE, variant_of="gpu",
          labels=lambda g: "same as A" if g == SAME else _gpu_label(g), default=SAME, help="B's GPU type."),
    Input("b_weights", "B: weights", "select", options=_same_or(WEIGHT_FORMATS), page=PAGE_COMPARE,
          variant_of="weights", labels=lambda f: "same as A" if f == SAME else FORMATS[f].label, default=SAME,
          help="B's weights format."),
    Input("b_kv", "B: KV cache", "select", options=_same_or(KV_FORMATS), page=PAGE_COMPARE, variant_of="kv",
          labels=lambda f: "same as A" if f == SAME else FORMATS[f].label, default=SAME,
          help="B's KV-cache format (inference)."),
    Input("b_gpus", "B: GPUs (0 = same as A)", "number", lo=0, hi=MAX_LAYOUT_GPUS, step=1, whole=True,
          page=PAGE_COMPARE, variant_of="gpus", none_when=0, default=0.0, help="B's GPU count."),
    Input("b_batch", "B: batch (0 = same as A)", "number", lo=0, hi=MAX_BATCH, step=1, whole=True,
          page=PAGE_COMPARE, variant_of="batch", none_when=0, default=0.0, help="B's batch."),
)
# fmt: on
INPUTS: dict[str, Input] = {i.key: i for i in RECORDS}
DEFAULTS: dict[str, Any] = {i.key: i.default for i in RECORDS}
SIDEBAR = tuple(i for i in RECORDS if i.page is None)
assert set(JOBS) == ALL_JOBS


def page_inputs(page: str) -> tuple[Input, ...]:
    return tuple(i for i in RECORDS if i.page == page)


def group_inputs(title: str) -> tuple[Input, ...]:
    return tuple(i for i in SIDEBAR if i.group == title)
