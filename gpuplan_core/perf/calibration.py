"""Predicted vs measured on data/measurements.csv, with the same defaults every user gets.

No per-point corrections and no lookup of a measured answer: each row only says what was run
(model, GPU, formats, batch, lengths, tensor parallel, the run's stated memory utilisation).
"""

from __future__ import annotations

import statistics
from functools import lru_cache

import pandas as pd

from ..common.data import DATA_DIR
from ..hardware.catalog import get_gpu
from ..memory.budget import memory_budget
from ..memory.components import MemoryRequest
from ..memory.engine_kv import startup_request
from ..memory.fit import kv_capacity_tokens
from ..model.formats import get_format
from ..model.presets import get_preset
from .efficiency import PerfAssumptions
from .predict import predict
from .roofline import Workload
from .serving_calibration import engine_of

ASSUMED_LENGTHS = (128, 128)  # prompt / output where a benchmark does not state them


@lru_cache(maxsize=2)
def load_measurements(path: str | None = None) -> pd.DataFrame:
    return pd.read_csv(path or DATA_DIR / "measurements.csv", dtype={"input_tokens": "Int64", "output_tokens": "Int64"})


def _fmt(v, default: str = "bf16") -> str:
    return default if v is None or (isinstance(v, float) and pd.isna(v)) or not str(v).strip() else str(v).strip()


def _is_eager(row: dict) -> bool:
    """Plain transformers generate() (no CUDA graphs, no torch.compile)."""
    return str(row.get("framework", "")).lower().startswith(("hf transformers", "hugging face transformers"))


def eager_regime(engine: str) -> bool:
    """Whether a replica of ``engine`` reads the eager regime's error band: plain transformers, whose runs are the
    eager regime's (``_is_eager``); a release line run without CUDA graphs (TensorRT-LLM 0.17) is calibrated with
    its engine's runs, so it reads theirs."""
    return engine == "transformers"


