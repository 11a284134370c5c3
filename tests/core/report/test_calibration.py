"""The typed calibration report (report/calibration.py): its headline errors are the medians of its points."""

from __future__ import annotations

import statistics

from gpuplan_core import api


def test_calibration_report_headlines_are_the_medians_of_its_points():
    r = api.calibration_report()
    assert r.median_abs_error == statistics.median(abs(p.error) for p in r.points)
    speed = [abs(p.error) for p in r.points if p.metric != "kv_cache_capacity_tokens"]
    assert r.median_abs_error_speed_only == statistics.median(speed)
    headline = [
        abs(p.error)
        for p in r.serving_points
        if p.regime == r.serving_headline_regime and p.error is not None and p.split == "held out"
    ]
    assert r.serving_median_abs_error == statistics.median(headline)
    assert r.serving_predicted_saturated == [p.id for p in r.serving_points if p.predicted_saturated]
    assert all(g.points for g in r.measured_regimes) and len(r.measured_regimes) < len(r.regimes)
    assert all(g.median_abs_error is None for g in r.regimes if not g.points)
    assert {s.regime for s in r.serving_summary} <= set(r.serving_regimes)  # each regime says what it covers
