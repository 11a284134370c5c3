"""model/formats.py: each number format's real storage cost, block scales and zero points included (DOMAIN.md:
a packed 4-bit value's 0.5 byte is a lower bound), the tensor-core math it runs in, and its family."""

import pytest

from gpuplan_core.model.arch import kv_bytes_per_token, params_total
from gpuplan_core.model.formats import FORMATS, KV_FORMATS, WEIGHT_FORMATS, get_format
from gpuplan_core.model.presets import get_preset


@pytest.mark.parametrize(
    "name, bits",
    [
        ("fp32", 32),
        ("bf16", 16),
        ("fp16", 16),
        ("fp8", 8),  # one scale per tensor: negligible
        ("int8", 8),
        ("int4-g128", 4 + 16 / 128 + 4 / 128),  # 4-bit values + an FP16 scale + a 4-bit zero per 128 = 4.15625
        ("nf4", 4 + 32 / 64),  # an FP32 absmax per block of 64 = 4.5
        ("nf4-dq", 4 + 8 / 64 + 32 / (64 * 256)),  # 8-bit absmax per 64, one FP32 per 256 blocks = 4.126953125
        ("mxfp4", 4 + 8 / 32),  # one 8-bit E8M0 scale per 32 values = 4.25
        ("nvfp4", 4 + 8 / 16),  # one FP8 E4M3 scale per 16 values = 4.5
        ("int4-ideal", 4),  # no scales: the lower bound
    ],
)
def test_bits_per_value_count_the_block_scales(name, bits):
    f = get_format(name)
    assert f.bits_per_value == pytest.approx(bits, abs=1e-12) and f.bytes_per_value == pytest.approx(bits / 8)


def test_the_hand_figures_of_the_4_bit_formats():
    assert get_format("int4-g128").bits_per_value == 4.15625
    assert get_format("nf4-dq").bits_per_value == 4.126953125
    assert get_format("nvfp4").bytes_per_value == 0.5625
    assert [n for n, f in FORMATS.items() if f.lower_bound] == ["int4-ideal"]
    assert min(f.bits_per_value for f in FORMATS.values() if not f.lower_bound) > 4  # every real 4-bit has scales


def test_domain_worked_check_for_7b_weights():
    """DOMAIN.md, 7e9 parameters in decimal GB: FP16 14, FP8 7, ideal 4-bit 3.5."""
    n = 7e9
    assert [n * get_format(f).bytes_per_value / 1e9 for f in ("fp16", "fp8", "int4-ideal")] == [14.0, 7.0, 3.5]
    assert n * get_format("int4-g128").bytes_per_value / 1e9 == pytest.approx(3.63671875)  # 7e9 x 4.15625 / 8


def test_llama_8b_weights_and_kv_per_token_in_each_format():
    m = get_preset("Llama-3.1-8B")
    assert params_total(m) * get_format("bf16").bytes_per_value == 16_060_522_496  # 8,030,261,248 x 2
    # KV per token: 2 (K, V) x 32 layers x 8 KV heads x 128 head_dim x bytes per value
    elements = 2 * 32 * 8 * 128
    assert [kv_bytes_per_token(m, get_format(f).bytes_per_value) for f in ("bf16", "fp8", "nvfp4")] == [
        elements * 2,  # 131,072
        elements * 1,  # 65,536
        elements * 0.5625,  # 36,864
    ]


@pytest.mark.parametrize(
    "name, math, family",
    [
        ("fp32", "fp32", "16-bit"),  # 16-bit and wider group together
        ("bf16", "bf16", "16-bit"),
        ("fp16", "bf16", "16-bit"),  # same tensor-core peak as BF16
        ("fp8", "fp8", "FP8"),
        ("int8", "int8", "8/4-bit integer"),
        ("int4-g128", "bf16", "8/4-bit integer"),  # weight-only: dequantised, matmuls in BF16
        ("nf4", "bf16", "8/4-bit integer"),
        ("nf4-dq", "bf16", "8/4-bit integer"),
        ("mxfp4", "fp4", "FP4"),
        ("nvfp4", "fp4", "FP4"),
        ("int4-ideal", "bf16", "8/4-bit integer"),
    ],
)
def test_math_and_family(name, math, family):
    f = get_format(name)
    assert (f.math, f.family) == (math, family)


def test_lookup_is_case_and_space_blind_and_names_what_is_allowed():
    assert get_format(" NVFP4 ") is FORMATS["nvfp4"] and get_format("BF16").label == "BF16"
    with pytest.raises(ValueError) as exc:
        get_format("int3")
    assert str(exc.value) == (
        "unknown number format 'int3'; allowed: fp32, bf16, fp16, fp8, int8, int4-g128, nf4, nf4-dq, mxfp4, nvfp4, "
        "int4-ideal"
    )


def test_which_formats_hold_weights_and_which_the_kv_cache():
    assert list(FORMATS) == WEIGHT_FORMATS and len(WEIGHT_FORMATS) == 11
    assert KV_FORMATS == ["fp32", "bf16", "fp16", "fp8", "int8", "nvfp4"]
    assert set(KV_FORMATS) <= set(FORMATS)
    with pytest.raises(AttributeError):
        FORMATS["bf16"].bits_per_value = 8  # frozen
