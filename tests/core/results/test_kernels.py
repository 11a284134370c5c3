"""results/kernels.py: KernelTime, the typed answer of a kernel-time look-up (perf/kernels.py returns it): its fields
in order, immutable, the three kinds, and the roofline answer a look-up outside the tables carries."""

import typing

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.perf.kernels import all_reduce_time, gemm_time
from gpuplan_core.results.kernels import KernelTime


def test_the_fields_are_op_time_kind_source_in_that_order():
    t = KernelTime("gemm", 2.5e-5, "measured", "aiconfigurator-core 0.12.0 GEMM: H100-SXM vllm 0.24.0")
    op, time_s, kind, source = t  # a tuple: the callers unpack it
    assert KernelTime._fields == ("op", "time_s", "kind", "source")
    assert (op, time_s, kind, source) == ("gemm", 2.5e-5, "measured", t.source)
    assert t[1] == t.time_s == 2.5e-5


def test_a_kernel_time_cannot_be_changed_in_place():
    t = KernelTime("all_reduce", 0.0, "roofline", "roofline (no table)")
    with pytest.raises(AttributeError):
        t.time_s = 1.0
    assert t._replace(time_s=1.0) == ("all_reduce", 1.0, "roofline", "roofline (no table)")


def test_the_kinds_are_measured_interpolated_and_roofline():
    assert typing.get_args(typing.get_type_hints(KernelTime)["kind"]) == ("measured", "interpolated", "roofline")


def test_an_all_reduce_on_one_gpu_moves_nothing_and_says_it_is_the_roofline():
    """The tables hold 2, 4 and 8 GPUs: one GPU is outside them, and the roofline's 2 (n - 1) / n x bytes is 0."""
    t = all_reduce_time("H100-SXM", 1, 262_144)
    assert isinstance(t, KernelTime)
    assert (t.op, t.time_s, t.kind) == ("all_reduce", 0.0, "roofline")
    assert t.source.startswith("roofline (") and "num_gpus 1" in t.source


def test_a_gemm_on_a_gpu_without_a_table_is_the_larger_of_flops_and_bytes():
    """L4 (no aiconfigurator table): 121 TFLOP/s BF16 dense, 300 GB/s. m=1 token, 4,096 x 4,096 BF16 weights:
    FLOPs 2 x 1 x 4,096 x 4,096 / 121e12 = 0.28 us; bytes (1 x 4,096 + 4,096 x 4,096) x 2 + 1 x 4,096 x 2 over
    300 GB/s = 111.9 us: decode's GEMM is bandwidth-bound."""
    l4 = get_gpu("L4")
    assert (l4.bf16_dense_tflops, l4.bandwidth_gb_s) == (121, 300)
    t = gemm_time("L4", "vllm", "bf16", 1, 4096, 4096)
    by_bytes = ((4096 + 4096 * 4096) * 2 + 4096 * 2) / 300e9
    assert t.kind == "roofline" and "no GEMM table for L4" in t.source
    assert t.time_s == pytest.approx(by_bytes, rel=1e-12)
    assert t.time_s == pytest.approx(111.9e-6, rel=1e-3)
