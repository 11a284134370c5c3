"""Typed growth result: the answer's pick re-planned month by month as the traffic grows (plan/growth.py's ``grow``
computes it and holds the formulas). Money in US dollars per month of the scenario's hours (``monthly_``) or in
total (``_usd``)."""

from __future__ import annotations

from pydantic import Field

from ..common.text import counted
from .base import _Report


class GrowthMonth(_Report):
    month: int = Field(description="months from now (0: this month)")
    requests_per_day: float = Field(description="requests per day x (1 + growth)^month, x the spike factor")
    peak_requests_per_s: float = Field(description="the month's busiest-hour rate: per day / 86,400 x peak-to-average")
    replicas: int = Field(description="copies of the pick's layout for the month's peak: ceil(peak / capacity)")
    monthly_usd: float = Field(description="the month's bill for those replicas on the pick's offer")
    training_usd: float = Field(description="the training bill, paid once in month 0")
    inference_cumulative_usd: float = Field(description="serving's cost in the months before this one")
    total_usd: float


class Growth(_Report):
    """The pick's layout and offer, its replicas re-planned for each month's traffic with the same serving model."""

    monthly_growth: float = Field(description="traffic growth per month, a fraction (compounded)")
    spike_month: int | None = Field(description="the month of the spike, counted from now; None: no spike")
    spike_factor: float = Field(description="the spike month's traffic over the trend's")
    offer_id: str
    layout: str = Field(description="one replica of the pick, e.g. '2 x H100-SXM, TP 2'")
    requests_per_s_per_replica: float = Field(description="one replica's capacity within the targets (req/s)")
    pick_replicas: int = Field(description="the replicas the answer rents for today's traffic")
    pick_monthly_usd: float | None = Field(description="the answer's monthly cost today")
    months: list[GrowthMonth]
    more_replicas_month: int | None = Field(
        description="the first month the pick's replicas no longer meet the targets; None: not within the months"
    )
    next_step_replicas: int | None = Field(description="the replicas that month needs")
    next_step_monthly_usd: float | None = Field(description="that month's bill")
    inference_passes_training_month: int | None = Field(
        description="the first month serving has cost as much as training; None: no bill, or not within the months"
    )

    def text(self) -> str:
        """The lifetime in words: today's replicas, the first step up and what it costs, the last month's fleet."""
        trend = [f"{self.monthly_growth:.0%} more traffic a month"] if self.monthly_growth else []
        if self.spike_month is not None:
            trend.append(f"a {self.spike_factor:g}x spike in month {self.spike_month}")
        last = self.months[-1]
        out = (
            f"Re-planned month by month with {' and '.join(trend) or 'steady traffic'}: "
            f"{counted(self.pick_replicas, 'replica')} of {self.layout} ({self.requests_per_s_per_replica:,.2f} "
            "req/s each within the targets) "
            "carry today's traffic"
        )
        if self.more_replicas_month is None:
            return out + f" through month {last.month}."
        extra = (self.next_step_monthly_usd or 0.0) - (self.pick_monthly_usd or 0.0)
        out += (
            f"; month {self.more_replicas_month} needs {self.next_step_replicas}, {self.next_step_monthly_usd:,.0f} "
            f"USD a month ({extra:+,.0f})"
        )
        return out + f"; month {last.month}: {counted(last.replicas, 'replica')}, {last.monthly_usd:,.0f} USD a month."
