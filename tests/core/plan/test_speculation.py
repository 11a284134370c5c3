"""plan/speculation.py: where the scenario names a draft model the serving search weighs speculative decoding
against plain decoding at every offer and layout and picks it only where it is cheaper at the targets; the pick and
the why-chain say which and what the other costs; without a draft nothing changes."""

from __future__ import annotations

import pytest

from gpuplan_core.plan import rent
from gpuplan_core.plan.cost import offers_for
from gpuplan_core.plan.recommend import recommend
from gpuplan_core.plan.speculation import plain
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

OFFERS = [o for o in load_pricing().offers if o.gpu in ("RTX-5090", "RTX-3090", "H100-SXM", "L40S")]


def _sc(tpot_s: float, **spec) -> Scenario:
    return Scenario(
        preset="Llama-3.1-8B",
        input_tokens=1000,
        output_tokens=300,
        requests_per_day=20_000,
        tpot_target_s=tpot_s,
        **spec,
    )


def _cheapest(picks):
    ok = [p for p in picks if not p.misses]
    return min(ok, key=lambda p: (p.rank_cost, p.ttft_s)) if ok else None


def _by_search(sc: Scenario, m):
    """The cheapest pick meeting the targets of each search alone: decoding plainly, and speculating."""
    fmt, offers = [sc.formats.weights_format], offers_for(OFFERS, sc.job, sc.pricing, sc.parallelism)
    base = rent._candidates(m, plain(sc), offers, fmt, False, True)
    spec = rent._candidates(m, sc, offers, fmt, False, True)
    return _cheapest(base.picks), _cheapest(spec.picks)


def test_a_tight_time_per_token_speculates_where_that_is_cheaper():
    """A 12 ms time per token: Llama-3.1-8B decodes at 13.6 ms on one RTX 5090 even at light load, so plain
    decoding needs two (TP 2, $701 a month); a 1B draft of 4 tokens at acceptance 0.7 (2.77 tokens a step) meets
    the target on one ($350): the pick speculates, and is the cheaper of the two searches' picks."""
    sc = _sc(0.012, spec_draft_params=10**9)
    plan = recommend(sc, OFFERS)
    pick = plan.picks[0]
    base, spec = _by_search(sc, sc.model())
    assert pick.speculation is not None and pick.speculation.runs
    assert (pick.offer_id, pick.layout, pick.monthly_usd) == (spec.offer_id, spec.layout, spec.monthly_usd)
    assert pick.rank_cost < base.rank_cost  # cheaper than the cheapest plain pick meeting the targets
    assert pick.tpot_s < 0.012 and pick.speculation.misses_without  # plain misses at this offer and layout
    assert (pick.layout, round(pick.monthly_usd)) == ("1 x RTX-5090, TP 1", 350)
    assert pick.speculation.other_best.startswith("$701 a month on 2 x RTX-5090, TP 2")
    step = plan.why[-1]
    assert (step.label, step.value) == ("Speculative decoding", "on")
    assert "2.77 tokens a step" in step.detail and "the cheapest decoding plainly: $701 a month" in step.detail
    assert pick.why[-2].startswith("speculative decoding with a 1B draft model")
    no_draft = recommend(_sc(0.012), OFFERS).picks[0]
    assert no_draft.rank_cost == base.rank_cost and no_draft.speculation is None


@pytest.mark.parametrize("acceptance", [0.7, 0.2])
def test_where_speculation_is_no_cheaper_the_pick_decodes_plainly(acceptance):
    """A lax 50 ms target: both meet it on the same layout at the same price, so (a tie) the pick decodes plainly,
    exactly the pick without a draft; at acceptance 0.2 (1.25 tokens a step) speculating is never cheaper."""
    for tpot in (0.05, 0.012) if acceptance == 0.2 else (0.05,):
        sc = _sc(tpot, spec_draft_params=10**9, spec_acceptance=acceptance)
        plan = recommend(sc, OFFERS)
        pick, no_draft = plan.picks[0], recommend(_sc(tpot), OFFERS).picks[0]
        assert not pick.speculation.runs
        assert (pick.offer_id, pick.layout, pick.monthly_usd, pick.tpot_s) == (
            no_draft.offer_id,
            no_draft.layout,
            no_draft.monthly_usd,
            no_draft.tpot_s,
        )
        assert (plan.why[-1].label, plan.why[-1].value) == ("Speculative decoding", "off")
        assert plan.why[-1].detail.startswith("decodes plainly: ")


def test_the_pick_is_the_cheapest_of_both_searches():
    """The pick is the cheapest meeting the targets over every offer and layout, decoding plainly or speculating
    (each search exhaustive)."""
    for tpot, acceptance in ((0.012, 0.7), (0.02, 0.8), (0.05, 0.7)):
        sc = _sc(tpot, spec_draft_params=10**9, spec_acceptance=acceptance)
        pick = recommend(sc, OFFERS).picks[0]
        base, spec = _by_search(sc, sc.model())
        best = min((p for p in (base, spec) if p), key=lambda p: (p.rank_cost, p.ttft_s))
        assert pick.rank_cost == best.rank_cost
        assert pick.speculation.runs == (spec is not None and (base is None or spec.rank_cost < base.rank_cost))


def test_without_a_draft_a_pick_has_no_speculation_and_its_json_no_key():
    pick = recommend(_sc(0.05), OFFERS).picks[0]
    assert pick.speculation is None and "speculation" not in pick.model_dump()


def _dsv3(**kw) -> Scenario:
    return Scenario(
        preset="DeepSeek-V3",
        weights_format="fp8",
        kv_format="fp8",
        input_tokens=1000,
        output_tokens=300,
        requests_per_day=200_000,
        tpot_target_s=0.05,
        **kw,
    )


def test_deepseek_v3_s_mtp_module_is_weighed_without_a_draft_model():
    """DeepSeek-V3 ships an MTP module (model/draft.py): with no draft model named and ``spec_mtp`` "weigh" the
    search runs each H200 offer and layout decoding plainly and with the MTP module (1 token a step at the DeepSeek-V3
    report's 0.85: 1.85 tokens a step, its weights and KV in the budget, its prefill in the first token). At 50 ms a
    token and 200,000 requests a day one 8 x H200 machine speculating ($15,476 a month) does what plain decoding
    needs four of there ($61,904); the cheapest plain pick is serverless at $53,023. "off": plain decoding alone."""
    h200 = [o for o in load_pricing().offers if o.gpu == "H200"]
    plan = recommend(_dsv3(), h200)
    pick = plan.picks[0]
    assert pick.speculation is not None and pick.speculation.runs
    assert (pick.offer_id, pick.layout, round(pick.monthly_usd)) == ("vast-h200-1-od", "8 x H200, TP 8", 15_476)
    assert round(pick.speculation.monthly_usd_without) == 61_904
    assert pick.speculation.draft.startswith("the model's MTP module proposing 1 token a step at acceptance 0.85")
    assert "arXiv:2412.19437" in pick.speculation.draft
    assert pick.speculation.other_best.startswith("$53,023 a month on 8 x H200, TP 8 (modal-h200-serverless)")
    assert (plan.why[-1].label, plan.why[-1].value) == ("Speculative decoding", "on")
    off = recommend(_dsv3(spec_mtp="off"), h200).picks[0]
    assert off.speculation is None and (off.offer_id, round(off.monthly_usd)) == ("modal-h200-serverless", 53_023)
