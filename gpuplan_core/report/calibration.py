"""Typed calibration results (``calibrate --json``, the calibration tables on Performance and Methodology): the
model with its default assumptions against every published measurement, and the error per regime.

Errors are relative, (predicted - measured) / measured; ``lean`` and a regime's ``median_error`` (its bias) are
signed + where the model was optimistic (a shorter time, a higher rate, more memory than measured).
"""

from __future__ import annotations

from pydantic import Field

from ..results.base import _Report
from ..results.serving_validation import LeftOutSourceError


class CalibrationPoint(_Report):
    """One published measurement (data/measurements.csv) against the model's prediction."""

    id: str
    regime: str = Field(description="GPU generation · weights format · phase (· MoE, · transformers eager)")
    gpu: str
    gpu_count: int
    model: str
    framework: str
    metric: str
    batch: int
    unit: str
    measured: float
    predicted: float
    error: float
    lean: float
    setup: str
    source: str


class RegimeError(_Report):
    """Points and errors of one regime; a regime the catalog's GPUs can run without a point has 0 and None."""

    regime: str
    points: int
    median_abs_error: float | None
    median_error: float | None = Field(description="the bias: + optimistic")


class ServingPoint(_Report):
    """One published serving measurement under load (data/serving_measurements.csv) against the model."""

    id: str
    regime: str
    split: str = Field(description="'training' (constants may be fitted on it) or 'held out' (errors reported)")
    statistic: str = Field(description="mean, p50 or p99, as published")
    engine: str = Field(description="engine and version")
    gpu: str
    tp: int
    model: str
    lengths: str = Field(description="input/output tokens per request")
    load: str = Field(description="'request rate R' or 'concurrency N'")
    metric: str
    unit: str
    measured: float
    predicted: float | None = Field(description="None where the model predicts the load beyond one replica")
    error: float | None
    predicted_saturated: bool
    source: str


class ServingError(_Report):
    """Points and errors of one serving regime and metric."""

    regime: str
    metric: str
    points: int
    median_abs_error: float
    median_error: float
    within_25: float = Field(description="share of the points within 25%")


class CalibrationReport(_Report):
    """Every point, the overall and per-regime errors, for single requests and static batches and for serving."""

    points: list[CalibrationPoint]
    median_abs_error: float
    median_abs_error_speed_only: float = Field(description="without the KV-capacity (memory) points")
    regimes: list[RegimeError]
    serving_points: list[ServingPoint]
    serving_median_abs_error: float | None = Field(description="over the headline regime's held-out points")
    serving_headline_regime: str
    serving_regimes: dict[str, str] = Field(description="regime -> what it covers")
    serving_summary: list[ServingError]
    serving_predicted_saturated: list[str] = Field(description="ids of points the model puts beyond one replica")
    serving_left_out_source: list[LeftOutSourceError] = Field(
        default_factory=list,
        description="each source left out in turn (its client's cost fitted on the other sources that client sent): "
        "error per source, engine, GPU, model class and metric, from data/serving_loso.csv",
    )
    serving_left_out_source_file: str = Field(
        default="data/serving_loso.csv", description="the stored left-out-source predictions"
    )

    @property
    def measured_regimes(self) -> list[RegimeError]:
        return [g for g in self.regimes if g.points]
