"""The serving model's error on the published runs (serving_calibration.py's table of predicted vs measured): the
median absolute error of a regime and metric, and the summary per regime and metric that Methodology, the README
and ``calibrate --json`` report."""

from __future__ import annotations

import statistics

from .serving_calibration import HEADLINE_REGIME, METRICS, SERVING_REGIMES


def _errors(table, regime, metric, split) -> list[float]:
    return [
        r["error"]
        for r in table
        if r["error"] is not None
        and (regime is None or r["regime"] == regime)
        and (metric is None or r["metric"] == metric)
        and (split is None or r["split"] == split)
    ]


def serving_median_abs_error(
    table: list[dict], regime: str | None = HEADLINE_REGIME, metric: str | None = None, split: str | None = "held out"
) -> float | None:
    errs = _errors(table, regime, metric, split)
    return statistics.median(abs(e) for e in errs) if errs else None


def serving_summary(table: list[dict], split: str | None = "held out") -> list[dict]:
    """Per regime and metric: points compared, median absolute error, median signed error (bias), on the
    held-out rows (or ``split``)."""
    out = []
    for regime in SERVING_REGIMES:
        for metric in METRICS:
            errs = _errors(table, regime, metric, split)
            if errs:
                out.append(
                    {
                        "regime": regime,
                        "metric": metric,
                        "points": len(errs),
                        "median_abs_error": statistics.median(abs(e) for e in errs),
                        "median_error": statistics.median(errs),
                        "within_25": sum(abs(e) <= 0.25 for e in errs) / len(errs),
                    }
                )
    return out
