"""The training budget's activations: full recompute keeps each layer's input, split over tensor parallelism."""

import pytest

from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.request import memory_request
from gpuplan_core.scenario.scenario import Scenario


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_full_recompute_keeps_the_layer_input_divided_by_tensor_parallel(tp):
    """Llama-3.1-70B, 4,096-token sequences, micro-batch 1, BF16 activations: each of 80 layers keeps its input,
    2 x s x b x h bytes = 2 x 4,096 x 1 x 8,192 = 67,108,864 B, which sequence parallelism splits over the TP ranks
    (it was not divided: +141% for 70B at TP 8)."""
    sc = Scenario(
        preset="Llama-3.1-70B", mode="training", recompute="full", tp=tp, gpus=tp, batch=1, sequence_tokens=4096
    )
    budget = memory_budget(sc.model(), memory_request(sc))
    assert budget.components["activations"] == pytest.approx(80 * 2 * 4096 * 1 * 8192 / tp)


def test_interleaved_1f1b_holds_1_plus_pp_minus_1_over_pp_v_times_the_activations():
    """Korthikanti et al. 2022, section 4.2.3: the first stage of an interleaved schedule holds activations of
    L (1 + (pp - 1) / (pp v)) layers against 1F1B's L: PP 4, v 2 -> 1 + 3 / 8 = 1.375."""
    kw = dict(preset="Llama-3.1-70B", mode="training", recompute="full", pp=4, gpus=4, batch=1, sequence_tokens=4096)
    one, two = (memory_budget(Scenario(**kw).model(), memory_request(Scenario(**kw, virtual_stages=v))) for v in (1, 2))
    assert one.components["activations"] == pytest.approx(80 * 2 * 4096 * 8192)  # 1F1B: L layers' inputs
    assert two.components["activations"] == pytest.approx(80 * 2 * 4096 * 8192 * (1 + 3 / 8))
    assert two.components["recompute working set"] == one.components["recompute working set"]


def test_expert_parallel_8_holds_one_eighth_of_mixtrals_expert_states_at_zero_0():
    """Mixtral-8x7B, mixed precision (16 B / param): 1,605,636,096 dense + 45,097,156,608 routed parameters; EP 8
    holds 1,605,636,096 + 45,097,156,608 / 8 = 7,242,780,672 of them: weights 2 B each, 14.49 GB against 93.41."""
    kw = dict(preset="Mixtral-8x7B-v0.1", mode="training", zero_stage=0, gpus=8, batch=1, recompute="full")
    one, ep8 = (memory_budget(Scenario(**kw).model(), memory_request(Scenario(**kw, ep=e))) for e in (1, 8))
    held = 1_605_636_096 + 45_097_156_608 // 8
    assert one.components["weights"] == pytest.approx(2.0 * 46_702_792_704)
    assert ep8.components["weights"] == pytest.approx(2.0 * held)
    assert ep8.components["optimizer states"] == pytest.approx(8.0 * held)
    assert ep8.components["activations"] == one.components["activations"]
    # ZeRO-1 shards the optimizer states over the data-parallel ranks either way: experts / (ep x dp / ep)
    z1 = {}
    for e in (1, 8):
        sc = Scenario(**{**kw, "zero_stage": 1}, ep=e)
        z1[e] = memory_budget(sc.model(), memory_request(sc))
    assert z1[8].components["optimizer states"] == pytest.approx(z1[1].components["optimizer states"])
    assert z1[1].components["optimizer states"] == pytest.approx(8.0 * 46_702_792_704 / 8)
