"""Table builders (gpuplan_ui/tables.py, tables_cost.py, tables_reference.py): the columns a page shows are the
report's numbers, converted with the unit in the column name, and the cached Arrow form shows the same rows."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pytest

from gpuplan_core import api
from gpuplan_ui import tables, tables_cost, tables_reference
from gpuplan_ui.cached import _table

LLAMA_8B = {"preset": "Llama-3.1-8B", "mode": "inference", "input_tokens": 7936, "output_tokens": 256, "batch": 8}


@pytest.fixture(scope="module")
def mem():
    return api.memory_report(LLAMA_8B)


def test_memory_components_sum_to_the_per_gpu_budget_in_both_units(mem):
    df = tables.memory_components(mem)
    assert list(df["component"]) == list(mem.components)
    assert df["bytes"].sum() == pytest.approx(mem.per_gpu_bytes, abs=len(df))  # each component rounded to 1 B
    weights = df.set_index("component").loc["weights"]
    # Llama-3.1-8B in bf16: 8,030,261,248 parameters x 2 bytes
    assert weights["bytes"] == 8_030_261_248 * 2
    assert weights["GB (10^9 B)"] == round(8_030_261_248 * 2 / 1e9, 3) == 16.061
    assert weights["GiB (2^30 B)"] == round(8_030_261_248 * 2 / 2**30, 3) == 14.958


def test_memory_gpus_one_row_per_catalog_gpu_with_usable_vram_in_gib(mem):
    df = tables.memory_gpus(mem).set_index("GPU")
    assert len(df) == len(mem.gpus)
    h100 = mem.gpu_fit("H100-SXM")
    assert df.loc["H100-SXM", "usable VRAM (GiB)"] == round(h100.vram_usable_bytes / 2**30, 2) == 79.19
    assert df.loc["H100-SXM", "fits"] == ("yes" if h100.fits else "no")
    assert df.loc["H100-SXM", "KV capacity (tokens)"] == h100.kv_capacity_tokens


def test_perf_phases_convert_flops_bytes_and_seconds():
    p = api.perf_report(LLAMA_8B | {"gpu": "H100-SXM"}, gpus=["H100-SXM"]).gpus[0]
    df = tables.perf_phases(p).set_index("phase")
    for ph in (p.prefill, p.decode):
        assert df.loc[ph.name, "TFLOP"] == round(ph.flops / 1e12, 4)
        assert df.loc[ph.name, "GB moved"] == round(ph.bytes / 1e9, 3)
        assert df.loc[ph.name, "time (ms)"] == round(ph.time_s * 1e3, 3)
        assert df.loc[ph.name, "intensity (FLOP/B)"] == pytest.approx(ph.flops / ph.bytes, abs=0.06)
    assert df.loc["decode", "bound"] == "memory"  # batch 8 decode of an 8B model is bandwidth-bound


def test_cost_always_on_is_sorted_cheapest_first_and_per_run_splits_replicas():
    cost = api.cost_report(LLAMA_8B)
    rows = cost.offers
    always = tables_cost.cost_always_on(rows)
    monthly = list(always["monthly (USD)"])
    assert monthly == sorted(monthly)
    assert monthly[0] == round(min(r.monthly_always_on_usd for r in rows), 2)
    run = tables_cost.cost_per_run(rows)
    assert list(run["GPUs"]) == [r.gpus // max(1, r.replicas) for r in rows]


def test_training_monthly_is_a_sorted_view_of_the_runs():
    cost = api.cost_report({"preset": "Llama-3.1-8B", "mode": "training", "training_tokens": 1e9, "gpus": 8})
    runs = tables_cost.training_runs(cost.offers)
    m = tables_cost.training_monthly(runs)
    assert list(m.columns) == ["offer", "GPUs", "monthly always-on (USD)"]
    assert list(m["monthly always-on (USD)"]) == sorted(runs["monthly always-on (USD)"])
    assert (runs["GPU-hours"] >= 0).all() and all(math.isfinite(x) for x in runs["per-run (USD)"])


def test_cached_table_arrow_form_shows_the_same_rows(mem):
    df = tables.memory_gpus(mem)
    t = _table(df)
    assert t.frame is df  # the CSV download: full precision
    assert isinstance(t.arrow, pa.Table)
    shown = t.arrow.to_pandas()
    assert shown.equals(tables.for_people(df)) and len(shown) == len(df) and list(shown.columns) == list(df.columns)


def test_pricing_offers_keep_source_and_date_and_count_the_age():
    import datetime as dt

    from gpuplan_core.pricing.csv_file import load_pricing

    offers = load_pricing().offers
    df = tables_reference.pricing_offers(offers)
    assert len(df) == len(offers) == 113
    first = offers[0]
    assert df.loc[0, "offer"] == first.offer_id and df.loc[0, "source"] == first.source
    assert df.loc[0, "USD/node-hour"] == round(first.price_per_node_hour_usd, 4)
    dated = next(i for i, o in enumerate(offers) if o.price_as_of and o.price_as_of != "undated")
    expected = (dt.date.today() - dt.date.fromisoformat(offers[dated].price_as_of)).days
    assert df.loc[dated, "age (days)"] == expected  # counted from the price's own date, not its retrieval
    undated = next(i for i, o in enumerate(offers) if o.price_as_of in (None, "", "undated"))
    assert df.loc[undated, "stale"] == "undated"


def test_a_column_is_as_wide_as_its_widest_text_not_its_first_rows():
    """The grid sized "provider" from its first rows and cut "hyperstack" further down: the width comes from every
    cell, in the grid's font (Source Sans 14 px: h 8 + y 7 + p 8 + e 7 + r 5 + s 6 + t 5 + a 7.5 + c 6.5 + k 7 =
    67 px) plus 22 px of padding; money as the grid draws it ("$" and cents); prose capped, the minimum kept."""
    assert tables.text_px("hyperstack") == 67.0
    assert tables.column_px("provider", ["vast", "runpod", "hyperstack"]) == 89
    assert tables.as_shown(1234.5, money=True) == "$1,234.50" and tables.as_shown(0.6318, money=False) == "0.632"
    assert tables.column_px("monthly (USD)", [1234.5], money=True) == math.ceil(tables.text_px("monthly (USD)") + 22)
    assert tables.column_px("tp", [1, 2]) == tables.MIN_COLUMN_PX
    assert tables.column_px("notes", ["x" * 500]) == tables.MAX_COLUMN_PX


def test_memory_components_basis_is_a_word_and_how_comes_last(mem):
    """ "exact" or "estimated" in the fifth column, the sentence after it in the last: the numbers stay in view."""
    df = tables.memory_components(mem)
    assert list(df.columns)[-2:] == ["basis", "how"]
    weights = df.set_index("component").loc["weights"]
    assert f"{weights['basis']}: {weights['how']}" == mem.provenance["weights"]
    assert set(df["basis"]) <= {"exact", "estimated"}


@pytest.mark.parametrize(
    "q",
    [
        {"preset": "Llama-3.1-8B"},
        {"preset": "Llama-3.1-70B", "requests_per_day": 50_000, "input_tokens": 8_000},
        {"mode": "training", "preset": "Llama-3.1-8B", "training_tokens": 1e10},
    ],
    ids=["default", "70b-8k", "training"],
)
def test_the_overviews_cheapest_table_fits_its_column_at_1280_px(q):
    """The Overview's main column is 818 px at a 1280 px window: its five cheapest fit whole (the columns' widths,
    each measured from its text, sum within it); the download keeps every column."""
    plan = api.answer_report(q).plan
    full = tables_cost.picks(plan, q.get("mode") == "training")
    t = _table(full, tables_cost.picks_shown(plan, full.columns))
    assert sum(c["width"] for c in t.config.values()) <= 818
    assert list(t.frame.columns) == list(full.columns) and {"source", "provider"} <= set(t.frame.columns)
    assert list(t.shown.columns)[:3] == ["offer", "cost (USD)", "layout"]


def test_text_after_the_first_column_gives_up_width_to_fit_a_section_at_1280_px():
    """fit_px: 100 (first) + 400 + 300 (text) + 80 (a number) = 880 px in a 600 px budget, 280 px too wide: the last
    text column gives what it can down to PROSE_MIN_PX (300 - 160 = 140), the one before it the rest (400 - 140 =
    260), so the first columns stay whole; a table that cannot fit even so (100 + 160 + a 600 px number) keeps every
    width; one that fits is untouched."""
    assert tables.PROSE_MIN_PX == 160
    assert tables.fit_px([100, 400, 300, 80], [False, True, True, False], 600) == [100, 260, 160, 80]
    assert tables.fit_px([100, 120, 400, 300, 80], [False, True, True, True, False], 700) == [100, 120, 240, 160, 80]
    assert tables.fit_px([100, 500, 600], [False, True, False], 600) == [100, 500, 600]
    assert tables.fit_px([100, 200], [False, True], 600) == [100, 200]


def test_a_table_that_still_does_not_fit_pins_its_first_column():
    """Twelve number columns of "1,000,000" (12 x 89 px > 784): nothing to narrow, so the first column is pinned
    (it stays in view while the rest scrolls); a table that fits pins nothing."""
    wide = pd.DataFrame({"GPU": ["H100-SXM"], **{f"figure {i}": [1_000_000] for i in range(12)}})
    config = _table(wide).config
    assert sum(c["width"] for c in config.values()) > tables.TABLE_PX
    assert config["GPU"]["pinned"] is True and not any(config[f"figure {i}"].get("pinned") for i in range(12))
    narrow = _table(pd.DataFrame({"GPU": ["H100-SXM"], "GPUs": [8]})).config
    assert not narrow["GPU"].get("pinned")


def test_the_price_tiers_fit_a_section_at_1280_px_and_the_csv_keeps_the_commitment():
    """Cost's price tiers (Llama-3.1-70B at 50,000 requests/day): the commitment (prose) under the table, not in a
    column cut at the section's edge; the download keeps it."""
    from gpuplan_ui import site_views

    ans = api.answer_report({"preset": "Llama-3.1-70B", "requests_per_day": 50_000})
    df = pd.DataFrame([site_views.tier_row(t) for t in ans.price_tiers])
    t = _table(df, site_views.TIER_COLUMNS)
    assert sum(c["width"] for c in t.config.values()) <= tables.TABLE_PX == 784
    assert list(t.shown.columns) == list(site_views.TIER_COLUMNS) and "commitment" in t.frame.columns
    assert list(t.frame["monthly (USD)"]) == [x.monthly_usd for x in ans.price_tiers]


