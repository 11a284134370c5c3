"""The one answer: its pick meets every target set, memory per GPU is the budget at the pick's layout, and every
alternative is checked against the same targets and labelled with how it differs."""

import pytest

from gpuplan_core import api, load_pricing, to_scenario
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.request import memory_request

OFFERS = load_pricing().offers


@pytest.fixture(scope="module")
def rag70b():
    """The issue's link /Cost?model=Llama-3.1-70B&rpd=50000&in=8000 (targets: p95 TTFT 2 s, mean TPOT 100 ms)."""
    sc, notes = to_scenario({"model": "Llama-3.1-70B", "rpd": 50000.0, "in": 8000.0})
    assert not notes
    return sc, api.answer_report(sc, offers=OFFERS)


def test_the_pick_meets_every_target_the_scenario_sets(rag70b):
    sc, ans = rag70b
    assert [c.name for c in ans.checks] == ["ttft", "tpot"]
    assert (ans.checks[0].target, ans.checks[1].target) == (2.0, 0.1)
    assert all(c.met for c in ans.checks)
    assert ans.pick.ttft_s <= 2.0 and ans.pick.tpot_s <= 0.1
    assert ans.cost_usd == ans.pick.monthly_usd == ans.plan.picks[0].monthly_usd


def test_the_cheapest_always_on_alternative_meets_the_targets_too(rag70b):
    """Today's bug: 2 x RTX PRO 6000 at $2,467 was headlined though its first token is ~2.5 s. The alternative is
    the cheapest always-on offer among those that meet both targets, computed here from the cost table by hand."""
    sc, ans = rag70b
    alt = next(o for o in ans.alternatives if o.role == "cheapest always-on")
    rows = api.cost_report(sc, offers=OFFERS).offers
    meeting = [r for r in rows if r.ttft_s <= 2.0 and r.tpot_s <= 0.1]
    assert alt.pick.monthly_usd == min(r.monthly_always_on_usd for r in meeting)
    assert alt.meets_targets
    cheapest_of_all = min(rows, key=lambda r: r.monthly_always_on_usd)
    assert cheapest_of_all.ttft_s > 2.0  # the option today's page headlined misses the target
    assert alt.pick.offer_id != cheapest_of_all.offer_id


def test_memory_per_gpu_is_the_budget_at_the_picks_layout():
    """/?model=Llama-3.1-70B: the pick spreads the model over tp x pp GPUs; the headline is that layout's budget per
    GPU, not the one-GPU need (150.6 GB for 70B BF16 at batch 1 on one GPU)."""
    sc, _ = to_scenario({"model": "Llama-3.1-70B"})
    ans = api.answer_report(sc, offers=OFFERS)
    p = ans.pick
    req = memory_request(sc, weights_format=p.weights_format, tp=p.tp, pp=p.pp, gpus=p.tp * p.pp)
    assert ans.memory_per_gpu_bytes == round(memory_budget(sc.model(), req).per_gpu_bytes)
    one_gpu = api.memory_report(sc).per_gpu_bytes
    assert p.tp * p.pp > 1 and ans.memory_per_gpu_bytes < one_gpu


def test_an_alternative_that_misses_a_target_says_by_how_much():
    """A 50 ms first-token target no 70B layout meets with 8,000-token prompts: nothing is recommended, and the
    cheapest always-on option is shown with what it misses: value - target, in words."""
    sc, _ = to_scenario({"model": "Llama-3.1-70B", "in": 8000.0, "ttft_ms": 50.0, "rpd": 0.0})
    ans = api.answer_report(sc, offers=OFFERS)
    assert ans.pick is None and ans.message
    alt = next(o for o in ans.alternatives if o.role == "cheapest always-on")
    ttft = next(c for c in alt.checks if c.name == "ttft")
    assert not ttft.met and not alt.meets_targets
    over_ms = (alt.pick.ttft_s - 0.05) * 1e3
    assert alt.differs.startswith("misses the 50 ms first-token target by ")
    shown = alt.differs.removeprefix("misses the 50 ms first-token target by ").split(";")[0]
    expected = f"{over_ms / 1e3:.2f}".rstrip("0").rstrip(".") + " s" if over_ms >= 1000 else f"{over_ms:,.0f} ms"
    assert shown == expected


