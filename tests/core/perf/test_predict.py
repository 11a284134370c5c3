"""perf/predict.py: the static views of the step model (a batch arriving at once on an empty replica). TTFT is the
step model's prefill step, TPOT the mean decode step over the contexts the request passes through, and the rates
follow from them; the decode floor is reading the weights once per step (Llama-3.1-8B on an H100: 16.06 GB at
3,350 GB/s = 4.79 ms); the static view of one request alone is the step the serving simulation runs."""

from types import SimpleNamespace

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.arch import model_from_param_count
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.predict import (
    _decode_contexts,
    _mean_decode_time,
    compute_bound_batch,
    decode_sweep,
    predict,
    static_times,
)
from gpuplan_core.perf.roofline import Workload
from gpuplan_core.perf.steps import StepModel, step_model

L8 = get_preset("Llama-3.1-8B")
H100 = get_gpu("H100-SXM")
PA = PerfAssumptions()


def test_one_request_alone_is_one_prefill_step_then_the_mean_decode_step():
    p = predict(L8, H100, Workload(), 1, 2000, 300)
    sm = StepModel(L8, H100, Workload(), PA)
    assert p.ttft_s == sm.prefill(1, 2000).time_s
    decode = [sm.decode(1, 2000 + c).time_s for c in (0, 37, 74, 112, 149, 186, 224, 261, 298)]
    assert p.tpot_s == pytest.approx(sum(decode) / 9, rel=1e-12)


def test_decode_of_one_request_is_no_faster_than_reading_the_weights_once():
    """16,060,522,496 B of BF16 weights over 3,350 GB/s: 4.79 ms per token at least; the prompt's prefill is
    compute-bound and a decode step of one sequence memory-bound."""
    p = predict(L8, H100, Workload(), 1, 2000, 300)
    floor = 2 * 8_030_261_248 / 3.35e12
    assert floor == pytest.approx(4.794e-3, rel=1e-3)
    assert floor < p.tpot_s < 2 * floor
    assert (p.prefill.bound, p.decode.bound) == ("compute", "memory")


def test_the_rates_follow_from_ttft_and_tpot():
    """Batch 4 of 500 + 100 tokens: the last token comes at TTFT + 99 x TPOT; output tokens 4 x 100 over that."""
    p = predict(L8, H100, Workload(), 4, 500, 100)
    e2e = p.ttft_s + 99 * p.tpot_s
    assert p.e2e_request_s == pytest.approx(e2e)
    assert p.tpot_inclusive_s == pytest.approx(e2e / 100)
    assert p.output_tokens_per_s == pytest.approx(400 / e2e)
    assert p.decode_tokens_per_s == pytest.approx(4 / p.tpot_s)
    assert p.decode_tokens_per_s_per_sequence == pytest.approx(1 / p.tpot_s)
    assert p.prefill_tokens_per_s == pytest.approx(2000 / p.prefill.time_s)
    assert (p.gpu, p.gpu_count, p.batch, p.prompt_tokens, p.output_tokens) == ("H100-SXM", 1, 4, 500, 100)


def test_the_ridge_point_is_dense_peak_over_bandwidth():
    """H100 SXM: 989 TFLOP/s BF16 dense over 3.35 TB/s = 295.2 FLOP per byte (DOMAIN.md's table)."""
    p = predict(L8, H100, Workload(), 1, 100, 10)
    assert (p.peak_flops_per_s, p.bandwidth_bytes_per_s) == (989e12, 3.35e12)
    assert p.ridge_flops_per_byte == pytest.approx(989 / 3.35)
    assert (p.math_format, p.math_note) == ("bf16", None)


def test_a_gpu_without_the_format_s_tensor_cores_runs_the_matmuls_in_another_and_says_so():
    p = predict(L8, get_gpu("A100-80GB-SXM"), Workload(weights_format="fp8"), 1, 100, 10)
    assert p.math_format == "bf16"
    assert p.math_note == "A100-80GB-SXM has no FP8 tensor cores: matmuls run in BF16 (dense peak)."


@pytest.mark.parametrize("batch,prompt,output", [(0, 100, 10), (1, 0, 10), (1, 100, 0)])
def test_an_empty_request_is_refused(batch, prompt, output):
    with pytest.raises(ValueError, match="batch, input_tokens and output_tokens must be >= 1"):
        predict(L8, H100, Workload(), batch, prompt, output)


def test_the_mean_decode_step_samples_nine_contexts_exact_for_a_linear_step_time():
    """A step time linear in the context (1 us per token): over contexts 1,000 .. 1,298 (300 output tokens, 299
    steps sampled at 0, 37, 74, 112, 149, 186, 224, 261, 298 past the prompt) the mean is the middle, 1,149 us."""
    seen, reported = [], []

    def decode_s(batch, ctx, tokens_per_seq=1):  # the sampled steps' times
        seen.append(ctx)
        return ctx * 1e-6

    def decode(batch, ctx, tokens_per_seq=1):  # the one step whose report is kept
        reported.append(ctx)
        return SimpleNamespace(time_s=ctx * 1e-6)

    sm = SimpleNamespace(decode=decode, decode_s=decode_s, draft=None)
    mean, middle = _mean_decode_time(sm, 1, 1000, 300)
    assert seen == [1000, 1037, 1074, 1112, 1149, 1186, 1224, 1261, 1298] and reported == [1149]
    assert mean == pytest.approx(1149e-6) and middle.time_s == pytest.approx(1149e-6)
    seen.clear()
    mean, _ = _mean_decode_time(sm, 1, 1000, 2)  # one decode step: the prompt's
    assert seen == [1000] and mean == pytest.approx(1000e-6)


