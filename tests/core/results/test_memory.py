"""The memory results (results/memory.py): the GPU type holding the job on the fewest GPUs, a GPU's row, the
model states' scope."""

from __future__ import annotations

import pytest

from gpuplan_core.common.units import GiB
from gpuplan_core.results.memory import GpuFit, Layout, MemoryReport


def _fit(gpu: str, min_gpus: int | None, budget_gib: float) -> GpuFit:
    return GpuFit(
        gpu=gpu,
        label=gpu,
        selected=False,
        vram_nominal_bytes=int(budget_gib / 0.9 * GiB),
        vram_usable_bytes=int(budget_gib / 0.9 * GiB),
        budget_bytes=int(budget_gib * GiB),
        fits=min_gpus == 1,
        min_gpus=min_gpus,
        min_layout=None if min_gpus is None else Layout(gpus=min_gpus, tp=min_gpus, pp=1, dp=1),
        max_batch=0,
        max_context=0,
        kv_capacity_tokens=None,
    )


def _report(summary, gpus: list[GpuFit], budgets: dict[str, int]) -> MemoryReport:
    return MemoryReport(
        **summary.model_dump(),
        mode="training",
        method="full",
        weights_format="bf16",
        kv_format="bf16",
        engine="vllm",
        context_tokens=4096,
        batch=1,
        layout=Layout(gpus=1, tp=1, pp=1, dp=1),
        scope="whole runtime",
        weights_bytes_total=2 * summary.params_total,
        components={},
        provenance={},
        offload="none",
        offloaded={},
        host_bytes_per_node=0,
        budgets=budgets,
        per_gpu_bytes=0,
        total_bytes=0,
        memory_utilization=0.9,
        notes=[],
        gpus=gpus,
    )


def test_fewest_gpus_then_the_most_room(summary):
    """L4 holds nothing; A100 and H100 need 2, H200 and B200 one each: of those two, B200 has more room per GPU."""
    rows = [_fit("L4", None, 20), _fit("A100", 2, 70), _fit("H100", 2, 71), _fit("H200", 1, 126), _fit("B200", 1, 160)]
    r = _report(summary, rows, {"model states": 16 * summary.params_total})
    assert r.fewest.gpu == "B200"
    assert r.gpu_fit("H200").budget_bytes == int(126 * GiB)
    with pytest.raises(StopIteration):
        r.gpu_fit("MI300X")
    # mixed-precision Adam, ZeRO paper accounting: 16 bytes per parameter
    assert r.model_states_bytes == 16 * 8_030_261_248 == 128_484_179_968


def test_none_hold_it_and_inference_has_no_model_states(summary):
    r = _report(summary, [_fit("L4", None, 20)], {"weights only": 2 * summary.params_total})
    assert r.fewest is None
    assert r.model_states_bytes is None
