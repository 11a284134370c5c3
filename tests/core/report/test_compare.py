"""Compare A vs B: what a side runs on is always a difference; a side without a configuration has no price and says
why; each side is the answer to its scenario (the Overview's figures); B's GPU count follows A's only while it runs."""

from gpuplan_core import api, load_pricing, ms, to_scenario, variant
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
    b = A.model_copy(
        update={
            "fits": False,
            "per_gpu_bytes": 90e9,
            "needs": "2 x H100 SXM",
            "ttft_s": None,
            "tpot_s": None,
            "monthly_usd": None,
            "per_million_usd": None,
        }
    )
    c = compare(A, b)
    assert c.verdict == (
        "B needs 350% more memory per GPU; only A fits (B has no configuration: 2 x H100 SXM); A costs $1,000 a month."
    )
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


def _same_as_answer(side, ans):
    """A side states its scenario's answer: the pick's GPUs, memory per GPU, latencies and monthly cost."""
    p = ans.pick
    assert side.fits and (side.gpu, side.gpus) == (p.gpu, p.gpus)
    assert side.per_gpu_bytes == ans.memory_per_gpu_bytes
    assert (side.ttft_s, side.tpot_s, side.monthly_usd) == (p.ttft_s, p.tpot_s, p.monthly_usd)


def test_70b_fp8_pinned_to_h100_against_h200_states_each_sides_answer():
    """The issue's link: A pinned to the H100 SXM is the layout search on it (70.6 GB of FP8 weights need TP 2 on
    80 GB cards), B pinned to the H200 is the search on the H200 (one 141 GB card holds it): each side's first token
    is its Overview's (the old Compare gave the H200 a 2,080 ms static-batch first token; the answer's p95 is the
    serving engine's)."""
    vals = {"model": "Llama-3.1-70B", "weights": "fp8", "gpu": "H100-SXM", "b_gpu": "H200"}
    sc, _ = to_scenario(vals)
    sc_b, _ = variant(sc, vals)
    offers = load_pricing().offers
    r = api.compare_report(sc, sc_b, offers)
    ans_a, ans_b = api.answer_report(sc, offers=offers), api.answer_report(sc_b, offers=offers)
    _same_as_answer(r.a, ans_a)
    _same_as_answer(r.b, ans_b)
    assert (r.a.gpus, r.a.settings["Layout"]) == (2, "2 GPUs (TP 2)")
    assert (r.b.gpus, r.b.settings["Layout"]) == (1, "one GPU")
    assert r.a.pinned and r.a.how == "pinned to H100 SXM: the layout search on that GPU"
    assert r.b.ttft_s <= sc_b.traffic.ttft_target_s and ms(r.b.ttft_s) == ms(ans_b.pick.ttft_s)
    assert r.comparison.verdict.startswith("B runs 1 x H200 instead of 2 x H100 SXM")


def test_70b_any_gpu_side_a_is_the_answer():
    """/Compare?model=Llama-3.1-70B&rpd=50000: A is the Overview's answer (the old page sized A on a default H100
    and said 'A does not fit: it needs 3 x H100 SXM')."""
    sc, _ = to_scenario({"model": "Llama-3.1-70B", "rpd": 50000})
    offers = load_pricing().offers
    r = api.compare_report(sc, sc, offers)
    ans = api.answer_report(sc, offers=offers)
    _same_as_answer(r.a, ans)
    assert not r.a.pinned and r.a.how == "the answer: the layout search's pick"
    assert r.comparison.identical  # B is "same as A" everywhere: the same answer


def test_b_count_follows_a_only_while_it_runs():
    """A: 70B BF16 on 2 x H200 (TP 2). B on the H100 at A's count: 2 x 80 GB cannot hold 141 GB of BF16 weights, so
    the search pinned to 2 x H100 finds nothing and B is the search on the H100 at the count it chooses (and says
    so). With B's own count set, B keeps it and says why nothing runs."""
    vals = {"model": "Llama-3.1-70B", "gpu": "H200", "gpus": 2.0, "tp": 2, "b_gpu": "H100-SXM"}
    sc, _ = to_scenario(vals)
    sc_b, _ = variant(sc, vals)
    offers = load_pricing().offers
    follow = api.compare_report(sc, sc_b, offers, b_count_from_a=True)
    assert follow.a.fits and follow.b.fits
    assert follow.notes and follow.notes[0].startswith("B: A's layout (2 GPUs, TP 2) does not run on the H100 SXM")
    free = api.answer_report(sc_b.with_(gpus=1, tp=1, pp=1), offers=offers)
    _same_as_answer(follow.b, free)
    assert follow.b.settings["GPUs"] == f"{free.pick.gpus} x H100 SXM" and free.pick.tp * free.pick.pp > 2
    own = api.compare_report(sc, sc_b, offers, b_count_from_a=False)
    assert not own.b.fits and own.b.needs == api.answer_report(sc_b, offers=offers).message and not own.notes
