"""The one shared sidebar: navigation, then every scenario input, each bound to the URL.

Every page (and app.py) calls ``page.setup()``, which calls ``render_sidebar()``; a cold link to
any page therefore rebuilds the same scenario (no st.navigation: the folder is ``pages/``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from gpuplan_core.scenario import Scenario

from . import cached
from .fmt import md_escape
from .state import (
    DEFAULTS,
    INT_KEYS,
    MODEL_SOURCES,
    build_scenario,
    check_query_params,
    choices,
    scenario_json,
    scenario_to_widgets,
)

PAGES = [
    ("app.py", "Overview & recommendation", ":material/recommend:"),
    ("pages/1_Memory.py", "Memory", ":material/memory:"),
    ("pages/2_Performance.py", "Performance", ":material/speed:"),
    ("pages/3_Cost.py", "Cost", ":material/payments:"),
    ("pages/4_Compare.py", "Compare A vs B", ":material/compare_arrows:"),
    ("pages/5_Data.py", "Data & pricing upload", ":material/table:"),
    ("pages/6_Methodology.py", "Methodology", ":material/menu_book:"),
]
BIND: dict[str, Any] = {"bind": "query-params"}


def _select(label, key, help=None):
    """A bound selectbox; options and labels come from state.choices (the URL shows the label)."""
    options, fmt = choices(key)
    kw = {} if key in st.session_state else {"index": options.index(DEFAULTS[key]) if DEFAULTS[key] in options else 0}
    return st.selectbox(label, options, key=key, format_func=fmt, help=help, **kw, **BIND)


def _number(label, key, lo, hi, step, help=None, fmt=None):
    """A bound number input. Always float-typed: Streamlit 1.67 crashes seeding an integer input from a
    link value such as ``INF`` (OverflowError in int()), while a float input ignores it. Whole-number
    fields are shown with "%.0f" (not "%d", which makes Streamlit log a warning with a stack trace
    on every rerun, ~3 ms each) and rounded by the scenario builder."""
    kw = {} if key in st.session_state else {"value": float(DEFAULTS[key])}
    return st.number_input(
        label,
        min_value=float(lo),
        max_value=float(hi),
        step=float(step),
        key=key,
        help=help,
        format=fmt or ("%.0f" if key in INT_KEYS else None),
        **kw,
        **BIND,
    )


def _slider(label, key, help=None):
    options, fmt = choices(key)
    kw = {} if key in st.session_state else {"value": DEFAULTS[key]}
    return st.select_slider(label, options=options, key=key, format_func=fmt, help=help, **kw, **BIND)


def _apply_import() -> None:
    """on_change of the scenario upload: set widget values before they render on the rerun."""
    f = st.session_state.get("scenario_upload")
    if f is None:
        return
    values, notes = scenario_to_widgets(f.getvalue()[:200_000].decode("utf-8", "replace"))
    for k, v in values.items():
        st.session_state[k] = v
    st.session_state["import_notes"] = notes or [f"Scenario imported ({len(values)} values)."]


def _lazy_group(label: str, values: dict[str, Any]):
    """An expander whose widgets are built only while it is open or while one of its values differs from
    the default (set earlier in this session, or by the link); returns the expander to build them in, or
    None. When None, every value in the group is its default, and defaults are never in the link, so
    skipping the widgets loses nothing: the values are filled in from DEFAULTS. Most people never open
    these groups, so most reruns skip ~12 widgets (about 1 ms each). A group holding a non-default value
    is built even while collapsed, which keeps that value in the link."""
    keys = LAZY_GROUPS[label]
    exp = st.expander(label, key=f"open_{keys[0]}", on_change="rerun")
    if exp.open or any(_changed(k) for k in keys):
        return exp
    values.update({k: DEFAULTS[k] for k in keys})
    return None


# Short names for the values the lazy groups hold, for the "changed in closed groups" line.
SHORT = {
    "gpus": "GPUs",
    "tp": "tensor parallel",
    "pp": "pipeline stages",
    "rpd": "requests/day",
    "ttft_ms": "TTFT target ms",
    "tpot_ms": "TPOT target ms",
    "billing": "billing",
    "provider": "provider",
    "hours": "hours/month",
    "busy": "serving utilization",
    "util": "memory utilization",
    "prefix": "prefix cached",
}
LAZY_GROUPS = {
    "GPU count and parallelism": ("gpus", "tp", "pp"),
    "Traffic and latency targets": ("rpd", "ttft_ms", "tpot_ms"),
    "Pricing": ("billing", "provider", "hours", "busy"),
    "Assumptions": ("util", "prefix"),
}


def closed_changes(values: dict[str, Any]) -> str:
    """One line naming the changed values that sit in collapsed groups (empty when none), so a changed
    assumption is never out of sight."""
    parts = []
    for label, keys in LAZY_GROUPS.items():
        if st.session_state.get(f"open_{keys[0]}"):
            continue
        changed = [k for k in keys if k in values and values[k] != DEFAULTS[k]]
        if changed:
            parts.append(f"{label}: " + ", ".join(f"{SHORT[k]} {_shown(k, values[k])}" for k in changed))
    return "; ".join(parts)


def _shown(key: str, v: Any) -> str:
    if key in ("util", "prefix", "busy"):
        return f"{v:.0%}"
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() else f"{v:,g}"
    try:
        return str(choices(key)[1](v))
    except KeyError:
        return str(v)


def _changed(key: str) -> bool:
    """True if this session or the link holds a value for key other than its default. Streamlit keeps a
    bound widget's value under its key while the widget is not built, so an edit survives closing."""
    if key in st.session_state:
        return st.session_state[key] != DEFAULTS[key]
    return key in st.query_params


