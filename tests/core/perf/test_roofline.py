"""The performance model: hand-computed roofline numbers, properties, calibration regression."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan_core import api
from gpuplan_core.hardware.catalog import get_gpu, load_gpus
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import max_batch
from gpuplan_core.model.arch import model_from_param_count
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.predict import predict
from gpuplan_core.perf.roofline import Part, Workload, decode_phase, expected_experts_touched, prefill_phase
from gpuplan_core.results.perf import NoFit

PA = PerfAssumptions()
L8 = get_preset("Llama-3.1-8B")
M7 = model_from_param_count(7_000_000_000)


def test_decode_batch1_reads_every_bf16_weight_but_gathers_the_embedding_rows():
    p = decode_phase(L8, get_gpu("H100"), Workload(), 1, 1024, PA)
    # 8,030,261,248 parameters x 2 bytes, less the 128,256 x 4,096 input embedding table (6.5% of the bytes),
    # plus the one row the step gathers; the untied lm_head is read in full
    assert p.weight_bytes == (8_030_261_248 - 128_256 * 4096) * 2 + 4096 * 2
    assert 1 - p.weight_bytes / (2 * 8_030_261_248) == pytest.approx(0.0654, abs=5e-4)
    # KV read: 1,024 tokens x 131,072 B, plus the new token's KV written
    assert p.kv_bytes == 131_072 * 1024 + 131_072


def test_ridge_point_h100_bf16():
    r = predict(L8, get_gpu("H100"), Workload(), 1, 128, 16, pa=PA)
    assert r.ridge_flops_per_byte == pytest.approx(989e12 / 3.35e12)
    assert round(r.ridge_flops_per_byte, 1) == 295.2


@pytest.mark.parametrize("gpu", [g.gpu for g in load_gpus()])
def test_7b_decode_batch1_memory_bound_everywhere(gpu):
    p = decode_phase(M7, get_gpu(gpu), Workload(), 1, 2048, PA)
    assert p.bound == "memory"
    assert p.intensity_flops_per_byte < get_gpu(gpu).bf16_dense_tflops * 1e12 / get_gpu(gpu).bandwidth_bytes_per_s


def test_7b_prefill_2048_compute_bound_on_h100():
    p = prefill_phase(M7, get_gpu("H100"), Workload(), 1, 2048, PA)
    assert p.bound == "compute"
    assert p.intensity_flops_per_byte > 295.2


def test_prefill_flops_by_hand():
    """2 x matmul params x tokens (lm_head once per prompt) + causal attention 4 x a x d x L x S(S+1)/2."""
    s = 1000
    p = prefill_phase(L8, get_gpu("H100"), Workload(), 1, s, PA)
    v_h = 128_256 * 4096
    body = 8_030_261_248 - 2 * v_h  # less the input embedding and the lm_head
    expected = 2 * body * s + 2 * v_h + 4 * 32 * 128 * 32 * s * (s + 1) / 2
    assert p.flops == pytest.approx(expected)


def test_dense_peaks_only_and_fp8_fallback():
    a100 = get_gpu("A100")
    r = predict(L8, a100, Workload(weights_format="fp8"), 1, 512, 16, pa=PA)
    assert r.math_format == "bf16" and "no FP8" in r.math_note
    assert r.peak_flops_per_s == 312e12  # dense; the sparse 624 is never used
    h = predict(L8, get_gpu("H100"), Workload(weights_format="fp8"), 1, 512, 16, pa=PA)
    assert h.peak_flops_per_s == 1979e12 and h.math_note is None


def test_moe_expert_reads_depend_on_batch():
    mix = get_preset("Mixtral-8x7B-v0.1")
    assert expected_experts_touched(mix, 1) == pytest.approx(2)
    assert expected_experts_touched(mix, 256) == pytest.approx(8, abs=1e-6)
    one = decode_phase(mix, get_gpu("H100"), Workload(tp=2), 1, 512, PA)
    many = decode_phase(mix, get_gpu("H100"), Workload(tp=2), 64, 512, PA)
    assert one.weight_bytes < many.weight_bytes
    # all 8 experts touched at batch 64: every weight but the 32,000 x 4,096 input embedding table (64 rows
    # gathered), in bf16, split over tp 2
    assert many.weight_bytes == pytest.approx((46_702_792_704 - 32_000 * 4096 + 64 * 4096) * 2 / 2, rel=1e-6)


def test_levers_change_the_numbers():
    h100 = get_gpu("H100")
    base = predict(L8, h100, Workload(), 8, 8192, 256, pa=PA)
    cached = predict(L8, h100, Workload(prefix_cache_fraction=0.75), 8, 8192, 256, pa=PA)
    assert cached.ttft_s < base.ttft_s
    fp8kv = predict(L8, h100, Workload(kv_format="fp8"), 8, 8192, 256, pa=PA)
    assert fp8kv.tpot_s < base.tpot_s
    fp8w = predict(L8, h100, Workload(weights_format="fp8"), 8, 8192, 256, pa=PA)
    assert fp8w.tpot_s < base.tpot_s
    draft = model_from_param_count(1_000_000_000)
    good = predict(L8, h100, Workload(spec_draft=draft, spec_tokens=4, spec_acceptance=0.8), 1, 1024, 256, pa=PA)
    bad = predict(L8, h100, Workload(spec_draft=draft, spec_tokens=4, spec_acceptance=0.0), 1, 1024, 256, pa=PA)
    plain = predict(L8, h100, Workload(), 1, 1024, 256, pa=PA)
    assert good.tpot_s < plain.tpot_s < bad.tpot_s


def test_tpot_inclusive_definition():
    r = predict(L8, get_gpu("H100"), Workload(), 4, 1024, 100, pa=PA)
    assert r.tpot_inclusive_s == pytest.approx((r.ttft_s + 99 * r.tpot_s) / 100)
    assert r.output_tokens_per_s == pytest.approx(4 * 100 / r.e2e_request_s)


def test_tensor_parallel_all_reduce_is_charged():
    h100 = get_gpu("H100")
    r1 = decode_phase(L8, h100, Workload(tp=1), 1, 1024, PA)
    r2 = decode_phase(L8, h100, Workload(tp=2), 1, 1024, PA)
    assert r1.comm_time_s == 0
    assert r2.comm_time_s >= 2 * 32 * PA.allreduce_latency_s


@settings(max_examples=40, deadline=None)
@given(st.floats(100, 10_000), st.floats(1.01, 4), st.integers(1, 256), st.integers(1, 32768))
def test_more_bandwidth_never_slows_decode(bw, factor, batch, ctx):
    g = get_gpu("H100").model_copy(update={"bandwidth_gb_s": bw})
    g2 = g.model_copy(update={"bandwidth_gb_s": bw * factor})
    assert (
        decode_phase(L8, g2, Workload(), batch, ctx, PA).time_s
        <= decode_phase(L8, g, Workload(), batch, ctx, PA).time_s
    )


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([g.gpu for g in load_gpus()]), st.sampled_from([512, 2048, 8192]))
def test_more_batch_never_lowers_throughput_until_memory_runs_out(gpu, ctx):
    g = get_gpu(gpu)
    mb = max_batch(L8, MemoryRequest(context_tokens=ctx), g)
    prev = 0.0
    b = 1
    while b <= mb:
        tput = b / decode_phase(L8, g, Workload(), b, ctx, PA).time_s
        assert tput >= prev
        prev, b = tput, b * 2


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["Llama-3.1-70B", "Mixtral-8x7B-v0.1", "DeepSeek-V3"]), st.sampled_from([1, 2, 4, 8]))
def test_tp_never_increases_per_gpu_weight_bytes(name, tp):
    m = get_preset(name)
    one = decode_phase(m, get_gpu("H100"), Workload(tp=1), 4, 1024, PA).weight_bytes
    more = decode_phase(m, get_gpu("H100"), Workload(tp=tp), 4, 1024, PA).weight_bytes
    assert more <= one


def test_perf_report_keys_and_max_batch():
    r = api.perf_report(
        {"preset": "Llama-3.1-8B", "gpu": "H100", "input_tokens": 1024, "output_tokens": 128, "batch": "max"}
    )
    for k in (
        "ttft_s",
        "tpot_s",
        "decode_tokens_per_s_per_sequence",
        "output_tokens_per_s",
        "batch",
        "max_batch",
        "compute_bound_batch",
        "prefill",
        "decode",
    ):
        assert k in r.model_dump()  # the CLI's JSON keys
    p = r.main
    assert p.fits and p.batch == p.max_batch > 1
    assert p.prefill.bound in ("compute", "memory", "overhead")
    assert set(r.model_dump()["prefill"]) >= {"flops", "bytes", "intensity_flops_per_byte", "bound"}
    # a model no layout of 4,096 T4s holds (50T parameters x 2 bytes = 100 TB): a distinct "does not fit" result
    none = api.perf_report({"params": 50_000_000_000_000, "gpu": "T4"}, gpus=["T4"])
    assert isinstance(none.main, NoFit) and not none.main.fits and "does not fit" in none.main.notes[0]
    assert none.model_dump()["fits"] is False and "ttft_s" not in none.model_dump()


def test_nvlink_all_reduce_by_hand_and_the_published_kernel_time():
    """H100 TP4, 0.5 MiB (32 tokens x 8,192 x 2 B): one-shot, each GPU reads 3 peers' buffers over 450 GB/s x 0.87:
    6 us + 3 x 524,288 / 391.5e9 = 10.0 us, vLLM PR #24532's measured custom all-reduce (ca_1stage) 10 us; the
    engine adds its per-call 16 us (allreduce_sync_s, fitted)."""
    from gpuplan_core.perf.roofline import _allreduce_time, allreduce_time

    h100, msg = get_gpu("H100"), 524_288
    kernel = 6e-6 + 3 * msg / (450e9 * 0.87)
    assert kernel == pytest.approx(10.0e-6, abs=0.1e-6)
    assert allreduce_time(4, msg, h100, PA) == pytest.approx(kernel + 16e-6)
    assert _allreduce_time is allreduce_time  # the earlier name stays
    # 4 MiB: two-shot (12 us + 2 x 3/4 x 4 MiB / 391.5e9 = 28.1 us, measured 28 us) beats one-shot (38.1 us)
    big = 4 * 1_048_576
    assert allreduce_time(4, big, h100, PA) == pytest.approx(12e-6 + 1.5 * big / (450e9 * 0.87) + 16e-6)
    assert allreduce_time(1, big, h100, PA) == 0.0


def test_pcie_all_reduce_by_hand_and_the_published_latency():
    """L40S has no NVLink: NCCL's ring over PCIe Gen4 (32 GB/s x 0.7): 40 us + 2 (n-1)/n x message / 22.4 GB/s.
    At 8 bytes on 8 GPUs that is 40 us; nccl-tests all_reduce_perf measured 42 us on 8 PCIe RTX 4090s."""
    from gpuplan_core.perf.roofline import allreduce_time

    l40s = get_gpu("L40S")
    assert allreduce_time(4, 16_384, l40s, PA) == pytest.approx(40e-6 + 1.5 * 16_384 / (32e9 * 0.7))
    assert allreduce_time(8, 8, get_gpu("RTX 4090"), PA) == pytest.approx(42e-6, rel=0.06)
    # an NVLink bridge joins pairs only: 4 RTX 3090s reduce over PCIe, 2 over the bridge (56.25 GB/s)
    r3090 = get_gpu("RTX 3090")
    assert r3090.peer_link(2) == ("nvlink", 56.25e9) and r3090.peer_link(4) == ("pcie", None)
    # MI300X's Infinity Fabric is a mesh: 2 GPUs use one 64 GB/s link, 8 use all 7
    mi = get_gpu("MI300X")
    assert mi.peer_link(2) == ("nvlink", pytest.approx(64e9)) and mi.peer_link(8) == ("nvlink", pytest.approx(448e9))


def test_moe_prefill_expert_gemms_see_their_share_of_the_tokens():
    """Mixtral-8x7B, one 512-token prompt on one H100 in BF16: every expert is touched (8 x (1 - (6/8)^512) = 8),
    so each expert GEMM sees 512 x 2 / 8 = 128 tokens: MFU 0.75 x 128 / (128 + 64) = 0.5 where the dense matmuls
    see 512 tokens, 0.75 x 512 / 576 = 0.667. The prefill reads every expert's weights."""
    from gpuplan_core.perf.roofline import tokens_per_expert

    mix, h100 = get_preset("Mixtral-8x7B-v0.1"), get_gpu("H100")
    assert tokens_per_expert(mix, 512) == pytest.approx(128)
    assert tokens_per_expert(mix, 1) == pytest.approx(1)
    p = prefill_phase(mix, h100, Workload(), 1, 512, PA)
    one_expert = 3 * 4096 * 14336
    total_params = 46_702_792_704
    # every weight but the 32,000 x 4,096 input embedding table (512 rows gathered), bf16
    assert p.weight_bytes == pytest.approx((total_params - 32_000 * 4096 + 512 * 4096) * 2, rel=1e-9)
    expert_flops = 2 * 2 * one_expert * 32 * 512  # k = 2 experts per token, 32 MoE layers
    lm_head = 32_000 * 4096
    dense_flops = 2 * (12_748_853_248 - lm_head) * 512 - expert_flops + 2 * lm_head
    peak = 989e12
    ex_comp = expert_flops / (peak * 0.75 * 128 / 192)
    dense_comp = dense_flops / (peak * 0.75 * 512 / 576)
    attn = 4 * 32 * 128 * 32 * 512 * 513 / 2 / (peak * 0.75 * 512 / 576)
    assert p.compute_time_s == pytest.approx(dense_comp + ex_comp + attn, rel=1e-6)


