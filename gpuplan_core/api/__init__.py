"""The public API: scenario in, a typed report out (results/: memory.py, perf.py and serving.py for memory and
speed; report/: cost.py, calibration.py). Pages, the CLI and notebooks call these and read the reports' fields;
cli_text.py lays reports out for a terminal, and the CLI's JSON is each report's ``model_dump()``.

Report keys are documented in the README ("JSON output"); byte counts are integers of bytes, times are seconds,
money is US dollars.
"""

from __future__ import annotations

from ..plan.cost import cost_table  # noqa: F401  (every offer priced: the Cost page's report, composed in one place)
from ..report.calibration import CalibrationReport
from ..results.memory import MemoryReport  # noqa: F401  (re-exported)
from ._shared import catalog_of as _catalog_of  # noqa: F401  (its old name)
from ._shared import model_summary, scenario_of  # noqa: F401  (re-exported: every API function's start)
from .compare import compare_report, compare_side  # noqa: F401  (A vs B, each side the answer to its scenario)
from .cost import _offers, answer_report, cost_report, growth_report, plan_report  # noqa: F401
from .deployment import calibrate_deployment  # noqa: F401  (your own benchmark file: calibrate --from)
from .memory import memory_at_pick, memory_report  # noqa: F401
from .perf import gpus_at_load, perf_for_gpu, perf_report, serve_report, serving_curve_report  # noqa: F401


def write_serving_calibration() -> int:
    """Simulate every published serving run again and store the predictions the error bands read."""
    from ..perf.serving_calibration import write_serving_table

    return write_serving_table()


def calibration_report() -> CalibrationReport:
    from ..perf.calibration import calibration_table, median_abs_error, regime_summary
    from ..perf.serving_calibration import HEADLINE_REGIME, SERVING_REGIMES, serving_table
    from ..perf.serving_errors import serving_median_abs_error, serving_summary
    from ..perf.serving_loso import left_out_summary, loso_table

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
        serving_left_out_source=left_out_summary(loso_table()),
    )
