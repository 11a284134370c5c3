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
