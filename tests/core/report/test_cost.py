"""The lifetime and market projections drawn from the cost report (report/cost.py) multiply out."""

from __future__ import annotations

import pytest

from gpuplan_core.report.cost import Lifetime, MarketEstimate, MarketProjection


def test_lifetime_crossover_by_hand():
    life = Lifetime.of(100_000, 30_000, 12)
    assert life.inference_passes_training_month == 4  # 3 x 30,000 < 100,000 <= 4 x 30,000
    assert life.months[12].total_usd == 100_000 + 12 * 30_000
    assert Lifetime.of(100_000, 1_000, 12).inference_passes_training_month is None


def test_market_projection_uses_one_named_estimate():
    p = MarketProjection.of(1_000, "a16z", 24)
    assert p.estimate.label.startswith("ANALYST ESTIMATE") and p.estimate.annual_factor == pytest.approx(0.1)
    assert p.months[12].monthly_usd == pytest.approx(100)  # ~10x cheaper a year
    assert p.months[24].monthly_usd == pytest.approx(10)
    assert {e.key for e in MarketEstimate.all()} >= {"a16z", "epoch"}
    with pytest.raises(ValueError, match="estimate"):
        MarketProjection.of(1_000, "average", 12)
