"""Calibrate to your deployment: replay each run of your own benchmark file (perf/bench_files.py) through the
serving engine, and fit that deployment's few constants.

Replay: every run goes through ``serving_calibration.predict_row``, the path the published measurements take
(data/serving_measurements.csv): the run's load shape (closed loop, Poisson or bursty rate, burst), lengths and
request count, on the model, GPU, tensor parallel and engine the caller gives.

Fit (the rule of ``serving_loso.fit_client_costs``, on this deployment's runs alone):

1. ``decode_time_factor``: the median over runs of measured / predicted mean time per output token, with the
   engine's defaults. Identified only when at least ``MIN_FACTOR_RUNS`` runs state a time per token (else 1).
2. ``request_in_s``: the median over runs of measured - predicted mean time to first token, predicted with that
   factor and no request cost, on the light-load runs (``serving_rows.light_load``: at most 4 clients or 2
   requests/s) with prompts of at most ``serving_loso.FIT_MAX_INPUT_TOKENS``; where the file has none of those,
   every run with a first-token time that is not a burst (``cost_fit_from`` says which). At least 0.

Errors are stated three ways per metric (TTFT, TPOT, output tokens/s): ``before`` (the engine's defaults),
``fitted`` (in-sample: the constants fitted on every run, checked on the same runs) and ``held_out`` (leave one
run out: the constants fitted on the other runs, checked on the one left out); only ``held_out`` says how the
profile does on a run it never saw.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..scenario.profile import DeploymentProfile
from . import serving_calibration as cal
from .bench_files import BenchRun
from .serving_loso import FIT_MAX_INPUT_TOKENS
from .serving_rows import light_load

MIN_FACTOR_RUNS = 2  # runs with a time per token before the decode factor is fitted
METRICS = {  # metric -> (BenchRun field, unit)
    "ttft": ("ttft_mean_ms", "ms"),
    "tpot": ("tpot_mean_ms", "ms"),
    "output_tokens_per_s": ("output_tokens_per_s", "tok/s"),
}
PUBLISHED_ENGINE = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "transformers": "vLLM"}
Constants = tuple[float | None, float]  # (request_in_s or None: the engine's, decode_time_factor)
ENGINE_DEFAULTS: Constants = (None, 1.0)


class Deployment(BaseModel):
    """What the file does not say: the model, GPU, layout, formats and engine the runs were served with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    gpu: str
    tp: int = Field(1, ge=1, le=64)
    engine: str = "vllm"
    weights_format: str = "bf16"
    kv_format: str = "bf16"


class RunFit(BaseModel):
    """One run: measured, and predicted with the engine's defaults, the fitted constants (in-sample) and the
    constants fitted without it (held out). Values in the metric's unit (ms, tokens/s); None where not stated or
    predicted saturated."""

    line: int
    label: str
    input_tokens: int
    output_tokens: int
    measured: dict[str, float | None]
    before: dict[str, float | None]
    fitted: dict[str, float | None]
    held_out: dict[str, float | None]


class DeploymentFit(BaseModel):
    """The fit of one file: its constants, each run, and the median absolute error per metric before, fitted
    (in-sample) and held out (leave one run out)."""

    deployment: Deployment
    runs: list[RunFit]
    request_in_s: float
    decode_time_factor: float
    factor_identified: bool
    cost_fit_from: str  # "light load" or "every run" (see the module docstring)
    errors: dict[str, dict[str, float | None]]  # "before" | "fitted" | "held_out" -> metric -> median |error|

    def profile(self, name: str, file_sha256: str, file_format: str) -> DeploymentProfile:
        d = self.deployment
        return DeploymentProfile(
            name=name[:200],
            file_sha256=file_sha256,
            file_format=file_format,
            model=d.model,
            gpu=d.gpu,
            tp=d.tp,
            engine=d.engine,
            runs=len(self.runs),
            request_in_s=round(self.request_in_s, 6),
            decode_time_factor=round(self.decode_time_factor, 4),
        )