def test_a_sliding_window_caps_each_new_tokens_attended_length_in_closed_form():
    """Mistral-7B-v0.1's 4,096-token window: 10 new tokens after 4,090 cached attend to 4,091..4,096 (six of them,
    still inside the window) and then 4,096 each (four): 6 x 4,090 + (1+...+6) + 4 x 4,096 = 24,540 + 21 + 16,384."""
    from gpuplan_core.perf.roofline import _window_capped

    assert _window_capped(4090, 10, 4096) == 24_540 + 21 + 16_384
    assert _window_capped(0, 3, 4096) == 1 + 2 + 3  # all inside: the causal triangle
    assert _window_capped(9000, 5, 4096) == 5 * 4096  # all past it: the window each
    for cached, new in [(0, 5000), (3000, 2000), (4096, 1), (100, 8192)]:
        assert _window_capped(cached, new, 4096) == sum(min(cached + i, 4096) for i in range(1, new + 1))


def test_mla_decodes_in_the_absorbed_form_and_prefills_in_the_multi_head_form():
    """DeepSeek-V3 (128 heads, latent 512, RoPE key 64, nope 128, v 128): a decoding token costs 2 x 128 x (576 + 512)
    FLOPs per attended token and layer (QK^T over the latent and its RoPE key, AV over the latent), a prompt token
    2 x 128 x (192 + 128), each summed apart; a dense model's are the same in both."""
    from gpuplan_core.perf.roofline import StepCost

    m, h200 = get_preset("DeepSeek-V3"), get_gpu("H200")
    cost = StepCost(m, h200, Workload("fp8", tp=8), PA)
    assert cost.per_pair_decode == 2 * 128 * (576 + 512) == 278_528
    assert cost.per_pair == 2 * 128 * (192 + 128) == 81_920
    _, _, attn, _, absorbed = cost._parts_sums([(4, 1000, 1, 4)])
    assert (attn, absorbed) == (0, 278_528 * 61 * (1000 + 1) * 4)  # every layer, the cached 1,000 tokens and itself
    _, _, attn, _, absorbed = cost._parts_sums([(1, 0, 100, 1)])
    assert (attn, absorbed) == (81_920 * 61 * 100 * 101 / 2, 0)
    # the absorbed form is MQA over the latent: its GEMMs have the GPU's 16 heads as rows, whatever the batch
    assert cost.abs_mfu == pytest.approx(0.75 * 16 / (16 + 64))
    assert StepCost(m, h200, Workload("fp8", ep=8), PA).abs_mfu == pytest.approx(0.75 * 128 / (128 + 64))
    dense = StepCost(L8, get_gpu("H100"), Workload(), PA)
    assert dense.per_pair_decode == dense.per_pair


