"""Exact parameter and KV-cache counts against published configs (integers, not approximations)."""

import json

import pytest
from pydantic import ValidationError

from gpuplan_core.model.arch import (
    ModelArch,
    check_tp,
    kv_bytes_per_token,
    kv_cache_bytes,
    model_from_param_count,
    params_active,
    params_total,
    valid_tp_degrees,
)
from gpuplan_core.model.hf_config import HFConfigError, model_from_hf_config
from gpuplan_core.model.presets import get_preset
from tests.configs import LLAMA_3_1_8B_CONFIG

PARAMS = [
    ("Llama-3.1-8B", 8_030_261_248, 8_030_261_248),
    ("Llama-3.1-70B", 70_553_706_496, 70_553_706_496),
    ("Llama-3.1-405B", 405_853_388_800, 405_853_388_800),
    ("Qwen2.5-7B", 7_615_616_512, 7_615_616_512),
    ("Qwen2.5-72B", 72_706_203_648, 72_706_203_648),
    ("Mixtral-8x7B-v0.1", 46_702_792_704, 12_879_925_248),
    ("Gemma-2-9B", 9_241_705_984, 9_241_705_984),
    ("Mistral-7B-v0.1", 7_241_732_096, 7_241_732_096),
    ("Phi-3-mini-4k", 3_821_079_552, 3_821_079_552),
    ("DeepSeek-V3", 671_026_419_200, None),
    ("GPT-3-175B", 174_604_259_328, 174_604_259_328),
    # Llama-2-13B (the published 13,015,864,320): 2 x 32,000 x 5,120 embeddings and head
    # + 40 x (4 x 5,120^2 + 3 x 5,120 x 13,824 + 2 x 5,120) + 5,120
    ("Llama-2-13B", 13_015_864_320, 13_015_864_320),
]


@pytest.mark.parametrize("name,total,active", PARAMS)
def test_param_counts_match_published_configs(name, total, active):
    m = get_preset(name)
    assert params_total(m) == total
    if active is not None:
        assert params_active(m) == active


def test_deepseek_v3_active_params_near_published_37b():
    # README: 37B activated; README_WEIGHTS: 36.7B excluding embedding and head (0.9B each)
    active = params_active(get_preset("DeepSeek-V3"))
    assert 36.5e9 < active < 38e9


@pytest.mark.parametrize(
    "name,kv",
    [
        ("Llama-3.1-8B", 131_072),  # 2 x 32 layers x 8 heads x 128 x 2 bytes
        ("Llama-3.1-70B", 327_680),
        ("Qwen2.5-7B", 57_344),
        ("Phi-3-mini-4k", 393_216),
        ("DeepSeek-V3", 70_272),  # MLA: 61 x (512 + 64) x 2 bytes
    ],
)
def test_kv_bytes_per_token_bf16(name, kv):
    assert kv_bytes_per_token(get_preset(name), 2.0) == kv


def test_kv_formula_by_hand():
    m = get_preset("Llama-3.1-8B")
    # 8,192 tokens x 131,072 B = exactly 1 GiB
    assert kv_cache_bytes(m, 2.0, 8192, 1) == 2**30
    assert kv_cache_bytes(m, 1.0, 8192, 3) == 3 * 2**29
    # TP 2 splits the 8 KV heads: half per rank; TP 16 cannot go below one head per rank
    assert kv_cache_bytes(m, 2.0, 8192, 1, tp=2) == 2**29
    assert kv_bytes_per_token(m, 2.0, tp=16) == 2 * 32 * 1 * 128 * 2


def test_sliding_window_caps_kv():
    g = get_preset("Gemma-2-9B")
    per_layer = 2 * 8 * 256 * 2
    # 8,192 tokens: 21 global layers hold all, 21 local layers hold the 4,096-token window
    assert kv_cache_bytes(g, 2.0, 8192, 1) == per_layer * (21 * 8192 + 21 * 4096)
    mistral = get_preset("Mistral-7B-v0.1")
    assert kv_cache_bytes(mistral, 2.0, 32768, 1) == kv_cache_bytes(mistral, 2.0, 4096, 1)