def test_an_expert_parallel_pick_reads_ep_in_the_cost_chart_and_tables():
    """DeepSeek-V3 FP8 on H200 at 500,000 requests a day (the EP 8 pick of tests/core/plan/test_search_ep.py): vast's
    row is 3 replicas of 8 GPUs at EP 8, decoding plainly (spec_mtp off: MTP would need 2); the Cost chart's bar
    says so (not 'TP 1') and the tables' layout column is the core's label."""
    from gpuplan_ui.figures_cost import offer_label

    q = dict(preset="DeepSeek-V3", gpu="H200", weights_format="fp8", requests_per_day=500_000, input_tokens=2000)
    rows = api.cost_report(
        q | {"output_tokens": 500, "spec_mtp": "off", "ttft_target_s": 5.0, "tpot_target_s": 0.1}
    ).offers
    vast = next(r for r in rows if r.offer_id == "vast-h200-1-od")
    assert (vast.ep, vast.tp, vast.gpus, vast.replicas) == (8, 1, 24, 3)
    assert offer_label(vast) == "vast · 24 x H200 (EP 8, attention DP)"
    for table in (tables_cost.cost_always_on(rows), tables_cost.cost_detail(rows)):
        assert table.set_index("offer").loc["vast-h200-1-od", "layout"] == "8 x H200, EP 8 (attention DP)"