def render_sidebar() -> tuple[Scenario, dict[str, Any], list[str]]:
    raw = {k: str(v) for k, v in st.query_params.to_dict().items()}
    notes = check_query_params(raw)
    values: dict[str, Any] = {}
    with st.sidebar:
        for path, label, icon in PAGES:
            st.page_link(path, label=label, icon=icon)
        st.divider()
        st.subheader("Scenario")
        values["workload"] = _select(
            "Job",
            "workload",
            "What the GPUs will do. Inference is judged by latency and tokens per dollar; "
            "training by completion time and cost per run.",
        )
        mode = values["workload"]
        values["src"] = st.radio(
            "Model",
            list(MODEL_SOURCES),
            key="src",
            format_func=choices("src")[1],
            horizontal=True,
            help="A published model with its exact architecture, a bare size "
            "(an approximate Llama-style shape is derived), or any Hugging Face config.json.",
            **({} if "src" in st.session_state else {"index": 0}),
            **BIND,
        )
        config_text = None
        if values["src"] == "preset":
            values["model"] = _select(
                "Published model",
                "model",
                help="Architectures from the models' published configs (sources on Methodology).",
            )
        elif values["src"] == "size":
            values["size_b"] = _slider(
                "Model size (billions of parameters)",
                "size_b",
                "Parameters in billions. The memory of weights is exact; KV cache and "
                "activations use a derived Llama-style shape and are approximate.",
            )
        else:
            values["hf"] = st.text_input(
                "Hugging Face model id",
                key="hf",
                placeholder="owner/name",
                help="Fetched from huggingface.co when the server is online; otherwise upload the config.json below.",
                max_chars=200,
                **BIND,
            )
            up = st.file_uploader(
                "or upload config.json",
                type=["json"],
                key="cfg_upload",
                help="Stays in this browser session; it is not part of the shareable link.",
            )
            if up is not None:
                config_text = up.getvalue()[:2_000_000].decode("utf-8", "replace")
            elif values["hf"]:
                config_text, err = cached.hf_config(values["hf"])
                if err:
                    notes.append(f"Could not fetch {values['hf']!r}: {err}. Upload its config.json instead.")
            if config_text is None:
                notes.append("No config loaded yet: showing the default model.")
        if mode == "finetune":
            values["method"] = _select(
                "Fine-tuning method",
                "method",
                "LoRA trains small adapters on a frozen base; QLoRA also stores the base in 4-bit NF4.",
            )
        values["weights"] = _select(
            "Weights format",
            "weights",
            "Bytes per weight including scale metadata (4-bit formats store scales too). "
            "Training uses mixed precision whatever is chosen here.",
        )
        if mode in ("interactive", "batch"):
            values["kv"] = _select(
                "KV-cache format",
                "kv",
                "The attention cache per token; FP8 halves it.",
            )
        ctx_label = (
            "Context: prompt + output (tokens)" if mode in ("interactive", "batch") else "Sequence length (tokens)"
        )
        values["ctx"] = _slider(
            ctx_label,
            "ctx",
            "Tokens each sequence holds at its longest. KV cache and activations grow with it.",
        )
        if mode in ("interactive", "batch"):
            values["out"] = _number(
                "Output tokens per request",
                "out",
                1,
                131072,
                64,
                "Generated tokens; the prompt is the context less this.",
            )
            values["batch_max"] = st.toggle(
                "Use the largest batch that fits",
                key="batch_max",
                help="Throughput at the most concurrent sequences the memory allows.",
                **({} if "batch_max" in st.session_state else {"value": False}),
                **BIND,
            )
        values["batch"] = _number(
            "Batch (concurrent sequences)" if mode in ("interactive", "batch") else "Micro-batch per GPU",
            "batch",
            1,
            4096,
            1,
            "Sequences processed together; each keeps its own KV cache.",
        )
        values["gpu"] = _select(
            "GPU",
            "gpu",
            "The GPU type the detail views use; tables cover every catalog GPU.",
        )
        if (box := _lazy_group("GPU count and parallelism", values)) is not None:
            with box:
                values["gpus"] = _number(
                    "GPUs", "gpus", 1, 4096, 1, "GPUs in the job: tp x pp x data-parallel replicas."
                )
                values["tp"] = _select(
                    "Tensor parallel",
                    "tp",
                    help="Splits every layer across GPUs "
                    "(must divide the attention heads). Adds two all-reduces per layer.",
                )
                values["pp"] = _select("Pipeline stages", "pp", help="Splits the layers into stages.")
        if mode in ("pretrain", "finetune"):
            with st.expander("Training", expanded=True):
                values["tokens_b"] = _number(
                    "Training tokens (billions)",
                    "tokens_b",
                    0.001,
                    100000.0,
                    10.0,
                    "Tokens processed in the run (epochs x dataset).",
                    "%.3f",
                )
                values["mfu"] = st.slider(
                    "MFU (model FLOPs utilization)",
                    0.05,
                    0.8,
                    step=0.01,
                    key="mfu",
                    help="Share of the dense peak a training run achieves; large runs report 0.35-0.55.",
                    **({} if "mfu" in st.session_state else {"value": DEFAULTS["mfu"]}),
                    **BIND,
                )
                values["zero"] = _select(
                    "ZeRO stage",
                    "zero",
                    help="1 shards optimizer states, 2 also gradients, 3 also weights over the data-parallel GPUs.",
                )
                values["acct"] = _select(
                    "Memory accounting",
                    "acct",
                    "Two published rules for mixed-precision Adam; the app says which it used.",
                )
                values["opt"] = _select(
                    "Optimizer",
                    "opt",
                    "AdamW keeps two FP32 states per parameter (8 bytes), 8-bit Adam 2, SGD 4.",
                )
                values["recompute"] = _select(
                    "Activation checkpointing",
                    "recompute",
                    help="Full: keep only each layer's input and recompute the rest in the backward pass "
                    "(~30% more compute, far less memory; the usual fine-tuning setting). "
                    "Selective: recompute the attention scores only (FlashAttention already avoids storing them). "
                    "None: keep every activation.",
                )
                values["deadline_h"] = _number(
                    "Finish within (hours, 0 = no deadline)", "deadline_h", 0.0, 100000.0, 24.0
                )
        else:
            if (box := _lazy_group("Traffic and latency targets", values)) is not None:
                with box:
                    values["rpd"] = _number(
                        "Requests per day",
                        "rpd",
                        0.0,
                        1e9,
                        1000.0,
                        "Sizes the fleet and the serverless bill; 0 = one replica.",
                        "%.0f",
                    )
                    values["ttft_ms"] = _number(
                        "TTFT target (ms, 0 = none)",
                        "ttft_ms",
                        0.0,
                        600000.0,
                        100.0,
                        "Time to first token a user may wait.",
                        "%.0f",
                    )
                    values["tpot_ms"] = _number(
                        "TPOT target (ms, 0 = none)",
                        "tpot_ms",
                        0.0,
                        10000.0,
                        5.0,
                        "Time per later token (50 ms is about 20 tokens/s).",
                        "%.0f",
                    )
        if (box := _lazy_group("Pricing", values)) is not None:
            with box:
                values["billing"] = _select(
                    "Billing",
                    "billing",
                    "Which offers to consider. Spot can be reclaimed at short notice; serverless "
                    "bills start-up, execution and idle time.",
                )
                values["provider"] = _select(
                    "Provider", "provider", help="Only this provider's offers (from the pricing file)."
                )
                values["hours"] = _number(
                    "Hours per month", "hours", 1.0, 744.0, 10.0, "730 h is the usual convention.", "%.0f"
                )
                values["busy"] = st.slider(
                    "Serving utilization (for $ per 1M tokens)",
                    0.05,
                    1.0,
                    step=0.05,
                    key="busy",
                    help="Share of paid time spent serving at the modelled throughput.",
                    **({} if "busy" in st.session_state else {"value": DEFAULTS["busy"]}),
                    **BIND,
                )
        if (box := _lazy_group("Assumptions", values)) is not None:
            with box:
                values["util"] = st.slider(
                    "Memory utilization",
                    0.5,
                    1.0,
                    step=0.01,
                    key="util",
                    help="Share of usable VRAM a job may fill (vLLM's gpu_memory_utilization).",
                    **({} if "util" in st.session_state else {"value": DEFAULTS["util"]}),
                    **BIND,
                )
                values["prefix"] = st.slider(
                    "Prompt share already cached (prefix caching)",
                    0.0,
                    0.95,
                    step=0.05,
                    key="prefix",
                    help="Share of each prompt a prefix cache already holds: prefill skips it.",
                    **({} if "prefix" in st.session_state else {"value": 0.0}),
                    **BIND,
                )
        sc, errs = build_scenario(values, config_text)
        notes += errs
        if line := closed_changes(values):
            st.caption(md_escape("Changed in closed groups: " + line))
        # Rendered only while open (a lazy expander): its four elements are not rebuilt on every rerun.
        share = st.expander("Share and save", key="share_open", on_change="rerun")
        if share.open:
            with share:
                st.caption("This page's link reproduces the scenario (an uploaded config is not in the link).")
                st.code(_share_url(), language=None, wrap_lines=True)
                st.download_button(
                    "Download scenario (JSON)",
                    lambda: scenario_json(values, sc),  # written on click, not on every rerun
                    "gpuplan-scenario.json",
                    "application/json",
                    on_click="ignore",
                    key="dl_scenario",
                )
                st.file_uploader(
                    "Import a scenario JSON", type=["json"], key="scenario_upload", on_change=_apply_import
                )
    notes += st.session_state.pop("import_notes", [])
    return sc, values, notes


def _share_url() -> str:
    try:
        return st.context.url or "/"
    except Exception:  # noqa: BLE001 - older runtimes without context.url
        return "/"


def default_scenario() -> Scenario:
    return build_scenario(dict(DEFAULTS))[0]
