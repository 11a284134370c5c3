"""common/stats.py: one summary of prediction errors (points, median, shares within tolerances, p80)."""

import pytest

from gpuplan_core.common.stats import error_stats

ERRORS = [0.10, 0.20, 0.30, 0.05, 0.50]  # sorted: 0.05, 0.10, 0.20, 0.30, 0.50


def test_points_median_and_shares_within():
    s = error_stats(ERRORS, within=(0.1, 0.25))
    # median of five = the third sorted value; within 10%: 0.05 and 0.10 (<= counts) = 2/5; within 25%: 3/5
    assert s == {"points": 5, "median_abs_error": 0.2, "within_10pct": 0.4, "within_25pct": 0.6}


def test_p80_interpolates_between_the_sorted_points():
    # pandas' linear quantile: position 0.8 x (5 - 1) = 3.2 -> 0.30 + 0.2 x (0.50 - 0.30) = 0.34
    assert error_stats(ERRORS, within=(), p80=True)["p80_abs_error"] == pytest.approx(0.34, abs=1e-12)


def test_an_even_count_takes_the_middle_pair_and_values_round_to_four_places():
    s = error_stats([0.011111, 0.022222, 0.5, 0.9], within=(0.5,))
    assert s["median_abs_error"] == round((0.022222 + 0.5) / 2, 4) == 0.2611
    assert s["within_50pct"] == 0.75  # 3 of 4 at or below 0.5
    assert list(s) == ["points", "median_abs_error", "within_50pct"]  # no p80 unless asked
