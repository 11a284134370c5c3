"""Growth (results/growth.py): the lifetime sentence from the months' figures."""

from __future__ import annotations

from gpuplan_core.results.growth import Growth, GrowthMonth


def _month(month: int, replicas: int, monthly: float) -> GrowthMonth:
    rpd = 10_000 * 1.1**month
    return GrowthMonth(
        month=month,
        requests_per_day=rpd,
        peak_requests_per_s=rpd / 86_400 * 3,
        replicas=replicas,
        monthly_usd=monthly,
        training_usd=0.0,
        inference_cumulative_usd=monthly * month,
        total_usd=monthly * (month + 1),
    )


def _growth(**kw) -> Growth:
    base = dict(
        monthly_growth=0.1,
        spike_month=None,
        spike_factor=3.0,
        offer_id="x",
        layout="1 x H100-SXM",
        requests_per_s_per_replica=1.234,
        pick_replicas=1,
        pick_monthly_usd=2000.0,
        months=[_month(0, 1, 2000.0), _month(6, 2, 4000.0), _month(12, 3, 6000.0)],
        more_replicas_month=6,
        next_step_replicas=2,
        next_step_monthly_usd=4000.0,
        inference_passes_training_month=None,
    )
    return Growth(**{**base, **kw})


def test_lifetime_with_a_step_up():
    assert _growth().text() == (
        "Re-planned month by month with 10% more traffic a month: 1 replica of 1 x H100-SXM (1.23 req/s each "
        "within the targets) carry today's traffic; month 6 needs 2, 4,000 USD a month (+2,000); month 12: 3 "
        "replicas, 6,000 USD a month."
    )


def test_steady_traffic_with_a_spike_and_no_step():
    g = _growth(monthly_growth=0.0, spike_month=3, more_replicas_month=None, months=[_month(0, 1, 2000.0)])
    assert g.text() == (
        "Re-planned month by month with a 3x spike in month 3: 1 replica of 1 x H100-SXM (1.23 req/s each within "
        "the targets) carry today's traffic through month 0."
    )
    assert (
        _growth(monthly_growth=0.0, more_replicas_month=None)
        .text()
        .startswith("Re-planned month by month with steady traffic:")
    )
