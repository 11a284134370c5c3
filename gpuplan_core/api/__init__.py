"""The public API: scenario in, a typed report out (report/: results.py for memory and speed, cost.py,
serving.py, calibration.py). Pages, the CLI and notebooks call these and read the reports' fields;
cli_text.py lays reports out for a terminal, and the CLI's JSON is each report's ``model_dump()``.

Report keys are documented in the README ("JSON output"); byte counts are integers of bytes, times are seconds,
money is US dollars.
"""

from __future__ import annotations

from typing import Any

from ..memory.budget import memory_budget
from ..memory.components import component_provenance, model_weight_bytes
from ..memory.fit import evaluate_catalog
from ..memory.request import memory_request
from ..model.formats import get_format
from ..report.calibration import CalibrationReport
from ..report.results import GpuFit, Layout, MemoryReport
from ..scenario.scenario import Scenario
from ._shared import catalog_of as _catalog_of
from ._shared import model_summary, scenario_of  # re-exported: every API function's start
from .cost import _offers, answer_report, cost_report, growth_report, plan_report  # noqa: F401
from .perf import gpus_at_load, perf_for_gpu, perf_report, serve_report, serving_curve_report  # noqa: F401


def memory_report(s: Scenario | dict[str, Any]) -> MemoryReport:
    """Memory budget of the scenario's layout, and fit / min GPUs / max batch / max context per GPU."""
    sc = scenario_of(s)
    m = sc.model()
    req = memory_request(sc)
    budget = memory_budget(m, req)
    fits = evaluate_catalog(m, req, _catalog_of(sc))
    selected = {g.gpu for g in sc.selected_gpus()} if sc.parallelism.gpu else set()
    return MemoryReport(
        **model_summary(sc),
        mode=req.mode,
        method=req.method,
        weights_format="nf4-dq" if req.mode != "inference" and req.method == "qlora" else req.weights_format,
        kv_format=req.kv_format,
        engine=req.engine,
        context_tokens=req.context_tokens,
        batch=req.batch,
        layout=Layout(gpus=req.gpus, tp=req.tp, pp=req.pp, dp=req.dp),
        scope=budget.scope,
        weights_bytes_total=round(
            model_weight_bytes(
                m, get_format("nf4-dq" if req.mode != "inference" and req.method == "qlora" else req.weights_format)
            )
        ),
        components={k: round(v) for k, v in budget.components.items()},
        provenance={k: component_provenance(k) for k in budget.components},
        offload=req.offload,
        offloaded={k: round(v) for k, v in budget.offloaded.items()},
        host_bytes_per_node=round(budget.host_bytes_per_node),
        budgets={k: round(v) for k, v in budget.budgets.items()},
        per_gpu_bytes=round(budget.per_gpu_bytes),
        total_bytes=round(budget.total_bytes),
        memory_utilization=req.assumptions.memory_utilization,
        notes=budget.notes,
        gpus=[
            GpuFit(
                gpu=f.gpu.gpu,
                label=f.gpu.label,
                selected=f.gpu.gpu in selected,
                vram_nominal_bytes=round(f.gpu.vram_nominal_bytes),
                vram_usable_bytes=round(f.gpu.vram_usable_bytes),
                budget_bytes=round(f.budget_bytes),
                fits=f.fits,
                min_gpus=f.min_gpus,
                min_layout=None if f.min_layout is None else Layout(**vars(f.min_layout)),
                max_batch=f.max_batch,
                max_context=f.max_context,
                kv_capacity_tokens=f.kv_capacity_tokens,
            )
            for f in fits
        ],
    )


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


from .compare import compare_report as compare_report  # noqa: E402  (A vs B, built from the reports above)
from .compare import compare_side as compare_side  # noqa: E402
