"""The why-chain multiplies out as printed (issue 21: "Cost of the run: 3 USD" under a $2.59 headline; "Wall time:
1.1 h (1 GPU-hours / 1 GPUs)").

Each arithmetic step is redone on the numbers exactly as the reader sees them: every term's text is parsed back
(a printed number stands for any value within half a unit of its last digit; a count, price, constant or input is
exact), the interval of the result is carried through the step's x and / (and its rounding to a billing increment,
and its minimum), and the printed result must lie in it within half a unit of its own last digit. A step must also
not print its result more precisely than its operands allow (each rounded operand to 3 significant figures or
better: the issue's "1 GPU-hours" had one). The chain's cost is the headline's, character for character.
"""

from __future__ import annotations

import math
import random
import re

import pytest

from gpuplan_core import api, load_pricing, plan_answer, read_link, to_scenario, usd
from gpuplan_core.common.text import exact, figure
from gpuplan_core.results.plan import Calc, Term, WhyStep, hours_into

OFFERS = load_pricing().offers
NUMBER = re.compile(r"^\$?(-?[\d,]*\.?\d+(?:e[+-]?\d+)?)")
ROUNDED_REL = 0.005  # 3 significant figures: half a unit of the last is at most 0.5% of the number


def read(text: str) -> tuple[float, float]:
    """The number a text starts with, and half a unit of its last printed digit."""
    m = NUMBER.match(text)
    assert m, f"no number at the start of {text!r}"
    s = m.group(1).replace(",", "")
    mantissa, _, exponent = s.partition("e")
    half = 0.5 * 10.0 ** -len(mantissa.partition(".")[2]) * 10.0 ** int(exponent or 0)
    return float(s), half


def shown(t: Term) -> tuple[float, float]:
    """(the number the reader sees, its half-width): zero for an exact number."""
    x, half = read(t.text)
    return x * t.scale, 0.0 if t.exact else half * t.scale


def check_term(t: Term) -> None:
    """The printed number is the engine's: itself where exact, else a rounding of it."""
    x, half = read(t.text)
    if t.exact:
        assert x * t.scale == pytest.approx(t.value, rel=1e-9), t
    else:
        assert abs(x * t.scale - t.value) <= half * t.scale * (1 + 1e-9) + 1e-12, t


def _round(x: float, step: float, up: bool) -> float:
    return (math.ceil(x / step - 1e-9) if up else math.floor(x / step + 1e-9)) * step


def check_calc(step: WhyStep) -> None:
    c = step.calc
    assert step.detail.startswith(c.text()), "the detail is printed from the terms"
    assert step.value.startswith(c.result.text), "the value is the result as printed"
    for t in [*c.terms, c.result, *([c.at_least] if c.at_least else [])]:
        check_term(t)
    lo = hi = mid = 1.0
    for t in c.terms:
        x, h = shown(t)
        assert x - h > 0, f"{step.label}: {t.text}"
        if t.op == "x":
            lo, hi, mid = lo * (x - h), hi * (x + h), mid * x
        else:
            lo, hi, mid = lo / (x + h), hi / (x - h), mid / x
    r, r_half = shown(c.result)
    rounded_terms = sum(not t.exact for t in c.terms)
    # the operands support the printed result: to its last digit, or to 3 significant figures per rounded operand
    assert (hi - lo) / 2 <= max(r_half, ROUNDED_REL * rounded_terms * mid) * (1 + 1e-6), (
        f"{step.label}: {step.value} is printed finer than {c.text()} allows"
    )
    if c.step is not None:
        lo, hi = _round(lo, c.step, c.rounding == "up"), _round(hi, c.step, c.rounding == "up")
    if c.at_least is not None:
        m, m_half = shown(c.at_least)
        lo, hi = max(lo, m - m_half), max(hi, m + m_half)
    slack = 1e-9 * max(abs(r), 1.0)
    assert lo - slack <= r + r_half and r - r_half <= hi + slack, (
        f"{step.label}: {c.text()} gives {lo:.6g}..{hi:.6g}, printed {step.value}"
    )