def test_mla_kv_not_split_by_tp():
    d = get_preset("DeepSeek-V3")
    assert kv_bytes_per_token(d, 2.0, tp=8) == 70_272


def test_tp_validation():
    m = get_preset("Llama-3.1-8B")
    assert valid_tp_degrees(m, 64) == [1, 2, 4, 8, 16, 32]
    with pytest.raises(ValueError, match="tp: 64 is larger"):
        check_tp(m, 64)
    with pytest.raises(ValueError, match="tp: 3"):
        check_tp(m, 3)


def test_bad_architectures_name_the_field():
    base = dict(
        name="x",
        num_layers=2,
        hidden_size=100,
        num_attention_heads=3,
        num_kv_heads=3,
        intermediate_size=10,
        vocab_size=10,
    )
    with pytest.raises(ValidationError, match="head_dim"):
        ModelArch(**base)  # 100 is not divisible by 3 and no head_dim
    ModelArch(**{**base, "head_dim": 32})  # explicit head_dim is fine
    with pytest.raises(ValidationError, match="num_kv_heads"):
        ModelArch(**{**base, "hidden_size": 96, "num_kv_heads": 2})
    with pytest.raises(ValidationError, match="num_layers"):
        ModelArch(**{**base, "hidden_size": 96, "num_layers": 0})
    with pytest.raises(ValidationError, match="hidden_size"):
        ModelArch(**{**base, "hidden_size": -96})


def test_param_count_model_is_exact_and_approximate():
    m = model_from_param_count(7_000_000_000)
    assert params_total(m) == 7_000_000_000
    assert m.approximate
    assert m.num_attention_heads % m.num_kv_heads == 0
    with pytest.raises(ValueError, match="params"):
        model_from_param_count(5)


LLAMA_CONFIG = LLAMA_3_1_8B_CONFIG


def test_hf_config_llama_matches_preset():
    m = model_from_hf_config(json.dumps(LLAMA_CONFIG))
    assert params_total(m) == 8_030_261_248
    assert kv_bytes_per_token(m, 2.0) == 131_072


def test_hf_config_nested_text_config_and_head_dim():
    gemma = {
        "model_type": "gemma2",
        "hidden_size": 3584,
        "intermediate_size": 14336,
        "num_attention_heads": 16,
        "num_hidden_layers": 42,
        "num_key_value_heads": 8,
        "head_dim": 256,
        "vocab_size": 256000,
        "sliding_window": 4096,
    }
    m = model_from_hf_config({"model_type": "paligemma", "text_config": gemma})
    assert params_total(m) == 9_241_705_984
    assert m.sliding_window_layers == 21


def test_hf_config_moe_and_mla():
    mixtral = {
        **LLAMA_CONFIG,
        "model_type": "mixtral",
        "vocab_size": 32000,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "max_position_embeddings": 32768,
    }
    m = model_from_hf_config(mixtral)
    assert (params_total(m), params_active(m)) == (46_702_792_704, 12_879_925_248)
    ds = {
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "num_hidden_layers": 61,
        "vocab_size": 129280,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 3,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "tie_word_embeddings": False,
        "num_nextn_predict_layers": 1,
    }
    d = model_from_hf_config(ds)
    assert params_total(d) == 671_026_419_200  # the MTP layer is not counted
    assert d.mtp_layers == 1 and model_from_hf_config(mixtral).mtp_layers == 0
    assert kv_bytes_per_token(d, 2.0) == 70_272


@pytest.mark.parametrize(
    "text,match",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        (json.dumps({"hidden_size": 4096}), "num_hidden_layers"),
        (json.dumps({**LLAMA_CONFIG, "num_key_value_heads": 5}), "num_kv_heads"),
        (json.dumps({**LLAMA_CONFIG, "hidden_size": -1}), "hidden_size"),
    ],
)
def test_hf_config_errors_are_clear(text, match):
    with pytest.raises(HFConfigError, match=match):
        model_from_hf_config(text)
