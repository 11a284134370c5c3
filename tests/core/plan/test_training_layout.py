"""Training layouts (plan/training_layout.py): the stages, recomputes and micro-batches tried, the fewest data-parallel
ranks at which a shape fits (per GPU = sharded / dp + unsharded), which counts a shape holds, and what an offer
allows (machines, network, tensor parallel inside one machine)."""

import math

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.fit import budget_bytes
from gpuplan_core.memory.request import memory_request
from gpuplan_core.plan.training_ask import TrainingAsk
from gpuplan_core.plan.training_layout import (
    RECOMPUTES,
    ShapeGrid,
    TrainingShape,
    _dp_min,
    cannot_run,
    held_at,
    machines_of,
    micro_batches,
    nearest_count,
    network_text,
    recomputes,
    zero_stages,
)
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

OFFERS = {o.offer_id: o for o in load_pricing().offers}
P5 = OFFERS["aws-p5-48xl-use1-spot"]  # 8 x H100 SXM per machine, EFA at 3,200 Gbit/s
LAMBDA = OFFERS["lambda-8x-h100-sxm-od"]  # 8 x H100 SXM, no stated network between machines
H100 = get_gpu("H100-SXM")


def _ask(**kw) -> TrainingAsk:
    return TrainingAsk.of(Scenario(mode="training", params=7e9, training_tokens=1e12, **kw))


def test_machines_are_the_count_over_the_offers_gpus_per_machine_rounded_up():
    assert [machines_of(P5, n) for n in (1, 8, 9, 64, 65)] == [1, 1, 2, 8, 9]  # ceil(n / 8)


def test_the_network_in_words():
    assert network_text(P5) == "EFA at 3,200 Gbit/s"
    assert network_text(LAMBDA) == "no stated network"


def test_the_stages_recomputes_and_micro_batches_tried():
    assert zero_stages(_ask()) == [0, 1, 2, 3]  # searched by default
    assert zero_stages(_ask(zero_stage=2)) == [2, 3]  # a stage set, and those above it
    assert recomputes(_ask(recompute_auto=True)) == list(RECOMPUTES) == ["none", "selective", "full"]
    assert recomputes(_ask(recompute="selective", recompute_auto=False)) == ["selective"]
    assert micro_batches(_ask(batch=8)) == [8, 4, 2, 1]  # the one given, then each half of it down to 1
    assert micro_batches(_ask(batch=5)) == [5, 2, 1]


def test_the_fewest_data_parallel_ranks_by_hand():
    """per GPU = sharded / dp + unsharded: 100 GB sharded, 20 GB not, 50 GB free: dp = ceil(100 / 30) = 4
    (100 / 4 + 20 = 45 fits, 100 / 3 + 20 = 53.3 does not)."""
    assert _dp_min(100.0, 20.0, 50.0) == 4 == math.ceil(100 / 30)
    assert _dp_min(0.0, 20.0, 50.0) == 1  # nothing sharded: fits at one rank or never
    assert _dp_min(0.0, 60.0, 50.0) is None
    assert _dp_min(100.0, 50.0, 50.0) is None  # the unsharded part alone fills the GPU


def test_a_shape_holds_the_multiples_of_its_copy_from_its_fewest_gpus():
    s = TrainingShape(zero_stage=1, tp=2, pp=2, dp_min=3)
    assert (s.per_copy, s.fewest_gpus) == (4, 12)
    assert [n for n in range(1, 25) if s.holds(n)] == [12, 16, 20, 24]
    lay = s.layout(16, "why")
    assert (lay.tp, lay.pp, lay.gpus, lay.zero_stage, lay.reason) == (2, 2, 16, 1, "why")


def test_each_shapes_fewest_ranks_is_where_the_memory_budget_first_fits():
    """The grid's dp_min against the memory engine itself: the budget at dp_min ranks fits the GPU, at one fewer it
    does not (Llama-3.1-8B, ZeRO-3, micro-batch 1, H100)."""
    ask = TrainingAsk.of(Scenario(mode="training", preset="Llama-3.1-8B", batch=1, zero_stage=3))
    m = Scenario(preset="Llama-3.1-8B").model()
    shapes = [s for s in ShapeGrid(m, ask).shapes(H100) if (s.tp, s.pp) == (1, 1)]
    assert shapes, "ZeRO-3 on H100s holds an 8B model at some data parallel"
    s = shapes[0]
    req = memory_request(ask.with_(zero_stage=3, recompute=s.recompute), batch=s.micro_batch)
    cap = budget_bytes(H100, req.runtime)

    def per_gpu(dp: int) -> float:
        return memory_budget(m, req.model_copy(update={"gpus": dp, "tp": 1, "pp": 1})).per_gpu_bytes

    assert per_gpu(s.dp_min) <= cap * (1 + 1e-9)
    if s.dp_min > 1:
        assert per_gpu(s.dp_min - 1) > cap


def test_an_offer_without_a_fast_network_runs_one_machine_only():
    shapes = [TrainingShape(zero_stage=0, tp=1, pp=1, dp_min=1)]
    ask = _ask()
    why = cannot_run(shapes, 16, LAMBDA, H100, ask)
    assert why is not None and "16 GPUs take 2 machines of 8 here" in why and "no stated network" in why
    assert cannot_run(shapes, 16, P5, H100, ask) is None
    assert nearest_count(shapes, 16, LAMBDA, ask)[0] == 8  # the most one machine holds


def test_tensor_parallel_stays_inside_one_machine():
    shapes = [TrainingShape(zero_stage=0, tp=16, pp=1, dp_min=1)]
    why = cannot_run(shapes, 16, P5, H100, _ask())
    assert why == "16 x H100 SXM hold the job only at tensor parallel 16: " + P5.layout_problem(16, 1)


def test_the_nearest_count_is_the_larger_on_a_tie():
    """TP 2 with at least 2 ranks holds 4, 6, 8, ...: 7 GPUs asked, 6 and 8 are as near, 8 is taken."""
    shapes = [TrainingShape(zero_stage=0, tp=2, pp=1, dp_min=2)]
    n, held = nearest_count(shapes, 7, P5, _ask())
    assert n == 8 and held == shapes
    assert nearest_count(shapes, 3, P5, _ask())[0] == 4  # below the fewest: the fewest


def test_a_stage_set_keeps_the_lowest_stage_that_holds_the_count():
    shapes = [TrainingShape(1, 1, 1, 1), TrainingShape(3, 1, 1, 1)]
    assert held_at(shapes, 8, P5, _ask(zero_stage=1)) == shapes[:1]
    assert held_at(shapes, 8, P5, _ask()) == shapes  # searched: every stage
    assert held_at(shapes, 8, P5, _ask(zero_stage=1))[0].zero_stage == 1


@pytest.mark.parametrize("tp, pp", [(2, 1), (1, 2)])
def test_the_users_own_tp_x_pp_alone_where_they_set_one(tp, pp):
    shapes = [TrainingShape(0, 1, 1, 1), TrainingShape(0, tp, pp, 1)]
    assert held_at(shapes, 8, P5, _ask(gpus=8, tp=tp, pp=pp)) == shapes[1:]
