"""The input registry's option lists and their labels, the use-case presets, the helpers that list catalog
choices, and the composite fields (an input that sets several Scenario fields). The records themselves are in
``records_job.py``, ``records_traffic.py`` and ``records_site.py``; ``registry.py`` gathers them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..hardware.engines import ENGINES, RELEASES
from .record import DEFAULT_JOB, INFERENCE

# Pages with inputs of their own (url path -> title). They are in the link like every other input.
PAGE_OVERVIEW, PAGE_COST, PAGE_COMPARE = "", "Cost", "Compare"
PAGE_DATA = "Data"
PAGE_PERF = "Performance"

# ---- option lists and their labels ---------------------------------------------------------------

MODEL_SOURCES = {"preset": "Published model", "size": "Model size only", "config": "Hugging Face config"}
SIZES_B = (
    0.5,
    1,
    1.5,
    2,
    3,
    4,
    7,
    8,
    9,
    13,
    14,
    20,
    27,
    32,
    34,
    40,
    47,
    70,
    72,
    90,
    110,
    120,
    175,
    235,
    340,
    405,
    480,
    671,
    1000,
    1800,
    2000,
)
SEQUENCE_LENGTHS = tuple(2**i for i in range(7, 21))  # 128 ... 1,048,576


def round_steps(lo: float, hi: float) -> tuple[int, ...]:
    """Log-spaced round numbers from lo to hi: 1, 1.5, 2, 3, 4, 5, 6, 8 x each power of ten (about 1.3x apart, the
    use cases' lengths among them)."""
    out = []
    for exp in range(0, 9):
        for m in (1, 1.5, 2, 3, 4, 5, 6, 8):
            v = m * 10**exp
            if lo <= v <= hi and float(v).is_integer():
                out.append(int(v))
    return tuple(out)


INPUT_TOKEN_STEPS = round_steps(100, 1_000_000)  # the input-tokens slider's stops (the box takes any value)
OUTPUT_TOKEN_STEPS = round_steps(10, 100_000)
BATCH_STEPS = tuple(2**i for i in range(13))  # 1 ... 4,096 sequences


def short_number(v: float) -> str:
    """A slider stop as a person reads it: 300, 1.5k, 128k, 1M; a value between round ones in full (7,936)."""
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if v >= div and round(v / div, 1) * div == v:
            return f"{v / div:g}{unit}"
    return f"{v:,g}" if v < 1e6 else f"{v:,.0f}"


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
RECOMPUTE_SEARCHED = {"auto": "Searched with the layout: the cheapest that fits"}
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
LATEST_VERSION = "latest"  # the engine-version input's "not set": the engine's latest release line
VERSION_LABELS = {LATEST_VERSION: "Latest release", **{v: r.label for (_, v), r in RELEASES.items()}}


def version_fields(value: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """The engine-version input as its field: a release line of the engine chosen, else none (a line of another
    engine, left from before the engine changed, does not apply: the engine's latest is used)."""
    engine = values.get("engine", "vllm")
    return {"engine_version": value if (engine, value) in RELEASES else None}


# Use-case presets: what picking one sets (input values, in the inputs' own units). Typical values, ours,
# informed by the sources on Methodology (USE_CASE_SOURCES). "chat", the default, is the Scenario's defaults.
USE_CASES: dict[str, dict] = {
    "custom": {"label": "Custom (set the numbers below)"},
    "chat": {"label": "Chat assistant", "in": 2000.0, "out": 300.0, "ttft_ms": 2000.0, "tpot_ms": 100.0},
    "rag": {
        "label": "RAG over documents (long input, short output)",
        "in": 8000.0,
        "out": 300.0,
        "ttft_ms": 3000.0,
        "tpot_ms": 100.0,
    },
    "code": {
        "label": "Code completion (short, strict first token)",
        "in": 1500.0,
        "out": 100.0,
        "ttft_ms": 300.0,
        "tpot_ms": 30.0,
    },
    "summarize": {
        "label": "Summarisation / batch jobs (no first-token target)",
        "in": 6000.0,
        "out": 500.0,
        "ttft_ms": 0.0,
        "tpot_ms": 0.0,
    },
    "agent": {
        "label": "Agent steps (long context, short tool calls)",
        "in": 4000.0,
        "out": 200.0,
        "ttft_ms": 1000.0,
        "tpot_ms": 50.0,
    },
}
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


def _gpu_named(name: str) -> str:
    """The catalog id a GPU's name or alias stands for ('TPU v6e', 'H100', 'Gaudi 3'); KeyError/ValueError if none."""
    from ..hardware.catalog import get_gpu

    if not name.isprintable() or name != name.strip():  # a crafted value is not a name ('H100\\x00')
        raise ValueError(f"not a GPU name: {name!r}")
    return get_gpu(name).gpu


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


def _recompute_fields(v: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    return {"recompute_auto": True} if v == "auto" else {"recompute": str(v), "recompute_auto": False}


# ---- the records' groups ----------------------------------------------------------------------

TARGETS = frozenset({"interactive"})
PAR, TRAIN, TRAFFIC, PRICE, SITE, ASSUME = (
    "GPU count and parallelism",
    "Training",
    "Traffic and latency targets",
    "Pricing",
    "Site and owning",
    "Assumptions",
)