def running_batch(row: dict, m, gpu, wf: str, kvf: str, tp: int, *, batch: int, tokens: int) -> int:
    """Sequences an engine runs at once for a max-throughput run of ``batch`` requests: no more than its KV
    cache holds at full length (the rest wait, so the run's throughput is that of the smaller batch). Runs with
    data-parallel attention keep each rank's sequences on that rank, which the tensor-parallel budget does not
    describe: their batch stands as published."""
    if "attention_dp" in str(row.get("setup", "")):
        return batch
    req = MemoryRequest(weights_format=wf, kv_format=kvf, tp=tp, gpus=tp)
    return max(1, min(batch, kv_capacity_tokens(m, req, gpu) // max(1, tokens)))


def predict_row(row: dict, pa: PerfAssumptions | None = None, moe_factor: float | None = None) -> float:
    """The engine's prediction for one measurement row, in the row's unit (``moe_factor``: the routed experts'
    efficiency factor in place of data/efficiency.csv's, a left-out-source fit: perf/moe_loso.py)."""
    m = get_preset(row["model_preset"])
    gpu = get_gpu(row["gpu"])
    tp = int(row["tensor_parallel"] or 1)
    wf, kvf = _fmt(row["weights_format"]), _fmt(row["kv_format"])
    eager = _is_eager(row)
    wl = Workload(weights_format=wf, kv_format=kvf, tp=tp, eager=eager, moe_efficiency=moe_factor)
    # timed as a page times it: the step model with the measured engine's kernels where its tables cover the run
    engine = None if eager else engine_of(row["framework"])
    batch = int(row["batch"] or 1)
    metric, unit = row["metric"], str(row["unit"])
    prompt = int(row["input_tokens"]) if not pd.isna(row["input_tokens"]) else ASSUMED_LENGTHS[0]
    output = int(row["output_tokens"]) if not pd.isna(row["output_tokens"]) else ASSUMED_LENGTHS[1]
    seconds = 1.0 if unit == "s" else 1e3  # latencies: seconds or milliseconds, as published
    if metric == "kv_cache_capacity_tokens":
        fw = str(row["framework"])  # the engine's start-up rule for its version and the run's settings
        engine = "trtllm" if "TensorRT" in fw else "sglang" if "SGLang" in fw else "vllm"
        req = startup_request(engine, fw, str(row["setup"]), weights_format=wf, kv_format=kvf, tp=tp)
        return float(kv_capacity_tokens(m, req, gpu))
    if metric == "peak_memory":  # a plain PyTorch process: no CUDA graphs, the whole prompt at once
        req = MemoryRequest(
            weights_format=wf,
            kv_format=kvf,
            tp=tp,
            gpus=tp,
            batch=batch,
            context_tokens=prompt + output,
            prefill_tokens=prompt,
            engine="transformers",
        )
        return memory_budget(m, req).per_gpu_bytes / 1e9
    if metric in ("prefill_time", "time_to_first_token"):
        return (
            predict(m, gpu, wl, batch, prompt, 1, pa=pa, with_compute_bound_batch=False, engine=engine).ttft_s * seconds
        )
    if metric == "time_per_output_token":
        return (
            predict(m, gpu, wl, batch, prompt, 1, pa=pa, with_compute_bound_batch=False, engine=engine).tpot_s * seconds
        )
    if metric == "output_tokens_per_s":
        batch = running_batch(row, m, gpu, wf, kvf, tp, batch=batch, tokens=prompt + output)
    r = predict(m, gpu, wl, batch, prompt, output, pa=pa, with_compute_bound_batch=False, engine=engine)
    if metric == "end_to_end_latency":
        return r.e2e_request_s * seconds
    if metric == "decode_tokens_per_s":
        return r.decode_tokens_per_s_per_sequence
    if metric == "decode_tokens_per_s_batch":  # the whole batch's decode rate, prefill excluded
        return r.decode_tokens_per_s
    if metric == "output_tokens_per_s":
        per_gpu = unit.endswith("/GPU")
        return r.output_tokens_per_s / (int(row["gpu_count"]) if per_gpu else 1)
    raise ValueError(f"metric: unknown metric {metric!r}")


def calibration_table(path: str | None = None, pa: PerfAssumptions | None = None) -> list[dict]:
    rows = []
    for row in load_measurements(path).to_dict("records"):
        pred = predict_row(row, pa)
        measured = float(row["measured"])
        rows.append(
            {
                "id": row["id"],
                "regime": _row_regime(row),
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
                "lean": lean(row["metric"], (pred - measured) / measured),
                "setup": row["setup"] if isinstance(row["setup"], str) else "",
                "source": row["source"],
            }
        )
    return rows


TIME_METRICS = {
    "prefill_time",
    "time_to_first_token",
    "time_per_output_token",
    "end_to_end_latency",
    "ttft",
    "itl",
    "tpot",
}


def lean(metric: str, error: float) -> float:
    """A signed error read one way for every metric: + when the model is optimistic (predicts a shorter time, a
    higher rate, or more memory than measured)."""
    return -error if metric in TIME_METRICS else error


def median_abs_error(table: list[dict], exclude_memory: bool = False) -> float:
    errs = [abs(r["error"]) for r in table if not (exclude_memory and r["metric"] == "kv_cache_capacity_tokens")]
    return statistics.median(errs)


# ---- regimes and error bands ------------------------------------------------------------------------

PHASES = {
    "prefill_time": "prefill",
    "time_to_first_token": "prefill",
    "time_per_output_token": "decode",
    "decode_tokens_per_s": "decode",
    "decode_tokens_per_s_batch": "decode",
    "output_tokens_per_s": "throughput",
    "end_to_end_latency": "throughput",
    "kv_cache_capacity_tokens": "memory",
    "peak_memory": "memory",
}


THROUGHPUT_MIN_BATCH = 16  # below it a request's time is mostly decode steps: decode's regime applies


def phase_of(metric: str, batch: int) -> str:
    """The phase a measured (or predicted) quantity belongs to; throughput of a small batch counts as decode."""
    phase = PHASES[metric]
    return "decode" if phase == "throughput" and batch < THROUGHPUT_MIN_BATCH else phase


def regime(gpu: str, weights_format: str, phase: str, moe: bool = False, eager: bool = False) -> str:
    """A calibration regime: GPU generation x weights format class x phase; mixture-of-experts models and engines
    without CUDA graphs (plain transformers) apart, as their errors differ in kind."""
    gen = get_gpu(gpu).architecture
    fmt = get_format(weights_format).family
    return f"{gen} · {fmt} · {phase}" + (" · MoE" if moe else "") + (" · transformers eager" if eager else "")


def _row_regime(row: dict) -> str:
    moe = get_preset(row["model_preset"]).is_moe
    phase = phase_of(row["metric"], int(row["batch"] or 1))
    return regime(row["gpu"], _fmt(row["weights_format"]), phase, moe, _is_eager(row))


@lru_cache(maxsize=1)
def regime_residuals() -> dict[str, list[float]]:
    """Relative errors of the calibration points, by regime (predictions made with the defaults), signed as
    ``lean``: + where the model was optimistic."""
    out: dict[str, list[float]] = {}
    for res in calibration_table():
        out.setdefault(res["regime"], []).append(res["lean"])
    return out


def regime_summary() -> list[dict]:
    """Per regime: points, median absolute error, bias (median lean: + optimistic); and every regime the catalog's
    GPUs can run without a point."""
    from ..hardware.catalog import load_gpus

    res = regime_residuals()
    rows = [
        {
            "regime": k,
            "points": len(v),
            "median_abs_error": statistics.median(abs(e) for e in v),
            "median_error": statistics.median(v),
        }
        for k, v in sorted(res.items())
    ]
    classes: dict[str, set[str]] = {}  # the format classes each generation runs natively
    for g in load_gpus():
        native = {"16-bit", "8/4-bit integer"} | ({"FP8"} if g.fp8_dense_tflops else set())
        classes.setdefault(g.architecture, set()).update(native | ({"FP4"} if g.fp4_dense_tflops else set()))
    order = ["16-bit", "FP8", "8/4-bit integer", "FP4"]
    missing = [
        f"{gen} · {f} · {p}"
        for gen in sorted(classes)
        for f in order
        if f in classes[gen]
        for p in ("prefill", "decode", "throughput")
        if f"{gen} · {f} · {p}" not in res
    ]
    return rows + [{"regime": k, "points": 0, "median_abs_error": None, "median_error": None} for k in missing]
