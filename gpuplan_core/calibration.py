"""Predicted vs measured on data/measurements.csv, with the same defaults every user gets.

No per-point corrections and no lookup of a measured answer: each row only says what was run
(model, GPU, formats, batch, lengths, tensor parallel, the run's stated memory utilisation).
"""

from __future__ import annotations

import math
import statistics
from functools import lru_cache

import pandas as pd

from .catalog import DATA_DIR, get_gpu, get_preset
from .memory import Assumptions, MemoryRequest, kv_capacity_tokens
from .perf import PerfAssumptions, Workload, predict

ASSUMED_LENGTHS = (128, 128)  # prompt / output where a benchmark does not state them


@lru_cache(maxsize=2)
def load_measurements(path: str | None = None) -> pd.DataFrame:
    return pd.read_csv(path or DATA_DIR / "measurements.csv", dtype={"input_tokens": "Int64", "output_tokens": "Int64"})


def predict_row(row: dict, pa: PerfAssumptions | None = None) -> float:
    """The engine's prediction for one measurement row, in the row's unit."""
    m = get_preset(row["model_preset"])
    gpu = get_gpu(row["gpu"])
    tp = int(row["tensor_parallel"] or 1)
    wl = Workload(weights_format=row["weights_format"], kv_format=row["kv_format"], tp=tp)
    batch = int(row["batch"] or 1)
    metric = row["metric"]
    prompt = int(row["input_tokens"]) if not pd.isna(row["input_tokens"]) else ASSUMED_LENGTHS[0]
    output = int(row["output_tokens"]) if not pd.isna(row["output_tokens"]) else ASSUMED_LENGTHS[1]
    if metric == "kv_cache_capacity_tokens":
        req = MemoryRequest(
            weights_format=row["weights_format"],
            kv_format=row["kv_format"],
            tp=tp,
            gpus=tp,
            assumptions=Assumptions(memory_utilization=0.95),
        )
        return float(kv_capacity_tokens(m, req, gpu))
    if metric in ("prefill_time", "time_to_first_token"):
        return predict(m, gpu, wl, batch, prompt, 1, pa, with_compute_bound_batch=False).ttft_s * 1e3
    if metric == "time_per_output_token":
        return predict(m, gpu, wl, batch, prompt, 1, pa, with_compute_bound_batch=False).tpot_s * 1e3
    r = predict(m, gpu, wl, batch, prompt, output, pa, with_compute_bound_batch=False)
    if metric == "decode_tokens_per_s":
        return r.decode_tokens_per_s_per_sequence
    if metric == "output_tokens_per_s":
        return r.output_tokens_per_s
    raise ValueError(f"metric: unknown metric {metric!r}")


def calibration_table(path: str | None = None, pa: PerfAssumptions | None = None) -> list[dict]:
    rows = []
    for row in load_measurements(path).to_dict("records"):
        pred = predict_row(row, pa)
        measured = float(row["measured"])
        rows.append(
            {
                "id": row["id"],
                "gpu": row["gpu"],
                "gpu_count": int(row["gpu_count"]),
                "model": row["model_preset"],
                "framework": row["framework"],
                "metric": row["metric"],
                "batch": int(row["batch"]),
                "unit": row["unit"],
                "measured": measured,
                "predicted": pred,
                "error": (pred - measured) / measured,
                "setup": row["setup"] if isinstance(row["setup"], str) else "",
                "source": row["source"],
            }
        )
    return rows


def median_abs_error(table: list[dict], exclude_memory: bool = False) -> float:
    errs = [abs(r["error"]) for r in table if not (exclude_memory and r["metric"] == "kv_cache_capacity_tokens")]
    return statistics.median(errs)


# ---- serving under load (data/serving_measurements.csv) -------------------------------------------

SERVING_METRICS = {"ttft": "ttft_mean_s", "itl": "tpot_mean_s", "tpot": "tpot_mean_s"}


@lru_cache(maxsize=2)
def load_serving_measurements(path: str | None = None) -> pd.DataFrame:
    return pd.read_csv(path or DATA_DIR / "serving_measurements.csv")


def _format_of(text: str) -> str:
    """A published format ('fp8 (native checkpoint)', 'not stated') as a format name; unstated: bf16."""
    word = str(text).split()[0].lower()
    return word if word in ("bf16", "fp16", "fp8", "nvfp4", "fp32", "int8") else "bf16"


@lru_cache(maxsize=256)
def _serving_prediction(
    model: str, gpu: str, tp: int, wf: str, kvf: str, i: int, o: int, kind: str, load: float
) -> dict | None:
    from .scenario import Scenario
    from .serving import replica_for, serve

    sc = Scenario(
        preset=model, gpu=gpu, tp=tp, gpus=tp, weights_format=wf, kv_format=kvf, input_tokens=i, output_tokens=o
    )
    try:
        r, _ = replica_for(sc)
    except ValueError:
        return None
    if kind == "concurrency" or math.isinf(load):  # an all-at-once burst keeps every slot busy
        res = serve(r, concurrency=r.max_running if math.isinf(load) else int(load))
    else:
        res = serve(r, request_rate=load)
    return res.model_dump()


