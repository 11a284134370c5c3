"""The lifetime and market projections drawn from the cost report (results/cost.py: what each offer costs). Money
is US dollars."""

from __future__ import annotations

from pydantic import Field

from ..pricing.billing import MARKET_ESTIMATES, lifetime, market_projection
from ..results.base import _Report


class LifetimeMonth(_Report):
    month: int
    training_usd: float = Field(description="the training bill, paid once in month 0")
    inference_cumulative_usd: float = Field(description="serving's monthly cost x months so far")
    total_usd: float


class Lifetime(_Report):
    """Cumulative spend month by month: a training bill once, then serving every month."""

    months: list[LifetimeMonth]
    inference_passes_training_month: int | None = Field(
        description="the first month serving has cost as much as training; None: not within the months shown"
    )

    @classmethod
    def of(cls, training_usd: float, monthly_usd: float, months: int) -> Lifetime:
        return cls.model_validate(lifetime(training_usd, monthly_usd, months))


class MarketEstimate(_Report):
    """One analyst's estimate of how fast the price of equal capability falls (never averaged with another)."""

    key: str
    label: str = Field(description="the estimate, its source and date, marked ANALYST ESTIMATE")
    annual_factor: float = Field(description="the price after a year, as a share of today's")

    @classmethod
    def all(cls) -> list[MarketEstimate]:
        return [cls(key=k, **v) for k, v in MARKET_ESTIMATES.items()]


class ProjectionMonth(_Report):
    month: int
    monthly_usd: float


class MarketProjection(_Report):
    """Today's monthly cost projected with one analyst estimate (an API-price trend, not a rental forecast)."""

    estimate: MarketEstimate
    months: list[ProjectionMonth]

    @classmethod
    def of(cls, monthly_usd: float, estimate: str, months: int) -> MarketProjection:
        rows = market_projection(monthly_usd, estimate, months)  # raises for an unknown estimate, naming it
        return cls(estimate=MarketEstimate(key=estimate, **MARKET_ESTIMATES[estimate]), months=rows)
