"""How far to trust training answers (report/training.py): the sentences from the regimes' errors."""

from __future__ import annotations

from gpuplan_core.report.training import RegimeError, TrainingAccuracy, training_accuracy


def _acc() -> TrainingAccuracy:
    return TrainingAccuracy(
        memory_all=RegimeError(regime="all", points=40, median_abs_error=0.081, within=0.875),
        memory_regimes=[
            RegimeError(regime="LoRA", points=25, median_abs_error=0.06, within=0.9),
            RegimeError(regime="QLoRA", points=15, median_abs_error=0.11, within=0.8),
        ],
        memory_paged_points=6,
        speed_all=RegimeError(regime="all dense", points=12, median_abs_error=0.0734, within=0.75),
        speed_regimes=[RegimeError(regime="Megatron", points=12, median_abs_error=0.0734, within=0.75)],
        speed_runs=30,
        speed_fixed_mfu_median=0.2,
        speed_band=0.15,
        speed_moe_median=0.3,
        speed_moe_points=4,
        speed_moe_band=0.4,
    )


def test_lines_in_words():
    a = _acc()
    assert a.memory_points == 46  # 40 not paged + 6 paged
    assert a.memory_line == "median |error| 8%, 88% within 20%; by regime LoRA 6% (25), QLoRA 11% (15)"
    assert a.speed_line == "tokens/s per GPU 7.3% off at the median, 75% within 15% (12 runs; Megatron 7.3% (12))"


def test_stored_accuracy_is_consistent():
    """The stored tables: the regimes' points add up to the whole (memory: paged apart), shares within 0..1."""
    a = training_accuracy()
    assert a.memory_all.points == sum(r.points for r in a.memory_regimes)
    assert a.memory_points == a.memory_all.points + a.memory_paged_points
    assert all(0 <= r.within <= 1 and r.median_abs_error >= 0 for r in [*a.memory_regimes, *a.speed_regimes])
    assert a.speed_moe_band >= a.speed_moe_median  # an 80th percentile is at least the median