def test_mla_down_projections_are_read_whole_on_every_tensor_parallel_gpu():
    """q_a_proj (7,168 x 1,536) and kv_a_proj_with_mqa (7,168 x 576) are replicated: at TP 8 each GPU reads 7/8 of
    their 61 layers' FP8 bytes beyond its 1/8 share, and multiplies them whole; at TP 1 and for a dense model
    nothing changes."""
    from gpuplan_core.perf.roofline import StepCost, replicated_params

    m, h200 = get_preset("DeepSeek-V3"), get_gpu("H200")
    assert replicated_params(m) == 7168 * (1536 + 512 + 64) * 61
    tp8, tp1 = StepCost(m, h200, Workload("fp8", tp=8), PA), StepCost(m, h200, Workload("fp8"), PA)
    assert tp8.repl_share == pytest.approx(replicated_params(m) * 7 / 8)
    assert tp1.repl_share == 0 and StepCost(L8, h200, Workload(tp=8), PA).repl_share == 0
    w8, w1 = tp8._token_terms(1)[0], tp1._token_terms(1)[0]
    assert w8 == pytest.approx(w1 / 8 + replicated_params(m) * 7 / 8)  # FP8: one byte a weight
    one = tp8.work("d", [Part(1, 100, 1, 1)], 0.0).matmul_flops
    assert one == pytest.approx(2 * (tp8.dense_params + tp8.lm_head) / 8 + 2 * replicated_params(m) * 7 / 8)


