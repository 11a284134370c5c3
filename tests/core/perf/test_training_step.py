"""The training step model (perf/training_step.py): its parts by hand, MFU as an output that the user can still
override, and its held-out error on published runs (perf/training_calibration.py) within what README states."""

import json

import pytest

from gpuplan_core import api
from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.training_calibration import error_summary, held_out, run_errors
from gpuplan_core.perf.training_step import (
    StepLayout,
    TrainingEfficiency,
    fitted_efficiency,
    model_flops_per_token,
    training_step,
)

M = get_preset("Llama-3.1-8B")
H100 = get_gpu("H100-SXM")
PEAK = 989e12


def test_one_gpu_step_by_hand():
    """One H100, no parallelism, micro-batch 1 of 4,096 tokens, 8 micro-batches, no recompute, constants fixed:
    matmuls = (2 forward + 4 backward) x (N - input embedding) x tokens / (peak x GEMM efficiency)."""
    eff = TrainingEfficiency(
        gemm_max=0.6,
        gemm_half_width=400,
        attention_efficiency=0.3,
        elementwise_bytes_per_token_layer=100,
        layer_overhead_s=1e-4,
    )
    lay = StepLayout(gpus=1, micro_batch=1, seq_len=4096, global_batch_tokens=8 * 4096)
    st = training_step(M, H100, lay, eff)
    n = 8_030_261_248 - 128_256 * 4096  # the input embedding is a lookup, not a matmul
    gemm = 0.6 * 4096 / (4096 + 400)
    assert st.matmul_s == pytest.approx(8 * 6 * n * 4096 / (PEAK * gemm))
    attn = 2 * 32 * 4096 * 4096 * 4096  # causal: 2 x layers x s x (heads x head_dim) per token, forward
    assert st.attention_s == pytest.approx(8 * attn * (1 + 2.5) / (PEAK * 0.3))
    assert st.elementwise_s == pytest.approx(8 * 100 * 2 * 4096 * 32 * 4096 / 3.35e12)
    assert st.layer_overhead_s == pytest.approx(8 * 32 * 1e-4)
    assert st.bubble_s == st.data_parallel_exposed_s == st.tensor_parallel_s == 0
    assert st.optimizer_s == pytest.approx(2 * 16 * 8_030_261_248 / 3.35e12)  # mixed: 16 B/param read and written
    # MFU = 6 N D + attention (no recompute) / (step x GPUs x peak)
    assert st.mfu == pytest.approx(model_flops_per_token(M, 4096) * 8 * 4096 / (st.step_s * PEAK))
    assert st.tokens_per_s_per_gpu == pytest.approx(8 * 4096 / st.step_s)


def test_recompute_pipeline_and_data_parallel_parts():
    eff = fitted_efficiency()
    base = StepLayout(gpus=8, micro_batch=1, seq_len=4096, global_batch_tokens=64 * 4096)
    none = training_step(M, H100, base, eff)
    full = training_step(M, H100, StepLayout(**{**base.__dict__, "recompute": "full"}), eff)
    assert full.matmul_s == pytest.approx(none.matmul_s * 8 / 6)  # one more forward: 8 units of N, not 6
    assert full.mfu < none.mfu
    pp = training_step(M, H100, StepLayout(**{**base.__dict__, "pp": 4}), eff)
    # 4 stages, 2 data-parallel ranks: 64 x 4,096 tokens / (2 x 4,096) = 32 micro-batches; bubble (4 - 1) / 32
    compute = pp.step_s - pp.bubble_s - pp.data_parallel_exposed_s - pp.optimizer_s - pp.pipeline_sends_s
    assert pp.bubble_s == pytest.approx(compute * 3 / 32)


def test_mfu_is_predicted_unless_the_user_sets_it():
    q = {"mode": "training", "preset": "Llama-3.1-8B", "gpu": "H100-SXM", "gpus": 8, "training_tokens": 1e11}
    predicted = api.plan_report(q).picks[0]
    assert predicted.mfu_predicted and predicted.mfu_low < predicted.mfu < predicted.mfu_high
    assert 0.2 < predicted.mfu < 0.7
    given = api.plan_report({**q, "mfu": 0.33}).picks[0]
    assert given.mfu == 0.33 and not given.mfu_predicted and given.mfu_low is None
    # GPU-hours = FLOPs / (peak x MFU): the same rule either way
    plan = api.plan_report(q)
    assert predicted.wall_hours * 8 == pytest.approx(plan.training_flops / (PEAK * predicted.mfu) / 3600)


def test_a_third_of_each_publishers_runs_is_held_out():
    errs = run_errors(fitted_efficiency())
    pubs = {e.publisher for e in errs}
    for p in pubs:
        runs = [e for e in errs if e.publisher == p]
        if len(runs) >= 6:
            assert 0.15 <= sum(e.held_out for e in runs) / len(runs) <= 0.55, p
    assert all(e.held_out == held_out(e.run_id) for e in errs)


