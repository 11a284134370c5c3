"""perf/speculative.py: tokens per verify step, a verify step's work by hand, the static view's time per token with a
draft, and DeepSeek-V3's multi-token-prediction module as a draft."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.predict import predict
from gpuplan_core.perf.replica import replica_for
from gpuplan_core.perf.roofline import StepCost, Workload, decode_phase
from gpuplan_core.perf.serving import capacity, serve
from gpuplan_core.perf.speculative import (
    MTP_ACCEPTANCE,
    draft_for,
    expected_tokens_per_verify,
    mtp_draft,
    spec_tpot_s,
    user_draft,
    with_draft,
)
from gpuplan_core.perf.steps import step_model
from gpuplan_core.perf.workload import workload_for
from gpuplan_core.scenario.deployment import RuntimeAssumptions
from gpuplan_core.scenario.parts import Formats
from gpuplan_core.scenario.scenario import Scenario

PA = PerfAssumptions()
L8 = get_preset("Llama-3.1-8B")
DSV3 = get_preset("DeepSeek-V3")


def test_expected_tokens_per_verify_by_hand():
    """1 + a + ... + a^k (Leviathan et al. 2023, eq. 1)."""
    assert expected_tokens_per_verify(4, 0.7) == pytest.approx(1 + 0.7 + 0.49 + 0.343 + 0.2401)  # 2.7731
    assert expected_tokens_per_verify(4, 0.7) == pytest.approx((1 - 0.16807) / 0.3)
    assert expected_tokens_per_verify(1, 0.85) == pytest.approx(1.85)  # DeepSeek-V3's MTP
    assert expected_tokens_per_verify(3, 1.0) == 4  # every draft accepted: k + 1
    assert expected_tokens_per_verify(4, 0.0) == 1  # none: the verify step's own token
    with pytest.raises(ValueError, match="acceptance"):
        expected_tokens_per_verify(0, 0.5)


def test_a_verify_step_of_five_tokens_by_hand():
    """Llama-3.1-8B, H100, BF16, one sequence at 1,024 tokens of context, 4 drafted tokens: the verify step runs
    5 tokens through every matmul (lm_head on all 5), attends 1,025 .. 1,029 tokens, gathers 5 embedding rows and
    writes 5 tokens of KV; at batch 1 it reads the same weights as a plain decode step, so it takes as long to
    within 0.02%."""
    v_h = 128_256 * 4096
    body = 8_030_261_248 - 2 * v_h  # less the input embedding and the lm_head
    attention = 4 * 32 * 128 * 32 * sum(1024 + i for i in range(1, 6))
    verify = decode_phase(L8, get_gpu("H100"), Workload(), 1, 1024, PA, tokens_per_seq=5)
    plain = decode_phase(L8, get_gpu("H100"), Workload(), 1, 1024, PA)
    assert verify.flops == 2 * body * 5 + 2 * v_h * 5 + attention == 77_741_465_600
    assert verify.weight_bytes == (8_030_261_248 - v_h) * 2 + 5 * 4096 * 2
    assert verify.kv_bytes == 131_072 * 1024 + 5 * 131_072
    assert verify.bound == "memory"
    assert verify.time_s == verify.overhead_time_s + verify.memory_time_s
    assert verify.time_s == pytest.approx(plain.time_s, rel=2e-4)
    assert verify.time_s == pytest.approx(7.3231e-3, rel=1e-4)


def test_static_tpot_is_draft_and_verify_steps_over_the_expected_tokens():
    """One decode context (2 output tokens): TPOT = (4 draft steps + 1 verify step of 5 tokens) / 2.7731."""
    draft = user_draft(RuntimeAssumptions(spec_draft_params=1_000_000_000, spec_tokens=4, spec_acceptance=0.7))
    wl = with_draft(Workload(), draft)
    gpu = get_gpu("H100")
    got = predict(L8, gpu, wl, 1, 1024, 2, pa=PA)
    sm = step_model(L8, gpu, wl, PA)
    draft_s = sm.draft.decode_s(1, 1024)  # the draft's own step model, plain decoding
    verify_s = sm.decode(1, 1024).time_s  # the target's pass: 5 tokens a sequence
    assert got.tpot_s == (4 * draft_s + verify_s) / expected_tokens_per_verify(4, 0.7)
    assert got.tpot_s == spec_tpot_s(draft_s, verify_s, 4, 0.7)
    assert "2.77 tokens per target step" in got.notes[0]
    plain = predict(L8, gpu, Workload(), 1, 1024, 2, pa=PA)
    assert got.tpot_s < plain.tpot_s  # batch 1: the verify step costs what a decode step does


def test_deepseek_v3_ships_one_mtp_layer_timed_as_a_one_token_draft():
    assert DSV3.mtp_layers == 1 and L8.mtp_layers == 0
    d = mtp_draft(DSV3)
    assert (d.kind, d.tokens, d.acceptance, MTP_ACCEPTANCE) == ("MTP", 1, 0.85, 0.85)
    assert d.tokens_per_verify == pytest.approx(1.85)
    assert "arXiv:2412.19437" in d.source
    # one MoE layer of the model's shape with its embedding and output head; the model's count excludes it
    assert d.arch.num_layers == 1 and d.arch.moe_layers == 1
    assert d.arch.counted_total == 13_360_651_520
    assert DSV3.counted_total == 671_026_419_200
    assert mtp_draft(L8) is None


def test_the_users_draft_comes_before_the_models_mtp():
    mine = RuntimeAssumptions(spec_draft_params=2_000_000_000, spec_tokens=3, spec_acceptance=0.6)
    assert draft_for(DSV3, mine).kind == "draft model"
    assert draft_for(DSV3, RuntimeAssumptions()).kind == "MTP"
    assert draft_for(L8, RuntimeAssumptions()) is None
    # the serving workload speculates only with a draft the user named, as before
    assert workload_for(Formats(), RuntimeAssumptions()).spec_draft is None
    assert workload_for(Formats(), mine).spec_draft == user_draft(mine).arch


def test_mtp_lowers_deepseek_v3_static_tpot_on_8_h200():
    """DeepSeek-V3 FP8, TP 8 on H200, 1,000 in / 500 out: MTP's one-layer draft and 2-token verify step give
    1.85 tokens per round; time per token falls 30% alone and 39% at batch 256 (static view; the verify step's two
    tokens a sequence attend in MLA's absorbed form, as decoding tokens do)."""
    wl = Workload(weights_format="fp8", kv_format="fp8", tp=8)
    gpu = get_gpu("H200")
    for batch, plain_ms, mtp_ms in ((1, 11.11, 7.76), (256, 77.75, 47.61)):
        plain = predict(DSV3, gpu, wl, batch, 1000, 500, pa=PA)
        mtp = predict(DSV3, gpu, with_draft(wl, mtp_draft(DSV3)), batch, 1000, 500, pa=PA)
        assert plain.tpot_s * 1e3 == pytest.approx(plain_ms, abs=0.01)
        assert mtp.tpot_s * 1e3 == pytest.approx(mtp_ms, abs=0.01)


def _spec_scenario(**spec) -> Scenario:
    return Scenario(preset="Llama-3.1-8B", input_tokens=1000, output_tokens=301, **spec)


def test_a_speculative_step_is_the_verify_step_and_k_draft_steps_by_hand():
    """Llama-3.1-8B with a 1B draft of 4 tokens, H100, roofline: one engine step of 8 sequences at 2,048 tokens
    = the target's verify step (8 x 5 tokens: roofline.decode_phase, tokens_per_seq=5) + 4 decode steps of the 1B
    draft (decode_phase of the draft's shape), compiled or not; with prompt chunks beside it, the same draft steps."""
    draft = user_draft(RuntimeAssumptions(spec_draft_params=1_000_000_000, spec_tokens=4))
    gpu, wl = get_gpu("H100"), with_draft(Workload(), draft)
    verify = decode_phase(L8, gpu, Workload(), 8, 2048, PA, tokens_per_seq=5).time_s
    draft_step = decode_phase(draft.arch, gpu, Workload(), 8, 2048, PA).time_s
    sm = step_model(L8, gpu, wl, PA)
    want = verify + 4 * draft_step
    assert sm.decode_s(8, 2048) == pytest.approx(want, rel=1e-12)
    assert sm.step_s(8, 2048, ()) == sm.python_step_s(8, 2048, ()) == sm.decode_s(8, 2048)
    assert want == pytest.approx(8.00e-3 + 4 * 2.245e-3, rel=1e-3)  # 8 x 5 tokens read the 8B weights once
    chunk = ((0, 512, 1),)
    mixed = StepCost(L8, gpu, Workload(), PA).seconds([(8, 2048, 5, 40), (1, 0, 512, 1)], PA.prefill_overhead_s)
    draft_prefill = StepCost(draft.arch, gpu, Workload(), PA).seconds([(1, 0, 512, 1)], PA.prefill_overhead_s)
    assert sm.step_s(8, 2048, chunk) == pytest.approx(mixed + 4 * draft_step + draft_prefill, rel=1e-12)
    assert sm.step_s(8, 2048, chunk) == sm.python_step_s(8, 2048, chunk)


def test_the_step_loop_at_one_user_gives_the_static_time_per_token():
    """One request alone (1,000 in, 301 out) through the step loop: 300 tokens after the first at 1 + a tokens a
    step (k = 1, a = 0.5: 1.5, so 200 steps). Its time per token is the static view's, (draft + verify step) / 1.5,
    within the loop's step-time grid (0.1%); its first token is the plain replica's (the target's prefill) and the
    draft's prefill of the same 1,000 tokens after it (the draft's StepModel.prefill_s), the static view's too."""
    spec, _ = replica_for(_spec_scenario(spec_draft_params=10**9, spec_tokens=1, spec_acceptance=0.5), "H100-SXM")
    plain, _ = replica_for(_spec_scenario(), "H100-SXM")
    got, base = serve(spec, concurrency=1), serve(plain, concurrency=1)
    static = predict(spec.m, spec.gpu, spec.wl, 1, 1000, 301, pa=PA, engine=spec.engine)
    assert got.tpot_mean_s == pytest.approx(static.tpot_s, rel=1e-3)
    assert 1 / got.tpot_mean_s == pytest.approx(static.decode_tokens_per_s_per_sequence, rel=1e-3)
    sm = step_model(spec.m, spec.gpu, spec.wl, PA, spec.engine)
    draft_prefill_s = sm.draft.prefill_s(1, 1000)
    assert got.ttft_mean_s == pytest.approx(base.ttft_mean_s + draft_prefill_s, rel=1e-12)
    assert static.ttft_s == sm.prefill_s(1, 1000) + draft_prefill_s
    assert draft_prefill_s * 1e3 == pytest.approx(5.11, abs=0.01)  # a 1B draft's 1,000 tokens and its step overhead
    assert sm.per_step == 1.5 and sm.width == 2
    assert got.tpot_mean_s == pytest.approx(sm.decode_s(1, 1150) / 1.5, rel=2e-3)  # the mean step, mid-context
    assert got.tpot_mean_s < base.tpot_mean_s  # at one user a verify step costs about a decode step
    assert any("1.50 tokens per target step" in n for n in got.notes)


def test_acceptance_zero_is_no_faster_than_plain_decoding_plus_the_draft():
    """At acceptance 0 each step writes one token: time per token = verify step + k draft steps, no less than a
    plain decode step and the draft's cost together (and so slower than plain decoding), under load too."""
    spec, _ = replica_for(_spec_scenario(spec_draft_params=10**9, spec_tokens=4, spec_acceptance=0.0), "H100-SXM")
    plain, _ = replica_for(_spec_scenario(), "H100-SXM")
    sm = step_model(spec.m, spec.gpu, spec.wl, PA, spec.engine)
    draft_s = sum(sm.draft.decode_s(1, c) for c in range(1000, 1301, 30)) / 11
    got, base = serve(spec, concurrency=1), serve(plain, concurrency=1)
    assert got.tpot_mean_s >= base.tpot_mean_s + 4 * draft_s * (1 - 1e-3)
    assert got.tpot_mean_s == pytest.approx(sm.decode_s(1, 1150), rel=2e-3)
    assert capacity(spec) < capacity(plain)


def test_speculation_under_load_runs_in_the_step_loop():
    """Under load the loop's steps are the speculating replica's: fewer steps than a plain replica's for the same
    requests, each writing 2.77 tokens a sequence (k = 4, a = 0.7). Llama-3.1-8B on an H100, 1,000 in / 301 out:
    time per token 5.5 ms against 6.9 at one user, 13.2 against 14.3 at 64 (steps with prompt chunks carry the
    draft's pass over them); at 256 users the verify steps' 5 tokens a sequence and the draft's steps cost more than
    the tokens they save (39.8 against 34.5 ms, and less throughput). The draft's weights and KV cache leave room
    for 213 sequences of 1,301 tokens where plain decoding has 332 (memory/inference.py), so at 256 users requests
    queue for a slot: first token 2.15 s against 0.99."""
    spec, _ = replica_for(_spec_scenario(spec_draft_params=10**9), "H100-SXM")
    plain, _ = replica_for(_spec_scenario(), "H100-SXM")
    assert (spec.kv_sequences, plain.kv_sequences) == (213, 332)
    for users, spec_ms, plain_ms in ((1, 5.49, 6.88), (64, 13.22, 14.26), (256, 39.79, 34.53)):
        got, base = serve(spec, concurrency=users), serve(plain, concurrency=users)
        assert (got.tpot_mean_s * 1e3, base.tpot_mean_s * 1e3) == pytest.approx((spec_ms, plain_ms), abs=0.01)
    assert got.output_tokens_per_s < base.output_tokens_per_s
    assert (got.ttft_mean_s, base.ttft_mean_s) == pytest.approx((2.153, 0.994), abs=1e-3)


def _dsv3(mtp: str) -> Scenario:
    return Scenario(
        preset="DeepSeek-V3",
        weights_format="fp8",
        kv_format="fp8",
        tp=8,
        gpus=8,
        gpu="H200",
        input_tokens=1000,
        output_tokens=301,
        spec_mtp=mtp,
    )


def test_a_replica_runs_the_models_mtp_module_where_spec_mtp_is_set():
    """``spec_mtp`` "on": the workload speculates with the model's MTP module (k = 1 MTP layer, acceptance 0.85,
    the DeepSeek-V3 report's low end); "weigh" or "off", or a model without MTP: plain; a named draft model first."""
    mtp = RuntimeAssumptions(spec_mtp="on")
    assert workload_for(Formats(), mtp, m=DSV3).spec_draft == mtp_draft(DSV3).arch
    assert workload_for(Formats(), mtp, m=DSV3).spec_tokens == 1
    assert workload_for(Formats(), mtp, m=DSV3).spec_acceptance == MTP_ACCEPTANCE
    assert workload_for(Formats(), RuntimeAssumptions(), m=DSV3).spec_draft is None
    assert workload_for(Formats(), RuntimeAssumptions(spec_mtp="off"), m=DSV3).spec_draft is None
    assert workload_for(Formats(), mtp, m=L8).spec_draft is None
    mine = RuntimeAssumptions(spec_draft_params=2_000_000_000, spec_mtp="on")
    assert workload_for(Formats(), mine, m=DSV3).spec_draft == user_draft(mine).arch


def test_the_step_loop_runs_deepseek_v3_mtp_at_one_user():
    """DeepSeek-V3 FP8, TP 8 on H200, 1,000 in / 301 out, one user, the MTP module as the draft: each step is one
    MTP-layer step and a 2-token verify step of the model, writing 1 + 0.85 = 1.85 tokens, so the 300 tokens after
    the first take ceil(300 / 1.85) = 163 steps and the time per token is the static view's (7.76 ms) x 163 x 1.85
    / 300 = 7.80 ms (its last step writes what is left) against 11.11 decoding plainly; the first token adds the
    MTP layer's prefill of the 1,000 tokens (4.42 ms) to the model's. The MTP layer's weights and KV leave 971
    sequences of 1,301 tokens where plain decoding holds 1,018."""
    spec, _ = replica_for(_dsv3("on"))
    plain, _ = replica_for(_dsv3("weigh"))
    sm = step_model(spec.m, spec.gpu, spec.wl, PA, spec.engine)
    assert (sm.per_step, sm.width) == (pytest.approx(1.85), 2) and plain.wl.spec_draft is None
    assert (spec.kv_sequences, plain.kv_sequences) == (971, 1018)
    got, base = serve(spec, concurrency=1), serve(plain, concurrency=1)
    static = predict(spec.m, spec.gpu, spec.wl, 1, 1000, 301, pa=PA, engine=spec.engine)
    assert static.tpot_s * 1e3 == pytest.approx(7.76, abs=0.01)
    assert got.tpot_mean_s == pytest.approx(static.tpot_s * 163 * 1.85 / 300, rel=2e-3)
    assert (got.tpot_mean_s * 1e3, base.tpot_mean_s * 1e3) == pytest.approx((7.80, 11.11), abs=0.01)
    mtp_prefill_s = sm.draft.prefill_s(1, 1000)
    assert mtp_prefill_s * 1e3 == pytest.approx(4.42, abs=0.01)
    assert got.ttft_mean_s == pytest.approx(base.ttft_mean_s + mtp_prefill_s, rel=1e-9)