def test_an_moe_prompt_step_pays_the_host_launch_time_where_the_engine_graphs_decode_only_steps():
    """SGLang graphs decode steps only: a DeepSeek-V3 step with a prompt chunk takes at least 61 layers x 0.7 ms of
    host time (a short prompt's GPU time is below it), a decode step does not; vLLM V1 replays graphs for mixed
    steps and a dense model's prompt step is not given it."""
    from gpuplan_core.hardware.engines import prefill_graphs
    from gpuplan_core.perf.steps import StepModel

    assert [prefill_graphs("sglang", "0.5"), prefill_graphs("vllm", "0.6"), prefill_graphs("trtllm", "1.x")] == [
        False,
        False,
        False,
    ]
    assert prefill_graphs("vllm", "0.10+") and prefill_graphs("trtllm", "0.14")
    m, b200 = get_preset("DeepSeek-V3"), get_gpu("B200")
    eager = StepModel(m, b200, Workload("fp8", tp=8, eager_prefill=True), PA)
    graphed = StepModel(m, b200, Workload("fp8", tp=8), PA)
    host = 61 * PA.eager_overhead_s_per_layer
    assert graphed.step_s(0, 0, ((0, 200, 1),)) < host
    assert eager.step_s(0, 0, ((0, 200, 1),)) == pytest.approx(host + PA.prefill_overhead_s)
    assert eager.python_step_s(0, 0, ((0, 200, 1),)) == eager.step_s(0, 0, ((0, 200, 1),))
    assert eager.step_s(8, 500, ()) == graphed.step_s(8, 500, ())
    dense = StepModel(L8, get_gpu("H100"), Workload(eager_prefill=True), PA)
    assert dense.cost.prefill_host_s == 0.0


