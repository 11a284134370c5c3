"""perf/speculative.py: tokens per verify step, a verify step's work by hand, the static view's time per token with a
draft, and DeepSeek-V3's multi-token-prediction module as a draft."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.predict import predict
from gpuplan_core.perf.roofline import Workload, decode_phase
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
    draft_s = step_model(draft.arch, gpu, wl, PA).decode_s(1, 1024)
    verify_s = step_model(L8, gpu, wl, PA).decode_s(1, 1024, 5)
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
