"""What the training search tried and why its pick won (plan/training_tried.py): how the best candidate is chosen
(the cheapest that meets the deadline, then the default deadline; of equal costs, the first in order, or the
sooner done where all are late), the line
comparing each other stage with the pick, and the cheaper run beside a stage the user fixed."""

import pytest

from gpuplan_core.plan.training_ask import TrainingAsk
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.plan.training_tried import _why_over, best, cheaper_beside, search_step
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

OFFERS = {o.offer_id: o for o in load_pricing().offers}
P5 = OFFERS["aws-p5-48xl-use1-spot"]
SC = Scenario(mode="training", params=7e9, training_tokens=1e12, gpu="H100-SXM", gpus=64)


@pytest.fixture(scope="module")
def cands():
    out, _, _ = training_candidates(SC.model(), SC, [P5])
    return out


def _c(c, cost, wall=100.0, misses=()):
    return c.model_copy(update={"run_cost_usd": cost, "wall_hours": wall, "misses": list(misses)})


def test_best_is_the_cheapest_that_meets_the_deadline(cands):
    c = cands[0]
    a, b, late = _c(c, 200.0), _c(c, 100.0, misses=["late"]), _c(c, 150.0)
    assert best([a, b, late]) is late  # the 100 USD run misses the deadline
    assert best([a, _c(c, 200.0)]) is a  # a tie: the first in order
    x, y = _c(c, 100.0, 900.0, ["late"]), _c(c, 100.0, 500.0, ["late"])
    assert best([x, y]) is y  # all late, as cheap: the sooner done
    assert best([x, _c(c, 300.0, 400.0, ["late"])]) is x  # all late: still the cheapest first
    slow, quick = _c(c, 100.0, 800.0), _c(c, 120.0, 700.0)
    assert best([slow, quick], aim=720.0) is quick  # within the default deadline first
    assert best([slow, quick]) is slow


def test_the_line_over_another_stage_names_what_it_spends_more_on(cands):
    pick = cands[0]
    other = _c(pick, pick.run_cost_usd * 1.25).model_copy(update={"zero_stage": 0, "mfu": 0.26})
    line = _why_over(pick, other)
    saving = 1 - pick.run_cost_usd / other.run_cost_usd  # 1 - 1 / 1.25 = 20%
    assert line.startswith(f"ZeRO-{pick.zero_stage} over ZeRO-0 (DP 64, micro-batch {other.micro_batch}): ")
    assert line.endswith(f"MFU {pick.mfu:.2f} vs 0.26, {saving:.0%} cheaper") and f"{saving:.0%}" == "20%"
    late = other.model_copy(update={"misses": ["900 h > deadline 500 h"]})
    assert _why_over(pick, late).endswith(": it misses the deadline (900 h > deadline 500 h)")


def test_the_cheaper_run_beside_a_stage_set(cands):
    pick = cands[0]
    fixed = TrainingAsk.of(SC.with_(zero_stage=0, zero_auto=False))
    alt = _c(pick, pick.run_cost_usd * 0.8).model_copy(update={"zero_stage": 3})
    kept = _c(pick, pick.run_cost_usd).model_copy(update={"zero_stage": 0})
    line = cheaper_beside(kept, alt, fixed)
    assert line.startswith("ZeRO-3 would be 20% cheaper: ZeRO-3, DP 64, micro-batch ")  # 1 - 0.8
    assert line.endswith("ZeRO-0 is kept as set")
    assert cheaper_beside(kept, alt, TrainingAsk.of(SC)) is None  # nothing fixed: the search chose it anyway


def test_the_search_step_is_what_was_tried(cands):
    pick = cands[0]
    step = search_step(pick)
    assert step is not None and step.label == "Layout searched" and step.value == pick.label
    assert step.detail == "; ".join(pick.tried) and pick.tried
    assert search_step(pick.model_copy(update={"tried": []})) is None
