"""perf/kernel_steps.py: the step model's GEMMs, attention and all-reduces from the measured kernel tables where the
GPU, engine, formats and model are covered, the calibrated roofline (named) elsewhere."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf import kernel_steps, kernels
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.roofline import Workload
from gpuplan_core.perf.steps import StepModel


def row_ms(table: str, **keys) -> float:
    """The source's row (aiconfigurator-core 0.12.0 subset) for these keys, in milliseconds."""
    frame = pd.read_csv(kernels.TABLES / f"{table}.csv.gz")
    for k, v in keys.items():
        frame = frame[frame[k] == v]
    assert len(frame) == 1, keys
    return float(frame["ms"].iloc[0])


@pytest.mark.parametrize(
    "engine, dtype, m, n, k",
    [("vllm", "bf16", 64, 6144, 4096), ("vllm", "bf16", 1024, 4096, 4096), ("sglang", "fp8", 8, 16384, 8192)],
)
def test_a_gemm_on_the_grid_is_the_tables_row(engine, dtype, m, n, k):
    expected = row_ms("gemm", gpu="H100-SXM", engine=engine, dtype=dtype, m=m, n=n, k=k) / 1e3
    assert kernel_steps._gemm_s("H100-SXM", engine, dtype, m, n, k) == pytest.approx(expected, rel=1e-9)


def test_a_gemm_wider_than_the_tables_is_equal_measured_pieces():
    """An LM head of 131,072 rows (past the tables' 65,536) is two GEMMs of 65,536 rows, each the table's row."""
    one = row_ms("gemm", gpu="H100-SXM", engine="vllm", dtype="bf16", m=16, n=65536, k=4096) / 1e3
    assert kernel_steps._gemm_s("H100-SXM", "vllm", "bf16", 16, 131072, 4096) == pytest.approx(2 * one, rel=1e-9)


def test_a_decode_step_is_the_sum_of_its_measured_kernels():
    """Llama-3.1-8B on one H100, vLLM, 32 sequences at 1,023 cached tokens: per layer QKV 4,096 -> 6,144 (32 + 2 x 8
    heads of 128), output 4,096 -> 4,096, gate-up 4,096 -> 28,672 (2 x 14,336) and down 14,336 -> 4,096 at m = 32,
    and decode attention of 32 x 1,023 over 32 / 8 heads, all times 32 layers (the table's rows)."""
    m, gpu = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM")
    steps = kernel_steps.MeasuredSteps(m, gpu, "vllm", "bf16", "bf16", 1)
    row = {"gpu": "H100-SXM", "engine": "vllm", "dtype": "bf16", "m": 32}
    per_layer = (
        row_ms("gemm", **row, n=6144, k=4096)
        + row_ms("gemm", **row, n=4096, k=4096)
        + kernels.gemm_time("H100-SXM", "vllm", "bf16", 32, 28672, 4096).time_s * 1e3  # between 16,384 and 51,200
        + kernels.gemm_time("H100-SXM", "vllm", "bf16", 32, 4096, 14336).time_s * 1e3
    )
    attn = row_ms(
        "attention_decode",
        gpu="H100-SXM",
        engine="vllm",
        kv_dtype="bf16",
        batch=32,
        past_tokens=1023,
        num_heads=32,
        num_key_value_heads=8,
    )
    gemms, attention, comm, experts = steps.groups([(32, 1023, 1, 0)], 32, 0)
    assert gemms == pytest.approx(32 * per_layer / 1e3, rel=1e-9)
    assert attention == pytest.approx(32 * attn / 1e3, rel=1e-9)
    assert comm == 0.0 and experts == 0.0  # one GPU: no all-reduce; a dense model: no experts


