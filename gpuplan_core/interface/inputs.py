"""Every user input, declared once.

One ``Input`` record per input: its key (the widget key and the link parameter), label, help, default,
what is allowed (options and the label each is shown and linked as, or a numeric range), the Scenario
field it sets and in which unit, the jobs it applies to and its sidebar group. Everything else is
derived from these records:

- the Scenario (``to_scenario``, here) and Compare's scenario B (``variant``);
- the sidebar and Compare's B-side inputs (``gpuplan_ui/widgets.py`` renders a record as a widget);
- links and the scenario file (``links.py``), the CLI flags that mirror inputs (``cli.py``).

No streamlit import here (a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import lru_cache
from typing import Any, Literal

from ..common.errors import describe
from ..hardware.engines import ENGINES
from ..model.formats import FORMATS, KV_FORMATS, WEIGHT_FORMATS
from ..scenario.fields import MAX_CONTEXT_TOKENS
from ..scenario.scenario import Scenario

Widget = Literal["select", "radio", "select_slider", "slider", "number", "toggle", "text"]

# ---- jobs, groups and pages ---------------------------------------------------------------------

JOBS = {
    "interactive": "Interactive inference (chat, APIs)",
    "batch": "Batch inference (offline jobs)",
    "pretrain": "Pre-training",
    "finetune": "Fine-tuning",
}
INFERENCE = frozenset({"interactive", "batch"})
TRAINING = frozenset({"pretrain", "finetune"})
ALL_JOBS = INFERENCE | TRAINING

MAIN = "Scenario"


@dataclass(frozen=True)
class Group:
    """A sidebar group. A lazy group builds its inputs only while open or while one of them holds a
    value other than its default (so a link never loses a value, and a group left alone costs nothing)."""

    title: str
    lazy: bool = True
    expanded: bool = False


GROUPS = {
    g.title: g
    for g in (
        Group(MAIN, lazy=False, expanded=True),
        Group("GPU count and parallelism"),
        Group("Training", lazy=False, expanded=True),
        Group("Traffic and latency targets"),
        Group("Pricing"),
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
    "selective": "Selective (recompute attention scores)",
    "none": "None (keep every activation)",
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
ENGINE_LABELS = {k: e.label for k, e in ENGINES.items()}

# Use-case presets: what picking one sets (input values, in the inputs' own units). Typical values, ours,
# informed by the sources on Methodology (USE_CASE_SOURCES).
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
def _providers() -> tuple[str, ...]:
    from ..pricing.csv_file import load_pricing

    return ("any", *sorted({o.provider for o in load_pricing().offers}))


def _same_or(options: Callable[[], Sequence] | Sequence) -> Callable[[], list]:
    return lambda: [SAME, *(options() if callable(options) else options)]


# ---- the record ---------------------------------------------------------------------------------

_UNSET: Any = object()


@dataclass(frozen=True)
class Input:
    key: str  # widget key and link parameter: public, never renamed
    label: str
    help: str
    default: Any
    widget: Widget
    group: str = MAIN
    field: str | None = None  # the Scenario field this input sets (None: see ``to_fields``)
    options: Sequence | Callable[[], Sequence] | None = None
    labels: Mapping | Callable[[Any], str] | None = None  # option -> label shown and written to links
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    whole: bool = False  # a whole number (held by a float widget; see gpuplan_ui/widgets.py)
    fmt: str | None = None  # number display format
    scale: float = 1.0  # Scenario value = widget value x scale (ms -> s, billions -> count)
    none_when: Any = _UNSET  # the widget value that means "not set" (the field gets None)
    jobs: frozenset[str] = ALL_JOBS  # the jobs it applies to
    source: str | None = None  # the model source it applies to (model, size, Hugging Face id)
    page: str | None = None  # a page's own input (url path), else a sidebar input
    variant_of: str | None = None  # Compare: the A-side input this B-side input overrides
    modifies: str | None = None  # an input that changes how another input's field is set
    job_labels: Mapping[str, str] = dc_field(default_factory=dict)
    short: str = ""  # name in "changed in closed groups"
    max_chars: int = 200
    to_fields: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None
    cli: str | None = _UNSET  # CLI flag (default: --field-name); None: no flag
    cli_aliases: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()  # the Scenario fields ``to_fields`` sets, when not ``field``

    def field_names(self) -> tuple[str, ...]:
        return self.sets or ((self.field,) if self.field else ())

    # -- options and labels
    def option_list(self) -> list:
        o = self.options() if callable(self.options) else self.options
        return list(o or [])

    def label_of(self, option: Any) -> str:
        if self.labels is None:
            return plain(option)
        if callable(self.labels):
            return str(self.labels(option))
        return str(self.labels.get(option, option))

    def label_for(self, job: str) -> str:
        return self.job_labels.get(job, self.label)

    @property
    def choice(self) -> bool:
        return self.widget in ("select", "radio", "select_slider")

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Does this input take part in the scenario these values describe?"""
        if self.page is not None:
            return True
        job = values.get("workload", INPUTS["workload"].default)
        if job not in self.jobs:
            return False
        return self.source is None or values.get("src", INPUTS["src"].default) == self.source

    def allowed(self) -> str:
        """What is allowed, in words (for messages)."""
        if self.choice:
            shown = [self.label_of(o) for o in self.option_list()]
            return ", ".join(shown[:10]) + (" ..." if len(shown) > 10 else "")
        if self.widget == "toggle":
            return "true or false"
        if self.widget == "text":
            return f"text up to {self.max_chars} characters"
        rng = f"{plain(self.lo)} to {plain(self.hi)}"
        return (
            ("whole numbers " if self.whole else "")
            + rng
            + (f" ({plain(self.none_when)} = none)" if self.none_when is not _UNSET else "")
        )

    # -- one value: parse from text (a link or a file), write as text
    def parse(self, raw: Any) -> tuple[Any, str | None]:
        """(value, None) or (value to use, a note). The value to use is the default when raw is not allowed."""
        text = str(raw)[:2000]
        shown = f"{self.key}={text[:40]!r}"
        if self.choice:
            for o in self.option_list():
                if text == self.label_of(o) or text == str(o):
                    return o, None
            return self.default, f"{shown} is not allowed (allowed: {self.allowed()}); the default is used."
        if self.widget == "toggle":
            if isinstance(raw, bool):
                return raw, None
            if text.lower() in ("true", "false"):
                return text.lower() == "true", None
            return self.default, f"{shown} must be true or false; the default is used."
        if self.widget == "text":
            if len(text) > self.max_chars:
                return self.default, f"{self.key} is longer than {self.max_chars} characters; the default is used."
            return text, None
        try:
            v = float(text.replace(",", "")) if not isinstance(raw, bool) else math.nan
        except ValueError:
            return self.default, f"{shown} is not a number (allowed: {self.allowed()}); the default is used."
        if not (self.lo <= v <= self.hi):  # also rejects nan
            return self.default, f"{shown} is outside {plain(self.lo)} to {plain(self.hi)}; the default is used."
        if self.whole and not v.is_integer():
            return float(round(v)), f"{shown} is not a whole number; {round(v)} is used."
        return v, None

    def link_value(self, value: Any) -> str:
        if self.choice:
            return self.label_of(value)
        if self.widget == "toggle":
            return "true" if value else "false"
        return plain(value)

    def shown(self, value: Any) -> str:
        """A value as a person reads it (the "changed in closed groups" line)."""
        if self.widget == "slider" and self.hi is not None and self.hi <= 1:
            return f"{value:.0%}"
        if self.widget == "number":
            return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"
        return self.link_value(value)

    def is_default(self, value: Any) -> bool:
        return same_value(value, self.default)

    # -- the Scenario field(s) it sets
    def fields(self, value: Any, values: Mapping[str, Any]) -> dict[str, Any]:
        if self.to_fields is not None:
            return self.to_fields(value, values)
        if self.field is None:
            return {}
        return {self.field: self.field_value(value)}

    def field_value(self, value: Any) -> Any:
        if self.none_when is not _UNSET and same_value(value, self.none_when):
            return None
        if self.widget == "number" or self.widget == "slider":
            v = float(value) * self.scale
            return round(v) if self.whole or INT_FIELDS.get(self.field) else v
        if self.widget == "select_slider" and self.scale != 1:
            return round(float(value) * self.scale)
        return value

    # -- the CLI flag
    @property
    def flag(self) -> str | None:
        if self.cli is None or self.page is not None or self.field is None:
            return None
        return self.cli if self.cli is not _UNSET else "--" + self.field.replace("_", "-")


