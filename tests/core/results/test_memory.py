"""The memory results (results/memory.py): the GPU type holding the job on the fewest GPUs, a GPU's row, the
model states' scope."""

from __future__ import annotations

import pytest

from gpuplan_core.common.units import GB


def test_fewest_gpus_then_the_most_room(gpu_fit, memory_report, summary):
    """L4 holds nothing; A100 and H100 need 2, H200 and B200 one each: of those two, B200 has more room per GPU."""
    rows = [gpu_fit("L4", None, 20), gpu_fit("A100", 2, 70), gpu_fit("H100", 2, 71)]
    rows += [gpu_fit("H200", 1, 126), gpu_fit("B200", 1, 160)]
    r = memory_report(rows, mode="training", budgets={"model states": 16 * summary.params_total})
    assert r.fewest.gpu == "B200"
    assert r.gpu_fit("H200").budget_bytes == 126 * GB
    with pytest.raises(StopIteration):
        r.gpu_fit("MI300X")
    # mixed-precision Adam, ZeRO paper accounting: 16 bytes per parameter
    assert r.model_states_bytes == 16 * 8_030_261_248 == 128_484_179_968


def test_none_hold_it_and_inference_has_no_model_states(gpu_fit, memory_report, summary):
    r = memory_report([gpu_fit("L4", None, 20)], budgets={"weights only": 2 * summary.params_total})
    assert r.fewest is None
    assert r.model_states_bytes is None
