"""Widget keys, their defaults and allowed values, and the Scenario built from them.

No streamlit import here: the mapping from widget values to a validated Scenario is a pure function
(tested without a server). The keys are the public URL API: ``/?model=Llama-3.1-70B&ctx=8192``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from gpuplan_core.catalog import load_gpus, load_presets
from gpuplan_core.errors import describe
from gpuplan_core.formats import FORMATS, KV_FORMATS, WEIGHT_FORMATS
from gpuplan_core.scenario import Scenario

WORKLOADS = {
    "interactive": "Interactive inference (chat, APIs)",
    "batch": "Batch inference (offline jobs)",
    "pretrain": "Pre-training",
    "finetune": "Fine-tuning",
}
MODEL_SOURCES = {"preset": "Published model", "size": "Model size only", "config": "Hugging Face config"}
SIZES_B = [
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
]
CONTEXTS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576]
METHODS = {"full": "Full fine-tuning", "lora": "LoRA", "qlora": "QLoRA (4-bit base)"}
BILLING = {
    "any": "Any billing",
    "on_demand": "On-demand",
    "spot": "Spot / interruptible",
    "reserved": "Reserved",
    "serverless": "Serverless",
}
ACCOUNTING = {"zero": "ZeRO paper, 16 B/param", "hf": "Hugging Face, 18 B/param"}
RECOMPUTE = {
    "full": "Full (recompute every layer; the usual fine-tuning setting)",
    "selective": "Selective (recompute attention scores)",
    "none": "None (keep every activation)",
}
OPTIMIZERS = {"adamw": "AdamW", "adam8bit": "8-bit Adam", "sgd": "SGD with momentum"}
TP_CHOICES = [1, 2, 4, 8, 16, 32, 64]
PP_CHOICES = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
MARKET = {
    "none": "No projection",
    "a16z": "a16z (~10x/yr)",
    "epoch": "Epoch AI (~47%/quarter)",
    "stanford": "Stanford AI Index (>280x in 2 yrs)",
}


def tokens_label(n: int) -> str:
    return f"{n // 1024:,}k" if n >= 1024 and n % 1024 == 0 else f"{n:,}"


def size_label(v: float) -> str:
    return f"{v:g}B"


def gpu_label(gid: str) -> str:
    from gpuplan_core.catalog import get_gpu

    return get_gpu(gid).label


def format_label(name: str) -> str:
    return FORMATS[name].label


def gpu_ids() -> list[str]:
    return [g.gpu for g in load_gpus()]


def preset_names() -> list[str]:
    return list(load_presets())


# key -> default. Every key here is a widget bound to the URL; defaults are left out of links.
DEFAULTS: dict[str, Any] = {
    "workload": "interactive",
    "src": "preset",
    "model": "Llama-3.1-8B",
    "size_b": 7,
    "hf": "",
    "method": "lora",
    "weights": "bf16",
    "kv": "bf16",
    "ctx": 4096,
    "out": 256.0,
    "batch": 8.0,
    "batch_max": False,
    "gpu": "H100-SXM",
    "gpus": 1.0,
    "tp": 1,
    "pp": 1,
    "zero": 0,
    "acct": "zero",
    "opt": "adamw",
    "recompute": "full",
    "tokens_b": 100.0,
    "mfu": 0.40,
    "deadline_h": 0.0,
    "rpd": 10000.0,
    "ttft_ms": 2000.0,
    "tpot_ms": 100.0,
    "alt_formats": False,
    "billing": "any",
    "provider": "any",
    "util": 0.90,
    "prefix": 0.0,
    "hours": 730.0,
    "busy": 0.5,
}

# key -> (options, label shown and written to the URL). Streamlit writes a bound choice widget's
# formatted label into the link, so the labels are the public URL values ("?workload=Pre-training").
CHOICES: dict[str, tuple[list, Any]] = {
    "workload": (list(WORKLOADS), WORKLOADS.get),
    "src": (list(MODEL_SOURCES), MODEL_SOURCES.get),
    "method": (list(METHODS), METHODS.get),
    "weights": (WEIGHT_FORMATS, format_label),
    "kv": (KV_FORMATS, format_label),
    "ctx": (CONTEXTS, tokens_label),
    "size_b": (SIZES_B, size_label),
    "tp": (TP_CHOICES, str),
    "pp": (PP_CHOICES, str),
    "zero": ([0, 1, 2, 3], str),
    "acct": (list(ACCOUNTING), ACCOUNTING.get),
    "opt": (list(OPTIMIZERS), OPTIMIZERS.get),
    "recompute": (list(RECOMPUTE), RECOMPUTE.get),
    "billing": (list(BILLING), BILLING.get),
    "market": (list(MARKET), MARKET.get),
    "b_weights": (WEIGHT_FORMATS, format_label),
    "b_kv": (KV_FORMATS, format_label),
}
DYNAMIC_CHOICES = {
    "model": lambda: (preset_names(), str),
    "gpu": lambda: (gpu_ids(), gpu_label),
    "b_gpu": lambda: (gpu_ids(), gpu_label),
    "provider": lambda: (providers(), str),
}


@lru_cache(maxsize=1)
def _bundled_providers() -> tuple[str, ...]:
    from gpuplan_core.pricing import load_pricing

    return tuple(sorted({o.provider for o in load_pricing().offers}))


def providers() -> list[str]:
    return ["any", *_bundled_providers()]


def choices(key: str) -> tuple[list, Any]:
    return DYNAMIC_CHOICES[key]() if key in DYNAMIC_CHOICES else CHOICES[key]


def url_values(key: str) -> list[str]:
    opts, fmt = choices(key)
    return [str(fmt(o)) for o in opts]


def option_for(key: str, value: Any) -> Any:
    """The option whose label (or raw value) is ``value``; None when there is none."""
    opts, fmt = choices(key)
    for o in opts:
        if str(fmt(o)) == str(value) or str(o) == str(value):
            return o
    return None


INT_KEYS = {"out", "batch", "gpus", "b_gpus", "b_batch"}  # whole numbers, held by float inputs (see sidebar._number)
RANGES: dict[str, tuple[float, float]] = {
    "out": (1, 131072),
    "batch": (1, 4096),
    "gpus": (1, 4096),
    "b_gpus": (1, 4096),
    "b_batch": (1, 4096),
    "tokens_b": (0.001, 100_000.0),
    "mfu": (0.05, 0.8),
    "deadline_h": (0.0, 100_000.0),
    "rpd": (0.0, 1e9),
    "ttft_ms": (0.0, 600_000.0),
    "tpot_ms": (0.0, 10_000.0),
    "util": (0.5, 1.0),
    "prefix": (0.0, 0.95),
    "hours": (1.0, 744.0),
    "busy": (0.05, 1.0),
}


def check_query_params(params: dict[str, str]) -> list[str]:
    """Notes for link values that are not allowed (the widgets fall back to their defaults)."""
    return list(_check_query_params(tuple(sorted((str(k), str(v)) for k, v in params.items()))))


@lru_cache(maxsize=1024)
def _check_query_params(items: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    params = dict(items)
    notes = []
    for key, raw in params.items():
        raw = str(raw)
        if key in CHOICES or key in DYNAMIC_CHOICES:
            if option_for(key, raw) is None:
                allowed = url_values(key)
                shown = ", ".join(allowed[:10]) + (" ..." if len(allowed) > 10 else "")
                notes.append(f"Link value {key}={raw[:40]!r} is not allowed (allowed: {shown}); the default is used.")
        elif key in RANGES:
            lo, hi = RANGES[key]
            try:
                v = float(raw)
                ok = lo <= v <= hi
            except ValueError:
                notes.append(
                    f"Link value {key}={raw[:40]!r} is not a number (allowed: {lo:g} to {hi:g}); the default is used."
                )
                continue
            if not ok:
                notes.append(f"Link value {key}={raw[:40]!r} is outside {lo:g} to {hi:g}; the default is used.")
            elif key in INT_KEYS and not float(raw).is_integer():
                notes.append(f"Link value {key}={raw[:40]!r} is not a whole number; {round(float(raw))} is used.")
        elif key in ("batch_max", "alt_formats") and raw.lower() not in ("true", "false"):
            notes.append(f"Link value {key}={raw[:40]!r} must be true or false; the default is used.")
    return tuple(notes)


def scenario_fields(v: dict[str, Any], config_text: str | None = None) -> dict[str, Any]:
    """Widget values -> Scenario fields (no validation yet)."""
    w = v.get("workload", DEFAULTS["workload"])
    mode = {"interactive": "inference", "batch": "inference", "pretrain": "training", "finetune": "finetune"}[w]
    f: dict[str, Any] = {
        "mode": mode,
        "serving": "batch" if w == "batch" else "interactive",
        "method": v["method"] if w == "finetune" else "full",
        "weights_format": v["weights"],
        "kv_format": v["kv"],
        "context_tokens": int(v["ctx"]),
        "output_tokens": round(float(v["out"])),
        "batch": "max" if v.get("batch_max") and mode == "inference" else round(float(v["batch"])),
        "gpu": v["gpu"],
        "gpus": round(float(v["gpus"])),
        "tp": int(v["tp"]),
        "pp": int(v["pp"]),
        "zero_stage": int(v["zero"]),
        "accounting": v["acct"],
        "optimizer": v["opt"],
        "recompute": v["recompute"],
        "training_tokens": float(v["tokens_b"]) * 1e9,
        "mfu": float(v["mfu"]),
        "deadline_hours": float(v["deadline_h"]) or None,
        "requests_per_day": float(v["rpd"]) or None,
        "ttft_target_s": (float(v["ttft_ms"]) / 1e3 or None) if w == "interactive" else None,
        "tpot_target_s": (float(v["tpot_ms"]) / 1e3 or None) if w == "interactive" else None,
        "billing": None if v["billing"] == "any" else v["billing"],
        "provider": None if v["provider"] == "any" else v["provider"],
        "memory_utilization": float(v["util"]),
        "prefix_cache_fraction": float(v["prefix"]),
        "hours_per_month": float(v["hours"]),
        "utilization": float(v["busy"]),
    }
    if mode == "inference":
        ctx, out = int(v["ctx"]), round(float(v["out"]))
        f["input_tokens"] = ctx - out if ctx > out else 1
        f["output_tokens"] = min(out, ctx)
    src = v.get("src", "preset")
    if src == "size":
        f["params"] = int(float(v["size_b"]) * 1e9)
    elif src == "config" and config_text:
        f["config_text"] = config_text
    else:
        f["preset"] = v["model"]
    return f


def build_scenario(v: dict[str, Any], config_text: str | None = None) -> tuple[Scenario, list[str]]:
    """A validated Scenario, or the defaults with a message naming what was wrong."""
    merged = {**DEFAULTS, **{k: val for k, val in v.items() if val is not None}}
    try:
        return Scenario(**scenario_fields(merged, config_text)), []
    except ValueError as exc:
        msg = describe(exc)
        if config_text is not None and merged.get("src") == "config":
            fallback = {**merged, "src": "preset"}
            try:
                return Scenario(**scenario_fields(fallback)), [
                    f"The config could not be used: {msg}. Showing {merged['model']}."
                ]
            except ValueError:
                pass
        return Scenario(**scenario_fields(DEFAULTS)), [f"{msg}. Showing the default scenario instead."]


def scenario_to_widgets(sc_json: str) -> tuple[dict[str, Any], list[str]]:
    """An uploaded scenario JSON (as downloaded) -> widget values; only known keys, each validated."""
    import json

    try:
        data = json.loads(sc_json)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return {}, [f"scenario file: not valid JSON ({exc})"]
    if not isinstance(data, dict) or data.get("kind") != "gpuplan-scenario":
        return {}, ['scenario file: not a gpuplan scenario (missing "kind": "gpuplan-scenario")']
    values = data.get("widgets", {})
    if not isinstance(values, dict):
        return {}, ["scenario file: 'widgets' must be an object"]
    out, notes = {}, []
    for k, raw in values.items():
        if k not in DEFAULTS:
            notes.append(f"scenario file: unknown field {k!r} ignored")
            continue
        default = DEFAULTS[k]
        if k in CHOICES or k in DYNAMIC_CHOICES:
            opt = option_for(k, raw)
            if opt is None:
                notes.append(f"scenario file: {k}={raw!r} is not allowed; kept the current value")
            else:
                out[k] = opt
            continue
        bad = check_query_params({k: str(raw)})
        if bad or (isinstance(default, bool) and not isinstance(raw, bool)):
            notes.append(f"scenario file: {k}={raw!r} is not allowed; kept the current value")
            continue
        if isinstance(default, bool):
            out[k] = raw
        elif isinstance(default, int) and not isinstance(default, bool):
            out[k] = int(float(raw))
        elif isinstance(default, float):
            out[k] = float(raw)
        else:
            out[k] = str(raw)
    return out, notes


def scenario_json(values: dict[str, Any], sc: Scenario) -> str:
    import json

    return json.dumps(
        {
            "kind": "gpuplan-scenario",
            "version": 1,
            "widgets": {k: values.get(k, d) for k, d in DEFAULTS.items()},
            "scenario": json.loads(sc.model_dump_json(exclude={"config_text"})),
        },
        indent=2,
    )