def test_a_release_lines_step_factor_scales_every_step_the_python_and_compiled_models_alike():
    """A workload's step_time_factor multiplies the whole step (kernels, all-reduces, fixed overhead): a decode step
    and a prompt chunk at 1.25 are 1.25 x theirs at 1.0, on the Python model and the compiled one, and the step's
    report puts the extra in its overhead."""
    import dataclasses

    from gpuplan_core.hardware.catalog import get_gpu
    from gpuplan_core.model.presets import get_preset
    from gpuplan_core.perf.efficiency import PerfAssumptions
    from gpuplan_core.perf.roofline import Workload
    from gpuplan_core.perf.steps import StepModel

    m, gpu, pa = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM"), PerfAssumptions()
    one = StepModel(m, gpu, Workload(), pa, "trtllm")
    more = StepModel(m, gpu, dataclasses.replace(Workload(), step_time_factor=1.25), pa, "trtllm")
    for decodes, ctx, chunks in ((8, 1000, ()), (0, 0, ((0, 467, 1),)), (4, 500, ((0, 202, 1),))):
        assert more.step_s(decodes, ctx, chunks) == pytest.approx(1.25 * one.step_s(decodes, ctx, chunks), rel=1e-12)
        assert more.python_step_s(decodes, ctx, chunks) == pytest.approx(more.step_s(decodes, ctx, chunks), rel=1e-12)
    a, b = one.step(8, 1000, ()), more.step(8, 1000, ())
    assert b.time_s == pytest.approx(1.25 * a.time_s)
    assert b.overhead_time_s == pytest.approx(a.overhead_time_s + 0.25 * a.time_s)