def check_chain(sc, ans) -> None:
    cost = [w for w in ans.why if w.label in ("Cost of the run", "Monthly cost")]
    assert len(cost) == 1, [w.label for w in ans.why]
    heads = {h.label: h.value for h in plan_answer(ans, sc).headlines}
    assert cost[0].value == heads["Cost of the run" if ans.cost_per == "run" else "Cost per month"]
    assert cost[0].value == usd(ans.cost_usd)
    assert cost[0].calc is not None
    before: list[Term] = []  # the results printed so far
    for w in ans.why:
        if w.calc is None:
            continue
        check_calc(w)
        for t in w.calc.terms:  # a number an earlier step printed is printed as that step printed it
            for r in before:
                if not t.exact and r.value == pytest.approx(t.value, rel=1e-12):
                    assert NUMBER.match(t.text).group(0) == NUMBER.match(r.text).group(0), (w.label, t.text, r.text)
        before.append(w.calc.result)


# ---- random scenarios ------------------------------------------------------------------------------------------

MODELS = ["Llama-3.1-8B", "Mistral-7B-v0.1", "Llama-3.1-70B", "Qwen2.5-72B"]


def _serving(rng: random.Random) -> dict:
    return {
        "workload": "interactive",
        "model": rng.choice(MODELS),
        "in": str(rng.choice([300, 2000, 8000])),
        "out": str(rng.choice([100, 300, 1000])),
        "rpd": str(rng.choice([800, 5000, 37_000, 250_000, 2_000_000])),
        "peak": str(rng.choice([1, 2.5, 3, 4])),
        "ttft_ms": str(rng.choice([1000, 2000, 5000])),
        "tpot_ms": str(rng.choice([50, 100, 200])),
        "weights": rng.choice(["bf16", "fp8"]),
        "gpu": rng.choice(["any", "any", "H100 SXM", "L40S", "A100 SXM 80GB"]),
        "hours": str(rng.choice([730, 500])),
        "billing": rng.choice(["any", "any", "on_demand", "serverless", "spot"]),
        "provider": rng.choice(["any", "any", "any", "aws"]),
    }


def _pretraining(rng: random.Random) -> dict:
    d = {
        "workload": "pretrain",
        "src": "size",
        "size_b": rng.choice(["1", "3", "7", "13"]),
        "tokens_b": str(rng.choice([1, 20, 200, 1000])),
        "gpu": rng.choice(["any", "H100 SXM", "A100 SXM 80GB"]),
        "overhead": str(rng.choice([0, 0.3, 0.15])),
    }
    if rng.random() < 0.4:
        d["gpus"] = str(rng.choice([8, 16, 64]))
    if rng.random() < 0.4:
        d["mfu"] = str(rng.choice([0.35, 0.4, 0.5]))
    if rng.random() < 0.3:
        d["billing"] = rng.choice(["on_demand", "spot"])
    return d


def _finetuning(rng: random.Random) -> dict:
    d = {
        "workload": "finetune",
        "model": rng.choice(MODELS[:3]),
        "method": rng.choice(["lora", "qlora", "full"]),
        "ft_tokens_m": str(rng.choice([1, 10, 100, 2000])),
        "gpu": rng.choice(["any", "any", "A100 SXM 80GB"]),
    }
    if rng.random() < 0.3:
        d["billing"] = rng.choice(["on_demand", "spot"])
    return d


def scenarios(n: int, seed: int = 21) -> list[dict]:
    rng = random.Random(seed)
    return [(_serving, _pretraining, _finetuning)[i % 3](rng) for i in range(n)]