def plain(v: Any) -> str:
    """A number as a plain decimal (no exponent, no trailing .0), anything else as str."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e16:
        return str(int(v))
    return repr(float(v))


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


# ---- composite fields ---------------------------------------------------------------------------


def _job_fields(job: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    mode = "inference" if job in INFERENCE else ("training" if job == "pretrain" else "finetune")
    return {"mode": mode, "serving": "batch" if job == "batch" else "interactive"}


def _batch_fields(v: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    inference = values.get("workload", "interactive") in INFERENCE
    return {"batch": "max" if inference and values.get("batch_max") else round(float(v))}


# ---- the registry -------------------------------------------------------------------------------

INT_FIELDS = {"params": True, "spec_draft_params": True, "spec_tokens": True, "lora_rank": True}
_TARGETS = frozenset({"interactive"})

# One record per input, compact on purpose: a catalog to read down (ruff format would give each argument a line).
# fmt: off
RECORDS: tuple[Input, ...] = (
    # the job and the model
    Input("workload", "Job", "What the GPUs will do. Inference is judged by latency and tokens per dollar; "
          "training by completion time and cost per run.", "interactive", "select", options=tuple(JOBS),
          labels=JOBS, to_fields=_job_fields, sets=("mode", "serving"), cli=None),
    Input("usecase", "Use case", "Sets input and output tokens and the latency targets to typical values for the "
          "use case (Methodology says where they come from); change any of them afterwards.", "chat", "select",
          options=tuple(USE_CASES), labels=lambda k: USE_CASES[k]["label"], jobs=INFERENCE, cli=None),
    Input("src", "Model", "A published model with its exact architecture, a bare size (an approximate "
          "Llama-style shape is derived), or any Hugging Face config.json.", "preset", "radio",
          options=tuple(MODEL_SOURCES), labels=MODEL_SOURCES, cli=None),
    Input("model", "Published model", "Architectures from the models' published configs (sources on "
          "Methodology).", "Llama-3.1-8B", "select", field="preset", options=_presets, source="preset",
          short="model", cli=None),
    Input("size_b", "Model size (billions of parameters)", "Parameters in billions. The memory of weights is "
          "exact; KV cache and activations use a derived Llama-style shape and are approximate.", 7, "select_slider",
          field="params", options=SIZES_B, labels=lambda v: f"{v:g}B", scale=1e9, source="size", cli=None),
    Input("hf", "Hugging Face model id", "Fetched from huggingface.co when the server is online; otherwise "
          "upload the config.json below.", "", "text", field="config_text", source="config", cli=None),
    Input("method", "Fine-tuning method", "LoRA trains small adapters on a frozen base; QLoRA also stores the "
          "base in 4-bit NF4.", "lora", "select", field="method", options=tuple(METHODS), labels=METHODS,
          jobs=frozenset({"finetune"}), short="method"),
    Input("weights", "Weights format", "Bytes per weight including scale metadata (4-bit formats store scales "
          "too). Training uses mixed precision whatever is chosen here.", "bf16", "select",
          field="weights_format", options=tuple(WEIGHT_FORMATS), labels=lambda f: FORMATS[f].label),
    Input("kv", "KV-cache format", "The attention cache per token; FP8 halves it.", "bf16", "select",
          field="kv_format", options=tuple(KV_FORMATS), labels=lambda f: FORMATS[f].label, jobs=INFERENCE),
    # the request shape
    Input("in", "Input tokens per request", "The prompt: system prompt, history, documents and the question. "
          "Prefill time and KV cache grow with it.", 2000.0, "number", field="input_tokens", lo=1,
          hi=MAX_CONTEXT_TOKENS, step=100, whole=True, jobs=INFERENCE, short="input tokens"),
    Input("out", "Output tokens per request", "The answer's length. Decode time grows with it; each "
          "sequence's KV cache holds input + output tokens at its end.", 300.0, "number", field="output_tokens",
          lo=1, hi=MAX_CONTEXT_TOKENS, step=50, whole=True, jobs=INFERENCE, short="output tokens"),
    Input("ctx", "Sequence length (tokens)", "Tokens in each training sequence. Activations grow with it.", 4096,
          "select_slider", field="sequence_tokens", options=SEQUENCE_LENGTHS, labels=tokens_label,
          jobs=TRAINING),
    Input("batch_max", "Use the largest batch that fits", "Throughput at the most concurrent sequences the "
          "memory allows.", False, "toggle", modifies="batch", jobs=INFERENCE, cli=None),
    Input("batch", "Batch (concurrent sequences)", "Sequences processed together; each keeps its own KV cache.",
          8.0, "number", field="batch", lo=1, hi=4096, step=1, whole=True, to_fields=_batch_fields,
          job_labels={"pretrain": "Micro-batch per GPU", "finetune": "Micro-batch per GPU"}),
    Input("gpu", "GPU", "Any: the recommendation searches every GPU type (detail views show an H100 SXM). A GPU type: "
          "only its offers are priced, and the detail views show it.", "any", "select", field="gpu",
          options=lambda: ["any", *_gpu_ids()], labels=lambda g: "Any GPU" if g == "any" else _gpu_label(g),
          none_when="any"),
    Input("meeting", "Meeting view", "For a projector: hides this sidebar and the detail tables and enlarges the "
          "type, leaving each page's answer, headline numbers and one chart. In the link; 'Leave meeting view' at "
          "the top of each page turns it off.", False, "toggle", cli=None),
    # GPU count and parallelism
    Input("gpus", "GPUs", "GPUs in the job: tensor parallel x pipeline stages x data-parallel replicas.", 1.0,
          "number", group="GPU count and parallelism", field="gpus", lo=1, hi=4096, step=1, whole=True,
          short="GPUs"),
    Input("tp", "Tensor parallel", "Splits every layer across GPUs (must divide the attention heads). Adds two "
          "all-reduces per layer.", 1, "select", group="GPU count and parallelism", field="tp",
          options=TP_CHOICES, short="tensor parallel"),
    Input("pp", "Pipeline stages", "Splits the layers into stages.", 1, "select",
          group="GPU count and parallelism", field="pp", options=PP_CHOICES, short="pipeline stages"),
    # training
    Input("tokens_b", "Training tokens (billions)", "Tokens processed in the run (epochs x dataset); Chinchilla's "
          "rule of thumb is 20 per parameter.", 100.0, "number", group="Training", field="training_tokens",
          lo=0.001, hi=100_000, step=10, fmt="%.3f", scale=1e9, jobs=frozenset({"pretrain"}),
          short="training tokens (B)"),
    Input("ft_tokens_m", "Fine-tuning tokens (millions)", "Examples x tokens per example x epochs: 100 million is "
          "about 50,000 examples of 1,000 tokens, twice.", 100.0, "number", group="Training",
          field="training_tokens", lo=0.001, hi=1_000_000, step=10, fmt="%.1f", scale=1e6,
          jobs=frozenset({"finetune"}), short="fine-tuning tokens (M)", cli=None),
    Input("mfu", "MFU (model FLOPs utilization)", "Share of the dense peak a training run achieves; large runs "
          "report 0.35-0.55.", 0.40, "slider", group="Training", field="mfu", lo=0.05, hi=0.8, step=0.01,
          jobs=TRAINING),
    Input("zero", "ZeRO stage", "1 shards optimizer states, 2 also gradients, 3 also weights over the "
          "data-parallel GPUs.", 0, "select", group="Training", field="zero_stage", options=(0, 1, 2, 3),
          jobs=TRAINING),
    Input("acct", "Memory accounting", "Two published rules for mixed-precision Adam; the app says which it "
          "used.", "zero", "select", group="Training", field="accounting", options=tuple(ACCOUNTING),
          labels=ACCOUNTING, jobs=TRAINING),
    Input("opt", "Optimizer", "AdamW keeps two FP32 states per parameter (8 bytes), 8-bit Adam 2, SGD 4.",
          "adamw", "select", group="Training", field="optimizer", options=tuple(OPTIMIZERS), labels=OPTIMIZERS,
          jobs=TRAINING),
    Input("offload", "CPU offload", "DeepSpeed can keep the optimizer states, master weights and gradients in the "
          "host's RAM (and, at ZeRO-3, the weights too): far less GPU memory, slower steps. The app shows the host "
          "RAM each machine then needs.", "none", "select", group="Training", field="offload",
          options=tuple(OFFLOAD), labels=OFFLOAD, jobs=TRAINING),
    Input("recompute", "Activation checkpointing", "Full: keep only each layer's input and recompute the rest in "
          "the backward pass (~30% more compute, far less memory; the usual fine-tuning setting). Selective: "
          "recompute the attention scores only (FlashAttention already avoids storing them). None: keep every "
          "activation.", "full", "select", group="Training", field="recompute", options=tuple(RECOMPUTE),
          labels=RECOMPUTE, jobs=TRAINING),
    Input("lora_rank", "LoRA rank", "Rank of the adapters (LoRA and QLoRA): adapter parameters grow with it.",
          16.0, "number", group="Training", field="lora_rank", lo=1, hi=4096, step=8, whole=True,
          jobs=frozenset({"finetune"})),
    Input("deadline_h", "Finish within (hours, 0 = no deadline)", "The run's completion-time target.", 0.0,
          "number", group="Training", field="deadline_hours", lo=0, hi=100_000, step=24, fmt="%.0f", none_when=0,
          jobs=TRAINING),
    Input("overhead", "Failed runs and sweeps", "Compute spent on top of the final run (industry estimates "
          "30-50%).", 0.30, "slider", group="Training", field="overhead_factor", lo=0.0, hi=1.0, step=0.05,
          jobs=TRAINING),
    # traffic and latency targets
    Input("rpd", "Requests per day", "Sizes the fleet and the serverless bill; 0 = one replica.", 10_000.0,
          "number", group="Traffic and latency targets", field="requests_per_day", lo=0, hi=1e9, step=1000,
          fmt="%.0f", none_when=0, jobs=INFERENCE, short="requests/day"),
    Input("peak", "Peak-to-average traffic", "The busiest hour's rate over the day's average: replicas are sized "
          "for the peak.", 3.0, "number", group="Traffic and latency targets", field="peak_to_average", lo=1,
          hi=100, step=0.5, jobs=INFERENCE, short="peak/average"),
    Input("ttft_ms", "TTFT target, p95 (ms, 0 = none)", "Time to first token that 95% of requests must beat under "
          "the traffic (with no traffic estimate: a single request's).", 2000.0, "number",
          group="Traffic and latency targets", field="ttft_target_s", lo=0, hi=600_000, step=100, fmt="%.0f",
          scale=1e-3, none_when=0, jobs=_TARGETS, short="TTFT target ms"),
    Input("tpot_ms", "TPOT target, mean (ms, 0 = none)", "Mean time per later token (50 ms is about 20 tokens/s).",
          100.0,
          "number", group="Traffic and latency targets", field="tpot_target_s", lo=0, hi=10_000, step=5,
          fmt="%.0f", scale=1e-3, none_when=0, jobs=_TARGETS, short="TPOT target ms"),
    # pricing
    Input("billing", "Billing", "Which offers to consider. Spot can be reclaimed at short notice; serverless "
          "bills start-up, execution and idle time.", "any", "select", group="Pricing", field="billing",
          options=tuple(BILLING), labels=BILLING, none_when="any"),
    Input("provider", "Provider", "Only this provider's offers (from the pricing file).", "any", "select",
          group="Pricing", field="provider", options=_providers, none_when="any"),
    Input("prices", "Your pricing file", "How a pricing file you load on the Data page is used: added to the "
          "bundled offers (an offer with the same id is replaced by yours), or alone.", "add", "select",
          group="Pricing", options=tuple(PRICE_SOURCES), labels=PRICE_SOURCES, short="your prices"),
    Input("myprice", "Your prices (USD per GPU-hour)", "Negotiated or committed rates no public catalog shows: "
          "'offer-id=price', separated by commas (offer ids are in the Cost page's tables). They replace the "
          "catalog price everywhere, marked 'your price', and travel in the link.", "", "text", group="Pricing",
          max_chars=1000, short="your prices", cli=None),
    Input("hours", "Hours per month", "730 h is the usual convention (8,760 h / 12).", 730.0, "number",
          group="Pricing", field="hours_per_month", lo=1, hi=744, step=10, fmt="%.0f", short="hours/month"),
    Input("busy", "Serving utilization (for $ per 1M tokens)", "Share of paid time spent serving at the modelled "
          "throughput.", 0.5, "slider", group="Pricing", field="utilization", lo=0.05, hi=1.0, step=0.05,
          short="serving utilization"),
    Input("spot_restart", "Spot restart overhead", "Work lost to reclaimed spot instances, as a share of the "
          "run.", 0.10, "slider", group="Pricing", field="spot_restart_overhead", lo=0.0, hi=1.0, step=0.05,
          short="spot restarts"),
    # assumptions
    Input("util", "Memory utilization", "Share of usable VRAM a job may fill (vLLM's gpu_memory_utilization).",
          0.90, "slider", group="Assumptions", field="memory_utilization", lo=0.5, hi=1.0, step=0.01,
          short="memory utilization"),
    Input("engine", "Serving engine", "The runtime terms of the memory budget follow the engine's documented "
          "defaults: CUDA graphs, chunked prefill (or the whole prompt at once), logits held, KV blocks "
          "(Methodology lists each with its source).", "vllm", "select", group="Assumptions", field="engine",
          options=tuple(ENGINE_LABELS), labels=ENGINE_LABELS, jobs=INFERENCE, short="engine"),
    Input("prefix", "Prompt share already cached (prefix caching)", "Share of each prompt a prefix cache already "
          "holds: prefill skips it.", 0.0, "slider", group="Assumptions", field="prefix_cache_fraction", lo=0.0,
          hi=0.95, step=0.05, jobs=INFERENCE, short="prefix cached", cli_aliases=("--prefix-cache",)),
    Input("spec_b", "Speculative decoding: draft model (billions, 0 = off)", "A small model proposes tokens the "
          "big one verifies in one step (Leviathan et al. 2023).", 0.0, "number", group="Assumptions",
          field="spec_draft_params", lo=0, hi=1000, step=0.5, scale=1e9, none_when=0, jobs=INFERENCE,
          short="draft model (B)"),
    Input("spec_k", "Speculative tokens per step", "Tokens the draft proposes before each verification.", 4.0,
          "number", group="Assumptions", field="spec_tokens", lo=1, hi=16, step=1, whole=True, jobs=INFERENCE,
          short="draft tokens"),
    Input("spec_accept", "Draft acceptance rate", "Share of drafted tokens the big model accepts.", 0.7, "slider",
          group="Assumptions", field="spec_acceptance", lo=0.0, hi=1.0, step=0.05, jobs=INFERENCE,
          short="acceptance"),
    # the pages' own inputs
    Input("alt_formats", "Also consider FP8 and INT4 weights (a quality trade-off to check)", "Searches the "
          "other weight formats too; check the model's quality in them before relying on it.", False, "toggle",
          page=PAGE_OVERVIEW),
    Input("market", "Project this month's cheapest cost with", "One estimate at a time: they use different "
          "baselines and are never averaged.", "none", "radio", options=tuple(MARKET), labels=MARKET,
          page=PAGE_COST),
    Input("train_bill", "Training or fine-tuning bill (USD, 0 = none)", "What you paid to train or fine-tune the "
          "model you serve: the Cost page then draws it against the months of serving. 0: no such bill (a "
          "published model you only serve).", 0.0, "number", lo=0, hi=1e11, step=1000, fmt="%.0f", page=PAGE_COST),
    Input("b_gpu", "B: GPU", "B's GPU type.", SAME, "select", options=_same_or(_gpu_ids),
          labels=lambda g: "same as A" if g == SAME else _gpu_label(g), page=PAGE_COMPARE, variant_of="gpu"),
    Input("b_weights", "B: weights", "B's weights format.", SAME, "select", options=_same_or(WEIGHT_FORMATS),
          labels=lambda f: "same as A" if f == SAME else FORMATS[f].label, page=PAGE_COMPARE,
          variant_of="weights"),
    Input("b_kv", "B: KV cache", "B's KV-cache format (inference).", SAME, "select", options=_same_or(KV_FORMATS),
          labels=lambda f: "same as A" if f == SAME else FORMATS[f].label, page=PAGE_COMPARE, variant_of="kv"),
    Input("b_gpus", "B: GPUs (0 = same as A)", "B's GPU count.", 0.0, "number", lo=0, hi=4096, step=1, whole=True,
          page=PAGE_COMPARE, variant_of="gpus", none_when=0),
    Input("b_batch", "B: batch (0 = same as A)", "B's batch.", 0.0, "number", lo=0, hi=4096, step=1, whole=True,
          page=PAGE_COMPARE, variant_of="batch", none_when=0),
)
# fmt: on
INPUTS: dict[str, Input] = {i.key: i for i in RECORDS}
DEFAULTS: dict[str, Any] = {i.key: i.default for i in RECORDS}
SIDEBAR = tuple(i for i in RECORDS if i.page is None)


def page_inputs(page: str) -> tuple[Input, ...]:
    return tuple(i for i in RECORDS if i.page == page)


def group_inputs(title: str) -> tuple[Input, ...]:
    return tuple(i for i in SIDEBAR if i.group == title)


# ---- the scenario --------------------------------------------------------------------------------


def scenario_fields(values: Mapping[str, Any], config_text: str | None = None) -> dict[str, Any]:
    """Input values -> Scenario fields (not validated yet). An input that does not apply to the job leaves its
    field at the Scenario's default."""
    v = {**DEFAULTS, **values}
    fields: dict[str, Any] = {}
    for inp in SIDEBAR:
        if not inp.applies(v):
            continue
        if inp.key == "hf":
            if config_text is not None:
                fields["config_text"] = config_text
            continue
        fields.update(inp.fields(v[inp.key], v))
    if v["src"] == "config" and config_text is None:  # no config loaded yet: the default model
        fields["preset"] = INPUTS["model"].default
    return fields


