"""Compare A vs B: what a side runs on is always a difference; a side that does not fit has no price and says what
it needs; B's GPU count follows A's only while it fits."""

from gpuplan_core import api, load_pricing, to_scenario, variant
from gpuplan_core.report.compare import Side, compare

A = Side(
    label="A",
    settings={"GPUs": "1 x H100 SXM", "Weights": "BF16 weights"},
    fits=True,
    per_gpu_bytes=20e9,
    ttft_s=0.3,
    tpot_s=0.008,
    monthly_usd=1000,
    per_million_usd=1,
)


def test_identical_sides_and_a_side_that_does_not_fit():
    same = compare(A, A.model_copy())
    assert same.identical and same.verdict == "A and B are identical: every number is the same."
    assert all(r.change in ("0", "same") for r in same.rows)
    b = A.model_copy(update={"fits": False, "per_gpu_bytes": 90e9, "needs": "2 x H100 SXM", "ttft_s": None,
                             "tpot_s": None, "monthly_usd": None, "per_million_usd": None})  # fmt: skip
    c = compare(A, b)
    assert c.verdict == "B needs 350% more memory per GPU; only A fits (B needs 2 x H100 SXM); A costs $1,000 a month."
    cost = next(r for r in c.rows if r.metric == "Cost per month")
    assert cost.b == "n/a" and cost.change == "n/a"  # no price for what cannot run
    cheaper = A.model_copy(update={"monthly_usd": 710, "tpot_s": 0.008 / 1.4})
    assert compare(A, cheaper).verdict == "B is 29% cheaper per month and 1.4x faster per token; both fit."


def test_a_gpu_difference_is_a_difference_even_when_the_numbers_match():
    b = A.model_copy(update={"settings": {**A.settings, "GPUs": "1 x H200"}})
    c = compare(A, b)
    assert not c.identical
    assert c.verdict == "B runs 1 x H200 instead of 1 x H100 SXM; both fit."
    assert c.rows[0].metric == "GPUs" and (c.rows[0].a, c.rows[0].b) == ("1 x H100 SXM", "1 x H200")


def test_70b_fp8_on_one_h100_against_one_h200():
    """The issue's link: A (one H100, 80 GB) cannot hold 70B in FP8 (70.6 GB of weights + runtime), B (H200) can."""
    vals = {"model": "Llama-3.1-70B", "weights": "fp8", "gpu": "H100-SXM", "b_gpu": "H200"}
    sc, _ = to_scenario(vals)
    sc_b, _ = variant(sc, vals)
    offers = load_pricing().offers
    r = api.compare_report(sc, sc_b, offers)
    assert (r.a.fits, r.b.fits) == (False, True)
    assert r.a.monthly_usd is None  # no price for what cannot run
    assert r.a.needs == "2 x H100 SXM"
    # B's price is the cheapest H200 offer at B's own layout (one GPU), priced always-on
    rows = [x for x in api.cost_report(sc_b, offers=offers, fixed_layout=True).offers if x.gpu == "H200"]
    best = min(x.monthly_always_on_usd for x in rows)
    assert r.b.monthly_usd == best
    assert r.comparison.verdict.startswith(
        "B runs 1 x H200 instead of 1 x H100 SXM; only B fits (A needs 2 x H100 SXM)"
    )


def test_b_count_follows_a_only_while_it_fits():
    """A: 70B BF16 on 2 x H200 (TP 2) fits; B on H100 at A's count (2 x 80 GB) does not: B takes the fewest H100s
    that hold it, and says so. With B's own count set, B keeps it and shows what it needs."""
    vals = {"model": "Llama-3.1-70B", "gpu": "H200", "gpus": 2.0, "tp": 2, "b_gpu": "H100-SXM"}
    sc, _ = to_scenario(vals)
    sc_b, _ = variant(sc, vals)
    offers = load_pricing().offers
    follow = api.compare_report(sc, sc_b, offers, b_count_from_a=True)
    assert follow.a.fits and follow.b.fits
    assert follow.notes and "A's count" in follow.notes[0]
    need = api.memory_report(sc_b).gpu_fit("H100-SXM").min_gpus
    assert follow.b.settings["GPUs"] == f"{need} x H100 SXM"
    own = api.compare_report(sc, sc_b, offers, b_count_from_a=False)
    assert not own.b.fits and own.b.needs == f"{need} x H100 SXM" and not own.notes