@pytest.mark.parametrize("link", scenarios(45), ids=lambda d: "-".join(f"{k}={v}" for k, v in d.items())[:90])
def test_the_printed_steps_multiply_out_to_the_printed_total(link):
    values, problems = read_link(link)
    assert not problems, problems
    sc, _ = to_scenario(values)
    ans = api.answer_report(sc, offers=OFFERS)
    if ans.pick is None:
        pytest.skip(ans.message)
    check_chain(sc, ans)


# ---- hand-checked ------------------------------------------------------------------------------------------------


def _answer(link: dict):
    values, problems = read_link(link)
    assert not problems, problems
    sc, _ = to_scenario(values)
    return sc, api.answer_report(sc, offers=OFFERS)


def test_the_issues_steps_fail_the_check():
    """The checker can fail: the issue's wall time prints 1.1 h from "1 GPU-hours / 1 GPUs" (one significant
    figure), and a chain whose cost reads "3 USD" under a $2.59 headline."""
    wall = WhyStep.of(
        "Wall time",
        Calc(
            terms=[Term(text="1 GPU-hours", value=1.07), Term(text="1 GPUs", value=1, exact=True, op="/")],
            result=Term(text="1.1 h", value=1.07),
        ),
    )
    with pytest.raises(AssertionError, match="printed finer"):
        check_calc(wall)
    sc, ans = _answer({"workload": "finetune", "model": "Llama-3.1-8B"})
    cost = next(i for i, w in enumerate(ans.why) if w.label == "Cost of the run")
    bad = ans.model_copy(update={"why": [*ans.why[:cost], WhyStep(label="Cost of the run", value="3 USD")]})
    with pytest.raises(AssertionError):
        check_chain(sc, bad)
    check_chain(sc, ans)


def test_a_small_fine_tuning_run_states_its_cents():
    """The issue's small run: a LoRA fine-tune of Llama-3.1-8B on 100M tokens (the app's default link) costs a few
    dollars; each step, redone by hand on the printed numbers, gives the next, and the chain ends on the headline."""
    sc, ans = _answer({"workload": "finetune", "model": "Llama-3.1-8B"})
    steps = {w.label: w for w in ans.why}
    p = ans.pick
    o = next(o for o in OFFERS if o.offer_id == p.offer_id)
    assert o.interruptible and o.gpus_per_node == 1 and p.gpus == 1  # one spot GPU: runtime x 1.10 for restarts
    gh = float(steps["GPU-hours"].value)
    wall = float(steps["Wall time"].value.removesuffix(" h"))
    assert steps["Wall time"].detail == f"{figure(p.wall_hours, 4)} GPU-hours / 1 GPU"
    assert wall == gh / 1 and len(steps["Wall time"].value.removesuffix(" h").partition(".")[2]) == 3  # 1.xxx h
    billed = float(steps["Hours billed"].value.removesuffix(" h"))
    assert billed == pytest.approx(wall * 1.10, abs=0.0005 * 1.10 + 0.0005)  # wall x 1.1, whole seconds
    assert steps["Price per hour"].value == f"{exact(o.price_per_node_hour_usd)} USD/hour"
    # cost = price per hour x hours billed x (1 + 30% for failed runs and sweeps), to the cent
    assert steps["Cost of the run"].detail.startswith(
        f"{exact(o.price_per_node_hour_usd)} USD/hour x {steps['Hours billed'].value} x 1.3 for failed runs and sweeps"
    )
    by_hand = o.price_per_node_hour_usd * billed * 1.3
    assert steps["Cost of the run"].value == usd(ans.cost_usd) == f"${by_hand:,.2f}"
    assert ans.cost_usd < 100  # printed to the cent, as the headline prints it
    heads = {h.label: h.value for h in plan_answer(ans, sc).headlines}
    assert heads["Cost of the run"] == steps["Cost of the run"].value
    assert heads["Wall-clock time"] == f"{figure(p.wall_hours)} h"  # 1.22 h, not "1 h" beside a 1.222 h chain
    check_chain(sc, ans)