HEADLINE_REGIME = "online, dense"
SERVING_REGIMES = {
    HEADLINE_REGIME: "request-rate and concurrency sweeps of dense models on engines that batch continuously",
    "offline burst": "every request queued at once (max-throughput runs): the engine's own batch limits, not "
    "vLLM's defaults, set how many run",
    "MoE, 8 GPUs, early 2025": "DeepSeek-R1/V3 on 8 x H200 or MI300X with vLLM 0.7, SGLang 0.4 and TensorRT-LLM 0.17: "
    "kernels of that time reached far below the roofline",
    "TTFT, whole-prompt prefill": "LMDeploy 0.1 prefills whole prompts and new requests wait behind them; the model "
    "assumes chunked prefill",
}


def serving_regime(row: dict) -> str:
    """Which regime a published serving point belongs to (errors are reported per regime)."""
    if math.isinf(float(row["load"])):
        return "offline burst"
    if row["model_preset"] == "DeepSeek-V3":
        return "MoE, 8 GPUs, early 2025"
    if str(row["engine"]).startswith("LMDeploy") and row["metric"] == "ttft":
        return "TTFT, whole-prompt prefill"
    return HEADLINE_REGIME


def serving_table(path: str | None = None) -> list[dict]:
    """Predicted vs published measurements of serving under load (concurrency or request-rate sweeps, and
    all-at-once bursts as every slot busy). TTFT of a burst depends on its size, which the model does not
    take, so those rows are left out."""
    rows = []
    for row in load_serving_measurements(path).to_dict("records"):
        load = float(row["load"])
        metric = row["metric"]
        if metric == "ttft" and math.isinf(load):
            continue
        pred = _serving_prediction(
            row["model_preset"],
            row["gpu"],
            int(row["tensor_parallel"]),
            _format_of(row["weights_format"]),
            _format_of(row["kv_format"]),
            int(row["input_tokens"]),
            int(row["output_tokens"]),
            row["load_kind"],
            load,
        )
        n_req = row.get("requests")
        if pred is None or pred["saturated"]:
            value = None
        elif metric == "output_tokens_per_s" and row["load_kind"] == "request_rate" and not pd.isna(n_req):
            # a finite run: its throughput is all output over the time until the last request ends
            value = int(n_req) * int(row["output_tokens"]) / (int(n_req) / load + pred["e2e_mean_s"])
        elif metric == "output_tokens_per_s":
            value = pred["output_tokens_per_s"]
        else:
            seconds = pred[SERVING_METRICS[metric]]
            value = None if seconds is None else seconds * (1e3 if row["unit"] == "ms" else 1.0)
        measured = float(row["measured"])
        rows.append(
            {
                "id": row["id"],
                "regime": serving_regime(row),
                "engine": f"{row['engine']} {row['engine_version']}",
                "gpu": row["gpu"],
                "tp": int(row["tensor_parallel"]),
                "model": row["model_preset"],
                "lengths": f"{int(row['input_tokens'])}/{int(row['output_tokens'])}",
                "load": f"{row['load_kind'].replace('_', ' ')} {row['load']}",
                "metric": metric,
                "unit": row["unit"],
                "measured": measured,
                "predicted": value,
                "error": None if value is None else (value - measured) / measured,
                "predicted_saturated": bool(pred and pred["saturated"]),
                "source": row["source"],
            }
        )
    return rows


def serving_median_abs_error(
    table: list[dict], regime: str | None = HEADLINE_REGIME, metric: str | None = None
) -> float | None:
    errs = [
        abs(r["error"])
        for r in table
        if r["error"] is not None
        and (regime is None or r["regime"] == regime)
        and (metric is None or r["metric"] == metric)
    ]
    return statistics.median(errs) if errs else None


def serving_summary(table: list[dict]) -> list[dict]:
    """Per regime and metric: points compared, median absolute error, median signed error (bias)."""
    out = []
    for regime in SERVING_REGIMES:
        for metric in ("ttft", "itl", "tpot", "output_tokens_per_s"):
            errs = [
                r["error"] for r in table if r["regime"] == regime and r["metric"] == metric and r["error"] is not None
            ]
            if errs:
                out.append(
                    {
                        "regime": regime,
                        "metric": metric,
                        "points": len(errs),
                        "median_abs_error": statistics.median(abs(e) for e in errs),
                        "median_error": statistics.median(errs),
                    }
                )
    return out
