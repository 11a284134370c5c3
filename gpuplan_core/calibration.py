"""Predicted vs measured on data/measurements.csv, with the same defaults every user gets.

No per-point corrections and no lookup of a measured answer: each row only says what was run
(model, GPU, formats, batch, lengths, tensor parallel, the run's stated memory utilisation).
"""

from __future__ import annotations

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
