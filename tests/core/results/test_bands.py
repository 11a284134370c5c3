"""ErrorBand (results/bands.py): the band's words from its numbers."""

from __future__ import annotations

from gpuplan_core.results.bands import ErrorBand


def test_a_calibrated_band_in_words():
    b = ErrorBand(regime="decode, H100, bf16", points=9, band=0.12, bias=0.25)
    assert b.short == "±12% (9 measurements)"
    assert b.text == (
        "Typically within ±12% of 9 comparable published measurements (decode, H100, bf16); there the model has "
        "been optimistic (faster than measured) by 25% at the median."
    )
    assert b.provenance == "calibrated roofline: 9 comparable published measurements (decode, H100, bf16)"


def test_small_bias_unsaid_and_one_measurement_singular():
    b = ErrorBand(regime="prefill", points=1, band=0.05, bias=-0.09)  # |bias| under 10%: not stated
    assert b.short == "±5% (1 measurement)"
    assert b.text == "Typically within ±5% of 1 comparable published measurement (prefill)."
    slow = ErrorBand(regime="prefill", points=3, band=0.2, bias=-0.3)
    assert slow.text.endswith("pessimistic (slower than measured) by 30% at the median.")


def test_no_comparable_measurement():
    bare = ErrorBand(regime="decode, MI300X", points=0, band=None, bias=None)
    assert bare.short == "no comparable measurement"
    assert bare.text == "No comparable measurement (decode, MI300X): a roofline estimate."
    wide = bare.model_copy(update={"phase_band": 0.18, "phase_points": 40})
    assert wide.text == (
        "No comparable measurement (decode, MI300X): a roofline estimate; across other GPUs and formats this phase "
        "is typically within ±18% (40 measurements)."
    )
    assert bare.to_dict()["short"] == "no comparable measurement"  # computed fields are in the JSON