def _row(run: BenchRun, dep: Deployment, metric: str) -> dict:
    """A run as a row of data/serving_measurements.csv (the columns predict_row reads)."""
    key, unit = METRICS[metric]
    return {
        "id": f"deployment-{run.line}",
        "engine": PUBLISHED_ENGINE.get(dep.engine, dep.engine),
        "engine_version": "",
        "gpu": dep.gpu,
        "tensor_parallel": dep.tp,
        "model_preset": dep.model,
        "weights_format": dep.weights_format,
        "kv_format": dep.kv_format,
        "input_tokens": run.input_tokens,
        "output_tokens": run.output_tokens,
        "load_kind": "concurrency" if run.load_kind == "concurrency" else "request_rate",
        "load": run.load,
        "requests": run.requests,
        "arrival": run.arrival,
        "length_spread": run.length_spread if run.lengths == "uniform" else None,
        "length_dataset": "your dataset" if run.lengths == "chat" else None,
        "metric": metric,
        "statistic": "mean",
        "measured": getattr(run, key) or 1.0,
        "unit": unit,
    }


def replay(run: BenchRun, dep: Deployment, constants: Constants = ENGINE_DEFAULTS) -> dict[str, float | None]:
    """One run predicted by the serving engine: metric -> value (ms, tokens/s), None where it is saturated."""
    out: dict[str, float | None] = {}
    for metric in METRICS:
        got = cal.predict_row(_row(run, dep, metric), request_in_s=constants[0], decode_time_factor=constants[1])
        out[metric] = None if got is None else got["predicted"]
    return out


def measured(run: BenchRun) -> dict[str, float | None]:
    return {m: getattr(run, key) for m, (key, _) in METRICS.items()}


def _cost_runs(runs: Sequence[BenchRun]) -> tuple[list[BenchRun], str]:
    timed = [r for r in runs if r.ttft_mean_ms is not None and r.load_kind != "burst"]
    light = [
        r
        for r in timed
        if light_load({"load_kind": r.load_kind, "load": r.load}) and r.input_tokens <= FIT_MAX_INPUT_TOKENS
    ]
    return (light, "light load") if light else (timed, "every run")


def fit_constants(runs: Sequence[BenchRun], dep: Deployment) -> tuple[float, float, bool, str]:
    """(request_in_s, decode_time_factor, whether the factor is identified, which runs the cost came from):
    the module docstring's rule on these runs."""
    ratios = []
    for r in runs:
        p = replay(r, dep, (0.0, 1.0))["tpot"]
        if r.tpot_mean_ms and p:
            ratios.append(r.tpot_mean_ms / p)
    identified = len(ratios) >= MIN_FACTOR_RUNS
    factor = min(5.0, max(0.2, statistics.median(ratios))) if identified else 1.0
    chosen, fit_from = _cost_runs(runs)
    gaps = []
    for r in chosen:
        p = replay(r, dep, (0.0, factor))["ttft"]
        if p is not None:
            gaps.append((r.ttft_mean_ms - p) / 1e3)
    cost = min(10.0, max(0.0, statistics.median(gaps))) if gaps else 0.0
    return cost, factor, identified, fit_from


def _error(pred: float | None, meas: float | None) -> float | None:
    return None if pred is None or not meas else (pred - meas) / meas


def _median_errors(rows: list[RunFit], which: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for metric in METRICS:
        errs = [_error(getattr(r, which)[metric], r.measured[metric]) for r in rows]
        errs = [abs(e) for e in errs if e is not None]
        out[metric] = statistics.median(errs) if errs else None
    return out


def fit_deployment(runs: Sequence[BenchRun], dep: Deployment) -> DeploymentFit:
    """Replay every run with the engine's defaults, fit the constants on all runs, and on all but each run in turn
    (its held-out prediction; a file of one run has none). Slow: a few simulated runs per run."""
    if not runs:
        raise ValueError("calibrate: the file has no run to fit")
    cost, factor, identified, fit_from = fit_constants(runs, dep)
    rows = []
    for i, r in enumerate(runs):
        others = [x for j, x in enumerate(runs) if j != i]
        held = dict.fromkeys(METRICS)
        if others:
            c_i, f_i, _, _ = fit_constants(others, dep)
            held = replay(r, dep, (c_i, f_i))
        rows.append(
            RunFit(
                line=r.line,
                label=r.label,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                measured=measured(r),
                before=replay(r, dep),
                fitted=replay(r, dep, (cost, factor)),
                held_out=held,
            )
        )
    return DeploymentFit(
        deployment=dep,
        runs=rows,
        request_in_s=cost,
        decode_time_factor=factor,
        factor_identified=identified,
        cost_fit_from=fit_from,
        errors={w: _median_errors(rows, w) for w in ("before", "fitted", "held_out")},
    )