def test_a_pre_training_run_on_64_gpus_multiplies_out_to_the_dollar():
    """7B on 1T tokens on 64 H100 at the user's MFU 0.40 (tests/core/plan/test_training.py's case): 8 whole 8-GPU
    p5 nodes, spot. wall = 6 x (7e9 + 32 x 4,096 x 32 x 128) x 1e12 / (64 x 989 TFLOP/s x 0.40 x 3,600 s)."""
    link = {
        "workload": "pretrain",
        "src": "size",
        "size_b": "7",
        "tokens_b": "1000",
        "gpu": "H100 SXM",
        "gpus": "64",
        "mfu": "0.4",
        "batch": "1",
        "recompute": "none",
    }
    sc, ans = _answer(link)
    steps = {w.label: w for w in ans.why}
    assert ans.pick.offer_id == "aws-p5-48xl-use1-spot"
    flops = 6 * (7e9 + 32 * 4096 * (32 * 128)) * 1e12
    wall = flops / (64 * 989e12 * 0.40 * 3600)
    assert steps["Training compute"].value == f"{flops:.2e} FLOPs"
    assert steps["GPU-hours"].detail.startswith(f"{flops:.2e} FLOPs / 989 TFLOP/s / 0.4 MFU / 3,600 s per hour")
    assert steps["Wall time"].value == f"{wall:,.1f} h" == "496.1 h"
    assert steps["Price per hour"].detail.startswith("8 nodes of 8 GPUs x 17.6289 USD/node-hour")
    assert steps["Price per hour"].value == "141.0312 USD/hour"  # 8 x 17.6289, exactly
    # hours billed to the precision the cost needs: an hour costs 141.0312 x 1.3 = 183.34 USD, so 0.001 h = $0.18
    billed = steps["Hours billed"].value
    assert billed == f"{wall * 1.1:,.3f} h"
    by_hand = 141.0312 * float(billed.removesuffix(" h").replace(",", "")) * 1.3
    assert abs(by_hand - ans.cost_usd) <= 0.0005 * 183.34 + 1e-6
    assert steps["Cost of the run"].value == usd(ans.cost_usd) == f"${round(by_hand):,}"
    check_chain(sc, ans)


def test_serving_replicas_gpus_and_the_month():
    """Llama-3.1-70B at 50,000 requests a day, peak 3x: 50,000 / 86,400 x 3 = 1.74 req/s; replicas = ceil(peak /
    one replica's capacity); the month of an always-on offer = GPUs (whole nodes) x price x 730 h, exactly (the
    serverless offers, billed by worker-hours, left out: with measured kernel times a serverless B200 pool is the
    cheapest answer of all)."""
    values, problems = read_link({"model": "Llama-3.1-70B", "rpd": "50000", "in": "8000"})
    assert not problems, problems
    sc, _ = to_scenario(values)
    always_on = [o for o in OFFERS if not o.billing_model.startswith("serverless")]
    ans = api.answer_report(sc, offers=always_on)
    steps = {w.label: w for w in ans.why}
    assert steps["Peak requests per second"].value == "1.74"
    assert steps["Peak requests per second"].detail == "50,000 / 86,400 s x 3 peak-to-average"
    cap = float(steps["One replica's capacity"].value.split()[0])
    assert steps["Replicas"].value == str(math.ceil(1.74 / cap)) == str(ans.pick.replicas)
    o = next(o for o in OFFERS if o.offer_id == ans.pick.offer_id)
    assert ans.cost_usd == pytest.approx(math.ceil(ans.pick.gpus / o.gpus_per_node) * o.price_per_node_hour_usd * 730)
    assert steps["Monthly cost"].value == usd(ans.cost_usd)
    check_chain(sc, ans)


