"""Fine-tuning timed as it runs (perf/training_step.py): QLoRA's dequantisation of the 4-bit base per pass, by
library (data/training_qlora_dequantization.json), and the LoRA adapters' own matmuls per target set."""

import json

import pytest

from gpuplan_core import api
from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.model.arch import input_embedding_params, params_active
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.training_step import StepLayout, dequant_bytes_per_param, training_step
from gpuplan_core.plan.training import step_layout
from gpuplan_core.plan.training_layout import TrainingLayout

M, H100 = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM")


def _step(method: str, **inputs):
    sc, notes = to_scenario(
        {"workload": "finetune", "model": "Llama-3.1-8B", "gpu": "H100-SXM", "batch": 1, "method": method, **inputs}
    )
    assert not notes, notes
    return training_step(M, H100, step_layout(M, sc, None, TrainingLayout(1, 1, 1, 0, micro_batch=1)))


def test_the_dequantisation_figure_is_the_published_gap():
    data = json.loads((DATA_DIR / "training_qlora_dequantization.json").read_text())["libraries"]
    # Qwen README (A100 80GB, 2,039 GB/s; 8 micro-batches an iteration, 3 passes with checkpointing): the 7B gap
    # 1.38 s/it over 6.47e9 block linear parameters, the 14B gap 3.37 s/it over 12.6e9
    gap7 = ((3.0 - 1.2) + (3.0 - 1.5) + (3.5 - 2.8) + (7.0 - 5.2) + (11.6 - 10.1) + (22.3 - 21.3)) / 6 / 8
    gap14 = ((5.3 - 1.6) + (6.3 - 2.4) + (8.2 - 4.4) + (11.8 - 8.4) + (20.1 - 17.0) + (38.3 - 36.0)) / 6 / 8
    per7, per14 = (g / 3 * 2039e9 / n for g, n in ((gap7, 6.47e9), (gap14, 12.6e9)))
    assert (round(per7, 1), round(per14, 1)) == (18.2, 22.7)
    assert dequant_bytes_per_param("bitsandbytes") == data["bitsandbytes"]["bytes_per_param_per_pass"] == 20.4
    assert round((per7 + per14) / 2, 1) == 20.4
    assert dequant_bytes_per_param("peft") == dequant_bytes_per_param("torchao") == 20.4  # same kernels / no figure


def test_qlora_is_slower_than_lora_by_the_dequantisation_term():
    lora, qlora = _step("lora"), _step("qlora")
    # full checkpointing (the default): forward + recompute forward + backward = 3 passes over the base's linear
    # weights per micro-batch; one micro-batch a step (fine-tuning, one GPU)
    linear = params_active(M) - input_embedding_params(M)
    term = 3 * linear * 20.4 / (H100.bandwidth_gb_s * 1e9)
    assert qlora.step_s - lora.step_s == pytest.approx(term, rel=1e-9)
    assert qlora.dequant_s == pytest.approx(term, rel=1e-9) and lora.dequant_s == 0
    assert term == pytest.approx(3 * 7.50e9 * 20.4 / 3.35e12, rel=0.01)  # 7.5B linear (with the head): ~0.137 s
    assert "4-bit base dequantised" in qlora.parts() and "4-bit base dequantised" not in lora.parts()


def test_more_lora_targets_are_slower_and_the_frozen_base_has_no_weight_gradients():
    qv, attn, lin, head = (_step("lora", lora_targets=t) for t in ("qv", "attention", "all-linear", "all-linear+head"))
    assert qv.step_s < attn.step_s < lin.step_s < head.step_s
    base = training_step(
        M,
        H100,
        StepLayout(
            gpus=1, seq_len=4096, global_batch_tokens=4096, frozen_base=True, recompute="full", precision="bf16"
        ),
    )
    full = training_step(
        M, H100, StepLayout(gpus=1, seq_len=4096, global_batch_tokens=4096, recompute="full", precision="bf16")
    )
    # frozen base: forward 2 + recompute 2 + input gradients 2 = 6 N per token, against 8 N with weight gradients
    assert base.matmul_s / full.matmul_s == pytest.approx(6 / 8, rel=1e-9)
    assert qv.matmul_s > base.matmul_s  # the adapters' own matmuls (narrow: rank 16)


def test_the_plan_prices_qlora_above_lora():
    q = {"workload": "finetune", "model": "Llama-3.1-8B", "gpu": "H100-SXM", "batch": 1}
    lora, qlora = (api.plan_report(to_scenario({**q, "method": m})[0]).picks[0] for m in ("lora", "qlora"))
    assert qlora.mfu < lora.mfu and qlora.run_cost_usd > lora.run_cost_usd
