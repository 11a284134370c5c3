"""The public API: scenario in, a typed report out (report/: results.py for memory and speed, cost.py,
serving.py, calibration.py). Pages, the CLI and notebooks call these and read the reports' fields;
cli_text.py lays reports out for a terminal, and the CLI's JSON is each report's ``model_dump()``.

Report keys are documented in the README ("JSON output"); byte counts are integers of bytes, times are seconds,
money is US dollars.
"""

from __future__ import annotations

from typing import Any

from ..memory.request import memory_request
from ..perf.replica import DEFAULT_GPU
from ..perf.workload import workload_for
from ..report.calibration import CalibrationReport
from ..report.results import GpuPerf, NoFit, PerfReport
from ..report.serving import ServeReport, ServingCurve
from ..results.memory import MemoryReport  # noqa: F401  (re-exported)
from ..scenario.fields import MAX_LAYOUT_GPUS
from ..scenario.scenario import Scenario
from ._shared import catalog_of as _catalog_of
from ._shared import model_summary, scenario_of  # re-exported: every API function's start
from .compare import compare_report, compare_side  # noqa: F401  (A vs B, each side the answer to its scenario)
from .cost import _offers, answer_report, cost_report, growth_report, plan_report  # noqa: F401
from .memory import memory_at_pick, memory_report  # noqa: F401

# ---- performance ---------------------------------------------------------------------------------