def test_plan_json_is_the_answer():
    """``plan --json`` carries the plan's keys as before and the answer beside them, equal to api.answer_report."""
    from gpuplan_core.interface.cli import main

    sc, _ = to_scenario({"model": "Llama-3.1-70B", "rpd": 50000.0, "in": 8000.0})
    ans = api.answer_report(sc, offers=OFFERS)
    d = ans.to_json()
    assert d["picks"][0]["offer_id"] == d["answer"]["pick"]["offer_id"] == ans.pick.offer_id
    assert d["answer"]["memory_per_gpu_bytes"] == ans.memory_per_gpu_bytes
    assert [c["met"] for c in d["answer"]["checks"]] == [True, True]
    assert callable(main)


def test_cost_json_carries_the_answer_block_and_the_cheapest_regardless_of_targets(capsys):
    """``cost --json`` for the issue's question (Llama-3.1-70B, 50,000 requests a day, 8,000 input tokens): its
    answer block is api.answer_report's (the 9,060 USD answer, serverless B200 workers, that meets the 2 s target:
    with measured kernel times 2 x B200 at TP 2 misses it), and
    ``cheapest_monthly_usd`` stays the least monthly always-on of any row (2,467 USD, which misses the target)."""
    import json

    from gpuplan_core.interface.cli import main

    argv = ["cost", "--preset", "Llama-3.1-70B", "--requests-per-day", "50000", "--input-tokens", "8000", "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    sc, _ = to_scenario({"model": "Llama-3.1-70B", "rpd": 50000.0, "in": 8000.0})
    ans = api.answer_report(sc)
    assert printed["answer"] == json.loads(json.dumps(ans.answer_json()))
    assert printed["answer"]["cost_usd"] == pytest.approx(9059.9, abs=0.05)
    assert printed["answer"]["pick"]["gpu"] == "B200" and all(c["met"] for c in printed["answer"]["checks"])
    rows = printed["offers"]
    assert printed["cheapest_monthly_usd"] == min(r["monthly_always_on_usd"] for r in rows)
    assert printed["cheapest_monthly_usd"] == pytest.approx(2467.4, abs=0.05)
    cheapest = min(rows, key=lambda r: r["monthly_always_on_usd"])
    assert not cheapest["meets_target"]  # regardless of targets: the answer is not the cheapest row


@pytest.mark.parametrize(
    "link",
    [
        {"workload": "finetune", "model": "Llama-3.1-8B"},  # a $2.59 run: the chain said "3 USD"
        {"workload": "pretrain", "src": "size", "size_b": "7B", "tokens_b": "200"},
        {"model": "Llama-3.1-70B", "rpd": "50000.0", "in": "8000.0"},
    ],
)
def test_the_why_chain_states_the_cost_the_headline_states(link):
    """The chain's last step is the answer's cost, written as the headline writes it; training's wall time is the
    GPU-hours over the GPUs as printed (to the three figures shown)."""
    from gpuplan_core import read_link, usd

    values, _ = read_link(link)
    sc, _ = to_scenario(values)
    ans = api.answer_report(sc, offers=OFFERS)
    steps = {w.label: w for w in ans.why}
    cost = steps.get("Cost of the run") or steps.get("Monthly cost")
    assert cost.value == usd(ans.cost_usd)
    if "Wall time" in steps:
        hours = float(steps["GPU-hours"].value.replace(",", ""))
        wall = float(steps["Wall time"].value.removesuffix(" h").replace(",", ""))
        assert wall == pytest.approx(hours / ans.pick.gpus, rel=0.01)