def test_speculative_decoding_divides_draft_and_verify_steps_by_the_expected_tokens():
    """k = 4 draft tokens at acceptance 0.7: (1 - 0.7^5) / (1 - 0.7) = 2.77 tokens per target step (Leviathan et
    al. 2023); TPOT = (4 draft steps + one verify step of 5 tokens) / 2.77."""
    draft = model_from_param_count(1_000_000_000)
    wl = Workload(spec_draft=draft)
    p = predict(L8, H100, wl, 1, 100, 50)
    expected = (1 - 0.7**5) / (1 - 0.7)
    sm = StepModel(L8, H100, wl, PA)
    contexts = _decode_contexts(100, 50)
    draft_t = sum(sm.draft.decode_s(1, c) for c in contexts) / len(contexts)
    verify_t = sum(sm.decode(1, c).time_s for c in contexts) / len(contexts)  # the target's pass: 5 tokens
    assert p.tpot_s == pytest.approx((4 * draft_t + verify_t) / expected, rel=1e-12)
    assert p.notes == [
        "Speculative decoding: 4 draft tokens at acceptance 0.70 give 2.77 tokens per target step (Leviathan et "
        "al. 2023); TPOT includes 4 draft steps per verify step."
    ]


def test_a_mixture_of_experts_decode_says_how_many_experts_a_batch_reads():
    """Mixtral-8x7B (8 experts, top 2) at batch 4: 8 x (1 - (1 - 2/8)^4) = 5.47 experts per layer."""
    p = predict(get_preset("Mixtral-8x7B-v0.1"), H100, Workload(tp=2), 4, 100, 10)
    assert p.moe_note.startswith("Decode reads 5.5 of 8 experts per MoE layer at batch 4 ")
    assert predict(L8, H100, Workload(), 4, 100, 10).moe_note is None


def test_the_compute_bound_batch_is_the_smallest_at_which_the_weight_matmuls_turn_compute_bound():
    b = compute_bound_batch(L8, H100, Workload(), PA)
    assert 50 < b < 1000  # near the ridge point (295 FLOP per byte: about 2 FLOP per weight per sequence)
    assert compute_bound_batch(L8, H100, Workload(), PA, limit=b) == b
    assert compute_bound_batch(L8, H100, Workload(), PA, limit=b - 1) is None  # not compute-bound one below it
    assert predict(L8, H100, Workload(), 1, 100, 10).compute_bound_batch == b
    assert predict(L8, H100, Workload(), 1, 100, 10, with_compute_bound_batch=False).compute_bound_batch is None


def test_the_decode_sweep_doubles_the_batch_up_to_the_largest_and_reads_each_step_s_rate():
    sweep = decode_sweep(L8, H100, Workload(), 2300, 100)
    assert [s.batch for s in sweep] == [1, 2, 4, 8, 16, 32, 64, 100]
    sm = StepModel(L8, H100, Workload(), PA)
    for s in sweep:
        assert s.step_time_s == sm.decode(s.batch, 2300).time_s
        assert s.tokens_per_s == pytest.approx(s.batch / s.step_time_s)
    assert sweep[0].bound == "memory" and sweep[-1].tokens_per_s > 20 * sweep[0].tokens_per_s
    assert [s.batch for s in decode_sweep(L8, H100, Workload(), 2300, 0)] == [1]


@pytest.mark.parametrize(
    "preset,gpu,wl,batch,prompt,output,engine",
    [
        ("Llama-3.1-8B", "H100-SXM", Workload(), 1, 2000, 300, "vllm"),
        ("Llama-3.1-8B", "H100-SXM", Workload(), 8, 2000, 300, "vllm"),
        ("Llama-3.1-70B", "H100-SXM", Workload(weights_format="fp8", tp=4), 16, 8000, 2, "sglang"),
        ("Mixtral-8x7B-v0.1", "A100-80GB-SXM", Workload(tp=2, prefix_cache_fraction=0.5), 4, 1000, 64, "trtllm"),
        ("Qwen2.5-7B", "L4", Workload(), 3, 500, 1, None),
        ("Llama-3.1-8B", "H100-SXM", Workload(spec_draft=model_from_param_count(1_000_000_000)), 2, 1000, 200, "vllm"),
    ],
)
def test_the_static_times_a_judgement_reads_are_predicts_float_for_float(
    preset, gpu, wl, batch, prompt, output, engine
):
    """plan/capacity.py reads ``static_times`` (no reports built): each figure equals predict's exactly."""
    m, g = get_preset(preset), get_gpu(gpu)
    full = predict(m, g, wl, batch, prompt, output, pa=PA, engine=engine)
    lean = static_times(m, g, wl, batch, prompt, output, pa=PA, engine=engine)
    assert (lean.ttft_s, lean.tpot_s, lean.e2e_request_s, lean.decode_tokens_per_s, lean.prefill_tokens_per_s) == (
        full.ttft_s,
        full.tpot_s,
        full.e2e_request_s,
        full.decode_tokens_per_s,
        full.prefill_tokens_per_s,
    )
    first = full.prefill.time_s  # the target's prefill, and a speculating replica's draft's prefill after it
    if wl.spec_draft is not None:
        first += step_model(m, g, wl, PA, engine).draft.prefill_s(batch, prompt)
    assert lean.ttft_s == first and lean.e2e_request_s == lean.ttft_s + (output - 1) * lean.tpot_s