def to_scenario(values: Mapping[str, Any], config_text: str | None = None) -> tuple[Scenario, list[str]]:
    """A validated Scenario and notes: what is wrong (then the closest valid scenario is used) or worth saying."""
    try:
        sc = Scenario(**scenario_fields(values, config_text))
    except ValueError as exc:
        msg = describe(exc)
        v = {**DEFAULTS, **values}
        if config_text is not None:
            try:
                sc = Scenario(**scenario_fields({**v, "src": "preset"}))
                return sc, [f"The config could not be used: {msg}. Showing {sc.model().name}."]
            except ValueError:
                pass
        return Scenario(**scenario_fields(DEFAULTS)), [f"{msg}. Showing the default scenario instead."]
    return sc, sc.warnings()


def variant(sc: Scenario, values: Mapping[str, Any], prefix: str = "b_") -> tuple[Scenario, list[str]]:
    """Scenario B: A with the overrides of the ``b_*`` inputs (each "same as A" by default)."""
    v = {**DEFAULTS, **values}
    update: dict[str, Any] = {}
    notes: list[str] = []
    for inp in RECORDS:
        if not inp.key.startswith(prefix) or inp.variant_of is None:
            continue
        val = v[inp.key]
        if same_value(val, SAME) or (inp.none_when is not _UNSET and same_value(val, inp.none_when)):
            continue
        a = INPUTS[inp.variant_of]
        if a.applies(v):
            update.update(a.fields(val, v))
    if "gpus" in update and update["gpus"] % (sc.tp * sc.pp):
        update |= {"tp": 1, "pp": 1}
        notes.append(f"B: {update['gpus']} GPUs is not a multiple of A's tp x pp = {sc.tp * sc.pp}: B runs tp 1, pp 1.")
    try:
        return Scenario(**{**sc.model_dump(), **update}), notes
    except ValueError as exc:
        return sc, [f"B: {describe(exc)}. B is shown as A."]