def test_a_prompt_chunk_after_a_cached_prefix_scales_the_prefill_kernel_by_the_attended_pairs():
    """512 new tokens after 512 cached attend 512 x 512 + 512 x 513 / 2 pairs, 3 x the 512 x 513 / 2 of a fresh
    512-token prompt: three times the table's 512-token prefill, per layer."""
    m, gpu = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM")
    steps = kernel_steps.MeasuredSteps(m, gpu, "vllm", "bf16", "bf16", 1)
    fresh = row_ms(
        "attention_prefill",
        gpu="H100-SXM",
        engine="vllm",
        kv_dtype="bf16",
        batch=1,
        prompt_tokens=512,
        num_heads=32,
        num_key_value_heads=8,
    )
    _, attention, _, _ = steps.groups([(1, 512, 512, 1)], 512, 1)
    assert attention == pytest.approx(32 * fresh / 1e3 * (512 * 512 + 512 * 513 / 2) / (512 * 513 / 2), rel=1e-9)


def test_tensor_parallel_all_reduces_are_the_nccl_rows():
    """Llama-3.1-70B at TP4 on H100, 64 tokens: 2 all-reduces per layer of 64 x 8,192 = 524,288 values, 80 layers."""
    m, gpu = get_preset("Llama-3.1-70B"), get_gpu("H100-SXM")
    steps = kernel_steps.MeasuredSteps(m, gpu, "vllm", "bf16", "bf16", 4)
    ar = row_ms("all_reduce", gpu="H100-SXM", num_gpus=4, message_elements=524288) / 1e3
    assert steps.groups([(64, 100, 1, 64)], 64, 64)[2] == pytest.approx(2 * 80 * ar, rel=1e-9)
    assert (steps.heads, steps.kv_heads) == (16, 2)


def test_the_step_model_uses_the_tables_and_says_so():
    m, gpu = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM")
    sm = StepModel(m, gpu, Workload(), PerfAssumptions(), "vllm")
    report = sm.decode(32, 1023)
    assert (
        report.kernel_source == "measured kernels (aiconfigurator-core 0.12.0, H100-SXM, vLLM 0.24.0): GEMMs, attention"
    )
    assert sm.step_s(32.0, 1023, ()) == report.time_s  # the step loop's time is the report's
    assert sm.step_s(32.0, 1023, ()) == sm.step_s(32.0, 1023, ())  # a pure function of the step
    roof = StepModel(m, gpu, Workload(), PerfAssumptions())
    assert roof.decode(32, 1023).kernel_source == "roofline"
    assert report.time_s != roof.decode(32, 1023).time_s


@pytest.mark.parametrize(
    "preset, gpu, engine, reason",
    [
        ("Llama-3.1-8B", "A100-80GB-SXM", "vllm", "no GEMM table for A100-80GB-SXM vLLM bf16"),
        ("Gemma-2-9B", "H100-SXM", "vllm", "attention tables are 128-wide heads without a window"),
        ("Mixtral-8x7B-v0.1", "A100-80GB-SXM", "sglang", "no GEMM table for A100-80GB-SXM SGLang bf16"),
        (
            "Mixtral-8x7B-v0.1",
            "H100-SXM",
            "vllm",
            "MoE and MLA kernels measured on current engines read faster than the published runs",
        ),
        ("Llama-3.1-8B", "H100-SXM", "transformers", "no kernel tables for engine transformers"),
    ],
)
def test_outside_the_tables_the_calibrated_roofline_is_used_and_named(preset, gpu, engine, reason):
    m, g = get_preset(preset), get_gpu(gpu)
    sm = StepModel(m, g, Workload(), PerfAssumptions(), engine)
    report = sm.decode(8, 500)
    assert report.kernel_source == f"roofline ({reason})"
    assert report.time_s == StepModel(m, g, Workload(), PerfAssumptions()).decode(8, 500).time_s


def test_a_shape_outside_one_table_falls_back_for_that_group_only():
    """4,096 decoding sequences: past the decode attention table's 2,048, so attention is the calibrated roofline's
    while the GEMMs (m = 4,096) stay measured."""
    m, gpu = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM")
    sm = StepModel(m, gpu, Workload(), PerfAssumptions(), "vllm")
    report = sm.decode(4096, 200)
    assert report.kernel_source.endswith(": GEMMs; roofline for attention (outside the tables)")
    steps = kernel_steps.MeasuredSteps(m, gpu, "vllm", "bf16", "bf16", 1)
    assert steps.groups([(4096, 200, 1, 4096)], 4096, 4096)[1] is None