def test_hours_print_to_the_precision_their_cost_needs():
    """4 significant figures, and more decimals where the cost prints finer: 0.5 x 10^-d x USD an hour <= half a
    unit of the cost's last digit (a cent under $100, else a dollar)."""
    assert hours_into(2694.0, 1.712 * 1.3, 6596.0).text == "2,694.0 h"  # 0.05 h x 2.23 USD = $0.11 <= $0.50
    assert hours_into(1.2222, 2.2256, 2.72).text == "1.222 h"  # 0.0005 h x 2.23 USD = $0.001 <= half a cent
    assert hours_into(1.2222, 22.256, 27.2).text == "1.2222 h"  # 0.0005 h x 22.3 USD = $0.011: one more decimal
    assert hours_into(496.1, 183.34, 100_000).text == "496.100 h"


def test_numbers_print_exactly_or_to_three_figures():
    assert [figure(x) for x in (0.0123456, 1.074, 10.74, 107.4, 1074.4, 3.4321e17)] == [
        "0.0123",
        "1.07",
        "10.7",
        "107",
        "1,074",
        "3.43e+17",
    ]
    assert [exact(x) for x in (3, 0.4, 17.6289, 86_400, 2e11, 1.3000000000000003)] == [
        "3",
        "0.4",
        "17.6289",
        "86,400",
        "2e+11",
        "1.3",
    ]
    assert exact(1 / 3) is None


def _on(offer_id: str, **changes):
    """One catalog offer with its billing rules changed, as the only offer."""
    o = next(o for o in OFFERS if o.offer_id == offer_id)
    return [o.model_copy(update={"offer_id": "test-offer", **changes})]


@pytest.mark.parametrize("minimum_h, billed_h", [(None, 4), (5, 5)])
def test_hourly_billing_and_a_minimum_round_the_hours_in_the_chain(minimum_h, billed_h):
    """An offer billed in whole hours (and at least ``minimum_h``): the 3.4-hour fine-tune on one H100 bills 4 h, or
    the 5-hour minimum; the chain says so (rounded up to whole hours, at least 5 h), so that price x hours billed x
    1.3 is the printed cost (full recompute set: the 3.4-hour run)."""
    values, _ = read_link({"workload": "finetune", "model": "Llama-3.1-8B", "gpu": "H100 SXM", "recompute": "full"})
    sc, _ = to_scenario(values)
    offers = _on(
        "verda-1h100-spot",
        interruptible=False,
        billing_model="on_demand",
        billing_increment_s=3600,
        min_billed_s=None if minimum_h is None else minimum_h * 3600,
    )
    ans = api.answer_report(sc, offers=offers)
    steps = {w.label: w for w in ans.why}
    wall = ans.pick.wall_hours
    assert 3 < wall < 4
    assert steps["Hours billed"].value == f"{billed_h}.000 h"
    least = "" if minimum_h is None else f", at least {minimum_h}.000 h"
    assert steps["Hours billed"].detail == f"{figure(wall, 4)} h, rounded up to whole hours{least}"
    price = offers[0].price_per_node_hour_usd
    assert ans.cost_usd == pytest.approx(price * billed_h * 1.3)
    assert steps["Cost of the run"].detail.startswith(f"{exact(price)} USD/hour x {billed_h}.000 h x 1.3")
    check_chain(sc, ans)


def test_a_reservation_longer_than_the_run_is_paid_in_full():
    """A 1-month reservation for a 1-hour run: the cost is the month (price x 1 month x 730 h x 1.3), not the hour."""
    values, _ = read_link({"workload": "finetune", "model": "Llama-3.1-8B", "gpu": "H100 SXM"})
    sc, _ = to_scenario(values)
    offers = _on("verda-1h100-spot", interruptible=False, billing_model="reserved", commitment_months=1)
    ans = api.answer_report(sc, offers=offers)
    cost = next(w for w in ans.why if w.label == "Cost of the run")
    price = offers[0].price_per_node_hour_usd
    assert ans.cost_usd == pytest.approx(price * 1 * 730 * 1.3)
    assert cost.detail.startswith(f"{exact(price)} USD/hour x 1 month x 730 h a month x 1.3")
    check_chain(sc, ans)
