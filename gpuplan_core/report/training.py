"""How far to trust training answers: the training memory budget against measured peaks and the training step
model against held-out published runs, as typed results with the sentences Methodology and README quote."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..memory.training_measurements import peak_summary
from ..perf.training_calibration import stored_calibration
from ..perf.training_sources import holdout_sentence

PAGED = "paged optimizers (full fine-tuning)"


class RegimeError(BaseModel):
    regime: str
    points: int
    median_abs_error: float = Field(description="median |predicted / measured - 1|")
    within: float = Field(description="share of runs within the stated tolerance (memory 20%, speed 15%)")


class TrainingAccuracy(BaseModel):
    memory_all: RegimeError = Field(description="every measured peak but full fine-tuning with a paged optimizer")
    memory_regimes: list[RegimeError]
    memory_paged_points: int
    speed_all: RegimeError = Field(description="held-out dense runs, tokens/s per GPU")
    speed_regimes: list[RegimeError]
    speed_runs: int = Field(description="published runs with a measured tokens/s per GPU, fitted and held out")
    speed_fixed_mfu_median: float = Field(description="a fixed MFU of 0.40 on the same held-out dense runs")
    speed_band: float = Field(description="the predicted MFU's band: the held-out 80th percentile |error|")
    speed_moe_median: float = Field(description="held-out mixture-of-experts runs")
    speed_moe_points: int
    speed_moe_band: float = Field(description="a mixture-of-experts prediction's band (held-out 80th percentile)")
    speed_by_source: str = Field(
        "", description="median |error| per class and per source with each source left out of the fit in turn"
    )

    @property
    def memory_points(self) -> int:
        return self.memory_all.points + self.memory_paged_points

    @property
    def memory_line(self) -> str:
        by = ", ".join(f"{r.regime} {r.median_abs_error:.0%} ({r.points})" for r in self.memory_regimes)
        a = self.memory_all
        return f"median |error| {a.median_abs_error:.0%}, {a.within:.0%} within 20%; by regime {by}"

    @property
    def speed_line(self) -> str:
        a = self.speed_all
        by = ", ".join(f"{r.regime} {r.median_abs_error:.1%} ({r.points})" for r in self.speed_regimes)
        return (
            f"tokens/s per GPU {a.median_abs_error:.1%} off at the median, {a.within:.0%} within 15% ({a.points} "
            f"runs; {by})"
        )


def _regime(name: str, v: dict, within: str) -> RegimeError:
    return RegimeError(regime=name, points=v["points"], median_abs_error=v["median_abs_error"], within=v[within])


def training_accuracy() -> TrainingAccuracy:
    mem = peak_summary()
    cal = stored_calibration()
    held = cal["held_out"]
    dense = [k for k in held if k not in ("all dense", "mixture of experts")]  # MoE apart: its own fields
    return TrainingAccuracy(
        memory_all=_regime("all", mem["all (not paged)"], "within_20pct"),
        memory_regimes=[_regime(k, v, "within_20pct") for k, v in mem.items() if k not in ("all (not paged)", PAGED)],
        memory_paged_points=mem.get(PAGED, {}).get("points", 0),
        speed_all=_regime("all dense", held["all dense"], "within_15pct"),
        speed_regimes=[_regime(k, held[k], "within_15pct") for k in dense],
        speed_runs=sum(v["points"] for k, v in cal["training"].items() if k != "all dense")
        + sum(v["points"] for k, v in held.items() if k != "all dense"),
        speed_fixed_mfu_median=cal["held_out_at_mfu_0_40"]["all dense"]["median_abs_error"],
        speed_band=cal["band_relative"],
        speed_moe_median=held["mixture of experts"]["median_abs_error"],
        speed_moe_points=held["mixture of experts"]["points"],
        speed_moe_band=held["mixture of experts"]["p80_abs_error"],
        speed_by_source=holdout_sentence(),
    )