def test_held_out_error_is_what_the_calibration_file_and_readme_state():
    stored = json.loads((DATA_DIR / "training_calibration.json").read_text())
    fresh = error_summary(run_errors(fitted_efficiency()), held=True)
    assert fresh == stored["held_out"]  # regenerate with python -m bench.fit_training
    dense = fresh["all dense"]
    assert dense["points"] >= 30 and dense["median_abs_error"] <= 0.10 and dense["within_15pct"] >= 0.70
    assert fresh["pre-training, BF16"]["median_abs_error"] <= 0.12  # 5.5% before the kernel stacks, 12.0% after
    assert fresh["pre-training, FP8"]["median_abs_error"] <= 0.12
    fixed = stored["held_out_at_mfu_0_40"]["all dense"]  # the earlier fixed MFU 0.40 on the same runs
    assert fixed["median_abs_error"] > 2 * dense["median_abs_error"]


def test_a_low_precision_recipe_speeds_up_only_gpus_that_have_the_format():
    lay = dict(gpus=8, zero_stage=3, micro_batch=1, seq_len=4096, global_batch_tokens=64 * 4096)
    for gid, fp8, mx in (("H100-SXM", True, False), ("A100-80GB-SXM", False, False), ("B200", True, True)):
        g = get_gpu(gid)
        bf16 = training_step(M, g, StepLayout(**lay, precision="mixed")).matmul_s
        assert (training_step(M, g, StepLayout(**lay, precision="fp8")).matmul_s < bf16) is fp8, gid
        assert (training_step(M, g, StepLayout(**lay, precision="mxfp8")).matmul_s < bf16) is mx, gid
    q = {"mode": "training", "preset": "Llama-3.1-8B", "gpu": "A100-80GB-SXM", "gpus": 8, "precision": "fp8"}
    why = api.plan_report(q).picks[0].why
    assert any("has no FP8 tensor cores" in w for w in why)


def test_packed_examples_scale_only_the_attention_by_their_length():
    """Attention FLOPs per token are over the tokens attended: packed examples of 210 tokens in a 4,096-token
    sequence take 210 / 4,096 of the attention time; the matmuls, elementwise ops and traffic run over every token."""
    from gpuplan_core.hardware.catalog import get_gpu
    from gpuplan_core.model.presets import get_preset
    from gpuplan_core.perf.training_step import StepLayout, training_step

    m, gpu = get_preset("Llama-2-7B"), get_gpu("H100-SXM")
    base = StepLayout(gpus=8, seq_len=4096, global_batch_tokens=32 * 4096, frozen_base=True)
    packed = StepLayout(
        gpus=8, seq_len=4096, global_batch_tokens=32 * 4096, frozen_base=True, packed_example_tokens=210
    )
    a, b = training_step(m, gpu, base), training_step(m, gpu, packed)
    assert b.attention_s / a.attention_s == pytest.approx(210 / 4096, rel=1e-12)
    assert (b.matmul_s, b.elementwise_s, b.tokens_per_step) == (a.matmul_s, a.elementwise_s, a.tokens_per_step)
    assert b.tokens_per_s_per_gpu > a.tokens_per_s_per_gpu
    assert StepLayout(gpus=1, seq_len=128, packed_example_tokens=210).attention_tokens == 128  # never above s


def test_the_kernel_stack_sets_attention_elementwise_and_the_hidden_share_of_tensor_parallel_traffic():
    """Megatron-Core with Transformer Engine and PyTorch FSDP each read their own attention efficiency and
    elementwise traffic; overlapped tensor-parallel all-reduces expose (1 - the stack's overlap share) of their time."""
    eff = TrainingEfficiency(
        attention_efficiency=0.2,
        attention_efficiency_by_kernels={"megatron": 0.4},
        elementwise_bytes_per_token_layer=100,
        elementwise_by_kernels={"megatron": 25},
        tp_overlap_by_kernels={"megatron": 0.75},
    )
    base = dict(gpus=8, tp=8, micro_batch=1, seq_len=4096, global_batch_tokens=8 * 4096)
    torch = training_step(M, H100, StepLayout(**base), eff)
    mega = training_step(M, H100, StepLayout(**base, kernels="megatron"), eff)
    assert mega.attention_s == pytest.approx(torch.attention_s * 0.2 / 0.4)
    assert mega.elementwise_s == pytest.approx(torch.elementwise_s * 25 / 100)
    assert mega.tensor_parallel_s == pytest.approx(torch.tensor_parallel_s)  # not overlapped: nothing hidden
    over = training_step(M, H100, StepLayout(**base, kernels="megatron", tp_comm_overlap=True), eff)
    assert over.tensor_parallel_s == pytest.approx(torch.tensor_parallel_s * (1 - 0.75))
    # PyTorch with no fitted overlap share (async TP unfitted) hides nothing
    assert training_step(M, H100, StepLayout(**base, tp_comm_overlap=True), eff).tensor_parallel_s == pytest.approx(
        torch.tensor_parallel_s
    )


