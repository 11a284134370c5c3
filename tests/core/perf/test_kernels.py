"""Measured kernel times (perf/kernels.py) against aiconfigurator-core 0.12.0's tables, and the named fallback."""

import math

import pandas as pd
import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.perf.kernels import (
    TABLES,
    all_reduce_time,
    decode_attention_time,
    gemm_time,
    prefill_attention_time,
)


@pytest.mark.parametrize(
    "call, ms",
    [  # rows of the wheel's parquet files (systems/data/...), read with pandas
        (lambda: gemm_time("H100-SXM", "vllm", "bf16", 1, 6144, 4096), 0.019898666),  # h100_sxm/gemm/vllm/0.24.0
        (lambda: gemm_time("H100-SXM", "vllm", "bf16", 64, 6144, 4096), 0.023066666),
        (lambda: gemm_time("H100-SXM", "vllm", "bf16", 1024, 6144, 4096), 0.065335108),
        (lambda: gemm_time("H200", "sglang", "fp8", 256, 8192, 8192), 0.041663),  # h200_sxm/gemm/sglang/0.5.14
        (lambda: decode_attention_time("H200", "sglang", 32, 2047, 32, 8), 0.072827),  # fa3, step 2047
        (lambda: prefill_attention_time("H100-SXM", "trtllm", 1, 2048, 32, 8), 0.124549),  # torch_flow
        (lambda: all_reduce_time("H100-SXM", 8, 262144), 0.02013),  # h100_sxm/comm/nccl/2.29.2, half
    ],
)
def test_a_look_up_on_the_grid_is_the_sources_row(call, ms):
    t = call()
    assert t.kind == "measured"
    assert t.time_s == pytest.approx(ms / 1e3, rel=5e-5)
    assert t.source.startswith("aiconfigurator-core 0.12.0")


def test_between_grid_points_the_time_is_log_log_interpolated_from_the_neighbouring_rows():
    rows = pd.read_csv(TABLES / "gemm.csv.gz")
    rows = rows[(rows.gpu == "H100-SXM") & (rows.engine == "vllm") & (rows.dtype == "bf16") & (rows.n == 6144)]
    t2, t4 = (rows[(rows.m == m) & (rows.k == 4096)]["ms"].iloc[0] for m in (2, 4))
    w = (math.log(3) - math.log(2)) / (math.log(4) - math.log(2))
    t = gemm_time("H100-SXM", "vllm", "bf16", 3, 6144, 4096)
    assert t.kind == "interpolated"
    assert t.time_s == pytest.approx(math.exp((1 - w) * math.log(t2) + w * math.log(t4)) / 1e3, rel=1e-9)


def test_outside_the_tables_the_roofline_answers_and_says_why():
    a100 = get_gpu("A100-80GB-SXM")  # 312 TFLOP/s BF16, 2,039 GB/s
    m, n, k = 1000, 6144, 4096
    t = gemm_time("A100-80GB-SXM", "vllm", "bf16", m, n, k)
    assert t.kind == "roofline"
    assert t.source == "roofline (no GEMM table for A100-80GB-SXM vllm bf16)"
    flops_s = 2 * m * n * k / (a100.bf16_dense_tflops * 1e12)
    bytes_s = ((m * k + k * n) * 2 + m * n * 2) / (a100.bandwidth_gb_s * 1e9)
    assert t.time_s == pytest.approx(max(flops_s, bytes_s))
    beyond = gemm_time("H100-SXM", "vllm", "bf16", 20000, 6144, 4096)
    assert beyond.kind == "roofline" and "m 20,000 outside the measured 1-16,384" in beyond.source
    l40s = all_reduce_time("L40S", 2, 262144)
    assert l40s.kind == "roofline" and "no NCCL all-reduce table for L40S" in l40s.source
    assert decode_attention_time("H100-SXM", "vllm", 8, 1000, 7, 1).kind == "roofline"  # 7 heads: not measured