def test_a_moe_step_times_its_routed_experts_from_the_moe_table(monkeypatch):
    """Mixtral-8x7B on 2 x H100 in BF16 with vLLM, 64 sequences decoding: one MoE layer's routed experts at 64 tokens
    (4,096 -> 14,336 gated -> 4,096, top 2 of 8, experts split over TP 2) is the table's row, 0.49737 ms (looked up
    by hand in data/kernel_times/moe.csv.gz), times 32 MoE layers; the GEMM group is attention's projections only
    (QKV 4,096 -> (16 + 2 x 4) x 128 = 3,072, output 2,048 -> 4,096) with no dense MLP."""
    m, gpu = get_preset("Mixtral-8x7B-v0.1"), get_gpu("H100-SXM")
    steps = kernel_steps.MeasuredSteps(m, gpu, "vllm", "bf16", "bf16", 2)
    one = row_ms(
        "moe",
        gpu="H100-SXM",
        engine="vllm",
        dtype="bf16",
        hidden_size=4096,
        inter_size=14336,
        topk=2,
        num_experts=8,
        moe_tp_size=2,
        tokens=64,
    )
    assert one == pytest.approx(0.49737, rel=1e-4)
    gemms, _, _, experts = steps.groups([(64, 500, 1, 64)], 64, 0)
    assert experts == pytest.approx(32 * one / 1e3, rel=1e-9)
    row = {"gpu": "H100-SXM", "engine": "vllm", "dtype": "bf16", "m": 64}
    per_layer = row_ms("gemm", **row, n=3072, k=4096) + row_ms("gemm", **row, n=4096, k=2048)
    assert gemms == pytest.approx(32 * per_layer / 1e3, rel=1e-9)
    monkeypatch.setattr(kernel_steps, "MEASURED_MOE", True)  # MoE models are on the roofline unless asked
    report = StepModel(m, gpu, Workload(tp=2), PerfAssumptions(), "vllm").decode(64, 500)
    assert "experts" in report.kernel_source and report.kernel_source.startswith("measured kernels")


def test_an_mla_decode_step_reads_the_mla_table_and_vllm_has_none(monkeypatch):
    """DeepSeek-V3 on 8 x H200, SGLang, FP8 weights, BF16 cache: 8 sequences decoding at 2,047 cached tokens run
    MLA decode attention over 128 / 8 = 16 heads per GPU, the table's row (0.020461 ms, by hand), times 61 layers;
    the routed experts are the MoE table's FP8-block rows (no per-tensor FP8 row for this shape). vLLM's tables
    time MLA only as a whole module, so its attention group is the roofline's, named."""
    m, gpu = get_preset("DeepSeek-V3"), get_gpu("H200")
    steps = kernel_steps.MeasuredSteps(m, gpu, "sglang", "fp8", "bf16", 8)
    attn = row_ms("mla_decode", gpu="H200", engine="sglang", kv_dtype="bf16", num_heads=16, batch=8, past_tokens=2047)
    assert attn == pytest.approx(0.020461, rel=1e-4)
    _, attention, _, experts = steps.groups([(8, 2047, 1, 8)], 8, 8)
    assert attention == pytest.approx(61 * attn / 1e3, rel=1e-9)
    moe = kernels.moe_time("H200", "sglang", "fp8_block", 8, hidden=7168, inter=2048, topk=8, experts=256, tp=8)
    assert moe.kind == "measured" and experts == pytest.approx(58 * moe.time_s, rel=1e-9)
    vllm = kernel_steps.MeasuredSteps(m, gpu, "vllm", "fp8", "bf16", 8)
    assert vllm.groups([(8, 2047, 1, 8)], 8, 8)[1] is None
    monkeypatch.setattr(kernel_steps, "MEASURED_MOE", True)
    label = StepModel(m, gpu, Workload(weights_format="fp8", tp=8), PerfAssumptions(), "vllm").decode(8, 2047)
    assert label.kernel_source.endswith("; roofline for attention (outside the tables)")
