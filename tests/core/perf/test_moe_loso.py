"""The MoE step constants fitted without a left-out source (perf/moe_loso.py): the sources the stored constants read
are predicted, left out, with constants fitted on the others by bench/fit_tp_moe.py's rules; the rest with the
stored ones."""

import pandas as pd
import pytest

from gpuplan_core.hardware.catalog import moe_efficiency_factors
from gpuplan_core.perf import moe_loso
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.serving_loso import LOSO_FILE


def _row(source, key, error, light=False):
    return {"id": source + "-001", "sources": (source,), "key": key, "light": light, "error": error}


HOPPER, CDNA3 = ("Hopper", "FP8"), ("CDNA3", "FP8")


def test_a_factor_is_the_grid_value_with_the_least_median_error_on_the_other_sources():
    """By hand, on a grid of two floors: source a's Hopper rows are best at 0.5, b's at 0.3; CDNA3 only a has. Left
    out a: Hopper 0.3 (b's), CDNA3 absent (no row: 1.0); left out b: Hopper 0.5; the floor is read on the light
    time-per-token rows, each at its family's factor there."""
    best = {"a": 0.5, "b": 0.3}

    def rows(o, v):
        out = [_row(s, HOPPER, abs(v - f) + (0.0 if o == 0.0 else 0.01)) for s, f in best.items()]
        out.append(_row("a", CDNA3, abs(v - 0.2)))
        out.append(_row("b", HOPPER, abs(v - 0.3) + (0.2 if o == 0.0 else 0.0), light=True))
        return out

    grid = {(o, v): rows(o, v) for o in (0.0, 1e-7) for v in moe_loso.FACTOR_GRID}
    moe_loso_grid = moe_loso.OVERHEAD_GRID
    try:
        moe_loso.OVERHEAD_GRID = (0.0, 1e-7)
        without_a = moe_loso.fit_moe_constants(grid, "a")
        without_b = moe_loso.fit_moe_constants(grid, "b")
    finally:
        moe_loso.OVERHEAD_GRID = moe_loso_grid
    assert without_a[HOPPER] == 0.3 and CDNA3 not in without_a
    assert without_a["overhead"] == 1e-7  # b's light row: 0.2 worse at no floor
    assert without_a["read on"][HOPPER] == "b"
    assert without_b[HOPPER] == 0.5 and without_b[CDNA3] == 0.2
    assert without_b["overhead"] == 0.0  # no light row left: no floor
    assert without_b["read on"]["overhead"] == ""


def test_a_single_request_row_counts_as_the_serving_source_of_the_same_document():
    docs = {"Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md": {"trtblog-dsr1"}}
    blog = {
        "id": "trt-h200-fp8-dsr1-c1024-dp8-1024-2048",
        "source": "NVIDIA/TensorRT-LLM docs/source/blogs/"
        "Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md; read at NVIDIA/TensorRT-LLM@01c4ece",
    }
    readme = {"id": "gptfast-a100-bf16-mixtral-b1-tp2", "source": "pytorch-labs/gpt-fast mixtral-moe/README.md"}
    assert moe_loso.publication(blog, docs) == ("trtblog-dsr1",)
    assert moe_loso.publication(readme, docs) == ("gptfast",)  # a README names no document of its own


def test_only_the_sources_the_stored_constants_read_are_refitted():
    """constants_without: None (the stored constants) for a source they never read; factor_of / floor_of read the
    stored ones then."""
    assert moe_loso.constants_without({}, "sglcb-dsr1-b200") is None
    row = {"gpu": "H200", "weights_format": "fp8"}
    assert moe_loso.factor_of(None, row) == moe_efficiency_factors()[HOPPER]
    assert moe_loso.factor_of({"overhead": 1e-7}, row) == 1.0  # a family the fit has no row of
    assert moe_loso.floor_of(None) == PerfAssumptions().moe_overhead_s_per_expert_layer


def test_the_stored_left_out_rows_carry_the_constants_they_were_predicted_with():
    """data/serving_loso.csv: every MoE row of a source the stored constants never read carries the stored ones;
    dstack's DeepSeek-R1 (read by the stored fit) carries a refitted floor and factors."""
    frame = pd.read_csv(LOSO_FILE)
    moe = frame[frame["model_class"] != "dense"]
    assert moe["moe_factor"].notna().all() and frame.loc[frame["model_class"] == "dense", "moe_factor"].isna().all()
    kept = moe[~moe["source"].isin(moe_loso.STORED_FIT_READ)]
    assert kept["moe_overhead_s"].to_numpy() == pytest.approx(PerfAssumptions().moe_overhead_s_per_expert_layer)
    refit = moe[moe["source"] == "dstack-dsr1"]
    assert set(refit["moe_overhead_s"]) <= set(moe_loso.OVERHEAD_GRID)
    assert set(refit["moe_factor"]) <= set(moe_loso.FACTOR_GRID)