def perf_for_gpu(sc: Scenario, gpu_name: str) -> GpuPerf | NoFit:
    """TTFT, TPOT, throughput and roofline data on one GPU type, at the scenario's layout when the
    model fits there, else at the smallest layout that fits (and the result says so)."""
    from ..hardware.catalog import get_gpu
    from ..memory.fit import max_batch, min_gpus
    from ..perf.bands import perf_bands
    from ..perf.efficiency import PerfAssumptions
    from ..perf.predict import decode_sweep, predict

    m = sc.model()
    gpu = get_gpu(gpu_name)
    req = memory_request(sc)
    notes: list[str] = []
    tp, pp = sc.parallelism.tp, sc.parallelism.pp
    mb = max_batch(m, req, gpu)
    if mb == 0:
        lay = min_gpus(m, req, gpu)
        if lay is not None:
            tp, pp = lay.tp, lay.pp
            req = req.model_copy(update={"tp": tp, "pp": pp, "gpus": tp * pp})
            mb = max_batch(m, req, gpu)
            notes.append(
                f"Does not fit at tp={sc.parallelism.tp} x pp={sc.parallelism.pp}; shown at the smallest fitting "
                f"layout tp={tp} x pp={pp}."
            )
        if lay is None or mb == 0:
            return NoFit(
                gpu=gpu.gpu, notes=[f"{m.name} does not fit on any layout of {gpu.gpu} up to {MAX_LAYOUT_GPUS:,} GPUs."]
            )
    batch = mb if sc.request.batch == "max" else sc.request.batch
    if batch > mb:
        notes.append(f"Batch {batch} needs more memory than {gpu.gpu} x{tp * pp} has at this context (max {mb}).")
    pa = PerfAssumptions()
    wl = workload_for(sc.formats, sc.assumptions, tp, pp)
    r = predict(m, gpu, wl, max(1, batch), sc.request.input_tokens, sc.request.output_tokens, pa=pa)
    at_max = predict(
        m, gpu, wl, mb, sc.request.input_tokens, sc.request.output_tokens, pa=pa, with_compute_bound_batch=False
    )
    bands = perf_bands(gpu.gpu, wl.weights_format, m.is_moe, wl.eager, max(1, batch))
    d = r.to_dict()
    d.update(
        error_band=bands,
        provenance={k: b.provenance for k, b in bands.items()},
        max_batch=mb,
        output_tokens_per_s_at_max_batch=at_max.output_tokens_per_s,
        decode_tokens_per_s_at_max_batch=at_max.decode_tokens_per_s,
        notes=notes + ([r.math_note] if r.math_note else []) + ([r.moe_note] if r.moe_note else []) + r.notes,
        roofs={
            fmt: gpu.dense_peak_flops(fmt)[0]
            for fmt in ("bf16", "fp8", "fp4", "int8")
            if gpu.dense_peak_flops(fmt)[1] == fmt
        },
        sweep=decode_sweep(m, gpu, wl, sc.request.input_tokens + sc.request.output_tokens // 2, mb, pa),
    )
    return GpuPerf(**d)


def perf_report(s: Scenario | dict[str, Any], gpus: list[str] | None = None) -> PerfReport:
    """The scenario's GPU (default H100 SXM) as ``main`` (the JSON's top level), every requested GPU under ``gpus``."""
    sc = scenario_of(s)
    from ..hardware.catalog import get_gpu

    main_gpu = get_gpu(sc.parallelism.gpu).gpu if sc.parallelism.gpu else DEFAULT_GPU
    names = gpus if gpus is not None else ([main_gpu] if sc.parallelism.gpu else [g.gpu for g in _catalog_of(sc)])
    per = [perf_for_gpu(sc, n) for n in names]
    main = next((p for p in per if p.gpu == main_gpu), None) or perf_for_gpu(sc, main_gpu)
    return PerfReport(**model_summary(sc).model_dump(), main=main, gpus=per)


def write_serving_calibration() -> int:
    """Simulate every published serving run again and store the predictions the error bands read."""
    from ..perf.serving_calibration import write_serving_table

    return write_serving_table()


def calibration_report() -> CalibrationReport:
    from ..perf.calibration import calibration_table, median_abs_error, regime_summary
    from ..perf.serving_calibration import (
        HEADLINE_REGIME,
        SERVING_REGIMES,
        serving_median_abs_error,
        serving_summary,
        serving_table,
    )

    table = calibration_table()
    serving = serving_table()
    return CalibrationReport(
        points=table,
        median_abs_error=median_abs_error(table),
        median_abs_error_speed_only=median_abs_error(table, exclude_memory=True),
        regimes=regime_summary(),
        serving_points=serving,
        serving_median_abs_error=serving_median_abs_error(serving, HEADLINE_REGIME),
        serving_headline_regime=HEADLINE_REGIME,
        serving_regimes=SERVING_REGIMES,
        serving_summary=serving_summary(serving),
        serving_predicted_saturated=[p["id"] for p in serving if p["predicted_saturated"]],
    )


# ---- serving under traffic ------------------------------------------------------------------------


def _serving_bands(moe: bool, gpu: str | None = None) -> dict[str, Any]:
    from ..perf.bands import serving_bands

    bands = serving_bands(moe, gpu)
    return {"error_band": bands, "provenance": {k: b.provenance for k, b in bands.items()}}


def serve_report(
    s: Scenario | dict[str, Any],
    concurrency: int | None = None,
    request_rate: float | None = None,
    gpu: str | None = None,
) -> ServeReport:
    """One replica of the scenario on its GPU under a load (``concurrency`` clients or ``request_rate`` requests
    per second), with its capacity under the scenario's targets and the replicas its traffic needs."""
    from ..perf.replica import replica_for
    from ..perf.serving import Sim, capacity, serve, shape_for

    sc = scenario_of(s)
    r, note = replica_for(sc, gpu)
    sim = Sim(r, shape_for(sc.traffic))
    res = serve(r, concurrency=concurrency, request_rate=request_rate, steps=sim)
    if note:
        res = res.model_copy(update={"notes": [note, *res.notes]})
    out: dict[str, Any] = {
        **model_summary(sc).model_dump(),
        "gpu": r.gpu.gpu,
        "tp": r.wl.tp,
        "pp": r.wl.pp,
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
        "max_num_batched_tokens": r.limits.max_num_batched_tokens,
        "max_num_seqs": r.limits.max_num_seqs,
        "at_load": res,
        "max_requests_per_s": sim.max_rate(),
        **_serving_bands(r.m.is_moe, r.gpu.gpu),
    }
    if sc.traffic.ttft_target_s or sc.traffic.tpot_target_s:
        cap = capacity(r, sc.traffic.ttft_target_s, sc.traffic.tpot_target_s, steps=sim)
        out["capacity_requests_per_s"] = cap
        if sc.traffic.requests_per_day:
            from ..pricing.billing import replicas_for_traffic

            peak = sc.traffic.peak_requests_per_s
            out["peak_requests_per_s"] = peak
            out["replicas"] = (
                replicas_for_traffic(sc.traffic.requests_per_day, sc.traffic.peak_to_average, cap) if cap else None
            )
    return ServeReport(**out)


def serving_curve_report(s: Scenario | dict[str, Any], gpu: str | None = None) -> ServingCurve:
    """TTFT and TPOT against the request rate for one replica on the scenario's GPU, its saturation rate, its
    capacity within the targets and the replicas the traffic needs (the Performance page's chart)."""
    from ..perf.replica import replica_for
    from ..perf.serving import Sim, capacity, load_curve, shape_for
    from ..pricing.billing import replicas_for_traffic

    sc = scenario_of(s)
    r, note = replica_for(sc, gpu)
    sim = Sim(r, shape_for(sc.traffic))
    targets = (sc.traffic.ttft_target_s, sc.traffic.tpot_target_s) if sc.job.serving == "interactive" else (None, None)
    cap = capacity(r, *targets, steps=sim) if any(targets) else None
    peak = sc.traffic.peak_requests_per_s if sc.traffic.requests_per_day else None
    limit = cap if cap is not None else 0.98 * sim.max_rate()
    return ServingCurve(
        gpu=r.gpu.gpu,
        tp=r.wl.tp,
        pp=r.wl.pp,
        max_running_sequences=r.max_running,
        max_requests_per_s=sim.max_rate(),
        capacity_requests_per_s=cap,
        ttft_target_s=targets[0],
        tpot_target_s=targets[1],
        peak_requests_per_s=peak,
        replicas=replicas_for_traffic(sc.traffic.requests_per_day, sc.traffic.peak_to_average, limit)
        if peak and limit
        else None,
        points=load_curve(r, steps=sim),
        notes=[note] if note else [],
        **_serving_bands(r.m.is_moe, r.gpu.gpu),
    )