def test_measured_gemm_ceilings_and_fp8_speedups_by_hand():
    """The fit's fixed constants: median over training-sized shapes of measured BF16 TFLOP/s / dense peak and of
    BF16 / FP8 time (data/kernel_times/gemm.csv.gz); H100 SXM about 796 of 989 TFLOP/s and 1.44x."""
    from bench.fit_training import measured_gemm

    m = measured_gemm()
    assert m["gemm_max_by_architecture"]["Hopper"] == pytest.approx(796 / 989, abs=0.002)
    assert m["gemm_max_by_architecture"]["Blackwell"] == pytest.approx(1578 / 2250, abs=0.002)
    assert m["fp8_speedup_by_architecture"]["Hopper"] == pytest.approx(1.44, abs=0.005)
    assert m["fp8_speedup_by_architecture"]["Blackwell"] == pytest.approx(1.357, abs=0.005)
    eff = fitted_efficiency()  # the production constants keep them
    assert eff.gemm_max_by_architecture["Hopper"] == pytest.approx(m["gemm_max_by_architecture"]["Hopper"])
    b200 = get_gpu("B200")
    lay = dict(gpus=8, zero_stage=3, micro_batch=1, seq_len=4096, global_batch_tokens=64 * 4096)
    bf16 = training_step(M, b200, StepLayout(**lay), eff).matmul_s
    fp8 = training_step(M, b200, StepLayout(**lay, precision="fp8"), eff).matmul_s
    assert bf16 / fp8 == pytest.approx(m["fp8_speedup_by_architecture"]["Blackwell"])


def test_interleaved_bubble_by_hand_pp4_m8_v2_is_three_sixteenths_of_compute():
    """Megatron's interleaved 1F1B (Narayanan et al. 2021): bubble (pp - 1) / (m v) of the compute; PP 4, 8
    micro-batches a step (8 x 4,096 tokens on one pipeline), 2 chunks per stage: 3 / 16; 1F1B: 3 / 8."""
    base = dict(gpus=4, pp=4, micro_batch=1, seq_len=4096, global_batch_tokens=8 * 4096)
    one, two = (training_step(M, H100, StepLayout(**base, virtual_stages=v)) for v in (1, 2))
    assert StepLayout(**base).dp == 1 and StepLayout(**base).micro_batches == 8
    for st, share in ((one, 3 / 8), (two, 3 / 16)):
        compute = st.matmul_s + st.attention_s + st.elementwise_s + st.tensor_parallel_s + st.layer_overhead_s
        assert st.bubble_s == pytest.approx(compute * share, rel=1e-12)
    assert two.matmul_s == one.matmul_s and two.step_s < one.step_s  # the same work, half the bubble


def test_zero_bubble_zb_h1_bubble_by_hand_pp4_m8():
    """ZB-H1 (Qi et al. 2023): each backward split into its input-gradient (B) and weight-gradient (W) halves, the
    W halves fill the warm-up and cool-down slots: bubble (p - 1)(F + B - W) against 1F1B's (p - 1)(F + B + W).
    PP 4, 8 micro-batches: 1F1B 3 / 8 of the compute; ZB-H1 3 / 8 of (compute - 2 W), W a third of the matmuls
    (2 of their 6 passes: forward 2, input gradients 2, weight gradients 2), so a matmul-only step's bubble is
    3 / 8 x (1 - 2 / 3) = 1 / 8: a third of 1F1B's."""
    base = dict(gpus=4, pp=4, micro_batch=1, seq_len=4096, global_batch_tokens=8 * 4096)
    one, zb = (training_step(M, H100, StepLayout(**base, pipeline_schedule=s)) for s in ("1f1b", "zb-h1"))
    compute = one.matmul_s + one.attention_s + one.elementwise_s + one.tensor_parallel_s + one.layer_overhead_s
    weight_grads = one.matmul_s * 2 / 6
    assert one.bubble_s == pytest.approx(compute * 3 / 8, rel=1e-12)
    assert zb.bubble_s == pytest.approx((compute - 2 * weight_grads) * 3 / 8, rel=1e-12)
    assert zb.matmul_s == one.matmul_s and zb.step_s < one.step_s  # the same work, a smaller bubble
    assert (one.matmul_s - 2 * weight_grads) * 3 / 8 == pytest.approx(one.matmul_s * 3 / 8 / 3, rel=1e-12)
    # a frozen base (LoRA) has no weight gradients of its own: only the adapters' (42 M parameters, slow at their
    # rank-16 width) fill the bubble, 5% of it here against 1F1B's
    lora = dict(base, frozen_base=True, adapter_params=42e6, adapter_rank=16)
    one, zb = (training_step(M, H100, StepLayout(**lora, pipeline_schedule=s)) for s in ("1f1b", "zb-h1"))
    assert 0.9 < zb.bubble_s / one.bubble_s < 1.0
    # no pipeline, no bubble under either
    assert training_step(M, H100, StepLayout(gpus=4, pipeline_schedule="zb-h1")).bubble_s == 0.0
