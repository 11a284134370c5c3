"""perf/efficiency.py: how much of a GPU's peak a kernel reaches. MFU(m) = MFU_max(format) x m / (m + m_half),
MBU(x) = MBU_max x x / (x + x_half); the weight-read plateau by memory type and format, from measurements of the
GPU generation and format family where data/efficiency.csv has them."""

import pytest

from gpuplan_core.common.units import MB
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.formats import get_format
from gpuplan_core.perf.efficiency import (
    PerfAssumptions,
    mbu_curve,
    mfu_curve,
    moe_efficiency_factor,
    weight_mbu_max,
)

PA = PerfAssumptions()


def test_the_sourced_defaults():
    assert (PA.mfu_max_bf16, PA.mfu_max_fp8, PA.mfu_max_fp4, PA.mfu_max_int8, PA.mfu_max_tf32) == (
        0.75,
        0.55,
        0.45,
        0.6,
        0.6,
    )
    assert (PA.mfu_half_tokens, PA.mbu_max_hbm, PA.mbu_max_gddr, PA.kv_mbu_max) == (64, 0.80, 0.75, 0.9)
    assert PA.mbu_half_bytes_per_layer == PA.kv_mbu_half_bytes_per_layer == 30 * MB == 30_000_000
    assert (PA.decode_step_overhead_s, PA.prefill_overhead_s) == (1e-3, 3e-3)
    assert (PA.allreduce_latency_s, PA.link_efficiency, PA.pcie_link_gb_s) == (6e-6, 0.87, 32.0)


@pytest.mark.parametrize(
    "tokens, math, mfu",
    [
        (64, "bf16", 0.75 * 64 / (64 + 64)),  # half the plateau at m_half: 0.375
        (2008, "bf16", 0.75 * 2008 / (2008 + 64)),  # 0.7268
        (1, "bf16", 0.75 * 1 / 65),  # one decode token: 0.0115
        (512, "fp8", 0.55 * 512 / 576),
        (512, "fp4", 0.45 * 512 / 576),
        (512, "int8", 0.6 * 512 / 576),
        (512, "tf32", 0.6 * 512 / 576),
        (512, "fp32", 0.6 * 512 / 576),  # CUDA-core FP32 (V100, T4) takes the TF32 plateau
    ],
)
def test_mfu_curve_by_hand(tokens, math, mfu):
    assert mfu_curve(tokens, PA, math) == pytest.approx(mfu, rel=1e-12)


def test_an_unknown_math_format_is_an_error():
    with pytest.raises(KeyError):
        mfu_curve(64, PA, "fp64")


def test_mbu_curve_by_hand():
    assert mbu_curve(30 * MB, 0.8, 30 * MB) == pytest.approx(0.4)  # half the plateau at x_half
    assert mbu_curve(270 * MB, 0.8, 30 * MB) == pytest.approx(0.8 * 270 / 300)  # 0.72
    assert mbu_curve(0, 0.8, 30 * MB) == 0.8  # no bytes: the plateau (nothing to be inefficient about)


@pytest.mark.parametrize(
    "gpu, fmt, plateau",
    [
        ("H100", "bf16", 0.80),  # HBM, 16-bit
        ("H100", "fp8", 0.80 * 0.7),  # 8-bit on HBM (aiconfigurator: H100 0.67)
        ("H100", "int4-g128", 0.80 * 0.45),  # 4.16 bits <= 5: the 4-bit factor on HBM
        ("B200", "nvfp4", 0.80 * 0.45),
        ("A100-40GB", "int8", 0.80 * 0.85),  # measured: weight-only INT8 on Ampere reads at 0.85 of 16-bit
        ("L40S", "bf16", 0.75),  # GDDR6
        ("L40S", "fp8", 0.75 * 0.95),  # 8-bit on GDDR (L40S 0.96)
        ("L40S", "int4-g128", 0.75 * 1.0),  # measured: W4A16 on Ada at the 16-bit efficiency
        ("L40S", "nvfp4", 0.75 * 0.7),  # FP4 on Ada: no measurement, the 4-bit GDDR factor
        ("RTX-4090", "fp8", 0.75 * 0.95),  # GDDR6X is GDDR
        ("H100", "fp32", 0.80),
    ],
)
def test_weight_mbu_plateau(gpu, fmt, plateau):
    assert weight_mbu_max(get_gpu(gpu), get_format(fmt), PA) == pytest.approx(plateau, rel=1e-12)


def test_weight_mbu_plateau_follows_the_assumptions():
    pa = PerfAssumptions(mbu_max_hbm=0.9, mbu_format_8bit_hbm=0.5)
    assert weight_mbu_max(get_gpu("H100"), get_format("fp8"), pa) == pytest.approx(0.45)


@pytest.mark.parametrize(
    "gpu, fmt, factor",
    [
        ("H100", "fp8", 0.5),  # DeepSeek-R1 / Mixtral FP8 on Hopper
        ("H200", "fp8", 0.5),
        ("MI300X", "fp8", 0.3),  # early-2025 ROCm MoE kernels
        ("B200", "nvfp4", 1.0),
        ("A100-80GB-SXM", "bf16", 0.8),  # Mixtral on A100
        ("H100", "bf16", 1.0),  # no MoE measurement pins it: the dense efficiency
        ("L40S", "fp8", 1.0),
    ],
)
def test_moe_efficiency_factor(gpu, fmt, factor):
    assert moe_efficiency_factor(get_gpu(gpu), get_format(fmt)) == factor


def test_assumptions_are_validated_by_name():
    from gpuplan_core.common.errors import describe

    for bad, sentence in (
        ({"mfu_max_bf16": 0}, "mfu_max_bf16: Input should be greater than 0"),
        ({"link_efficiency": 1.5}, "link_efficiency: Input should be less than or equal to 1"),
        ({"mfu_half_tokens": -1}, "mfu_half_tokens: Input should be greater than 0"),
        ({"mbu_max": 0.8}, "mbu_max: Extra inputs are not permitted"),
    ):
        with pytest.raises(ValueError) as exc:
            PerfAssumptions(**bad)
        assert describe(exc.value).startswith(sentence)
