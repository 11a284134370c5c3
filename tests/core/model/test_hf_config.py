"""Hugging Face configs read as the models are: each family's spelling of the KV-head count, plain vs gated MLPs,
biases and norms. Every count is written out by hand (formula in the test) and, where one is published, equal to it."""

import json

import pytest

from gpuplan_core.model.arch import kv_bytes_per_token, params_active, params_total
from gpuplan_core.model.hf_config import model_from_hf_config
from tests.configs import LLAMA_3_1_8B_CONFIG

# tiiuae/falcon-7b config.json (the fields gpuplan reads): 6,921,720,704 parameters on the model card / safetensors.
# It says nothing about tying: FalconForCausalLM ties lm_head to the word embeddings.
FALCON_7B = {
    "architectures": ["FalconForCausalLM"],
    "model_type": "falcon",
    "hidden_size": 4544,
    "num_attention_heads": 71,
    "num_hidden_layers": 32,
    "multi_query": True,
    "new_decoder_architecture": False,
    "parallel_attn": True,
    "bias": False,
    "vocab_size": 65024,
}
# tiiuae/falcon-40b config.json
FALCON_40B = {
    "model_type": "falcon",
    "hidden_size": 8192,
    "num_attention_heads": 128,
    "num_hidden_layers": 60,
    "num_kv_heads": 8,
    "new_decoder_architecture": True,
    "parallel_attn": True,
    "bias": False,
    "vocab_size": 65024,
}
# 40B by hand: fused QKV h x (h + 2 x 8 x 64), dense h x h, MLP 2 x h x 4h, ln_attn and ln_mlp 2 x 2h; tied embedding
FALCON_40B_PARAMS = 60 * (8192 * (8192 + 1024) + 8192**2 + 2 * 8192 * 32768 + 4 * 8192) + 65024 * 8192 + 2 * 8192


def test_falcon_7b_multi_query_is_one_kv_head_and_its_count_is_exact():
    """multi_query: true was read as 71 KV heads (8.5B parameters). By hand, per layer: fused QKV h x (h + 2 x 64)
    = 21,229,568, dense h x h = 20,647,936, MLP 2 x h x 4h = 165,183,488, one LayerNorm 2h = 9,088; x 32 layers,
    + the tied embedding 65,024 x 4,544 = 295,469,056 and the final LayerNorm 9,088."""
    m = model_from_hf_config(json.dumps(FALCON_7B))
    assert (m.num_kv_heads, m.norms_per_layer, m.mlp_gated, m.tied_embeddings) == (1, 1, False, True)
    per_layer = 4544 * (4544 + 2 * 64) + 4544 * 4544 + 2 * 4544 * 18176 + 2 * 4544
    assert params_total(m) == 32 * per_layer + 65024 * 4544 + 2 * 4544 == 6_921_720_704
    assert kv_bytes_per_token(m, 2) == 2 * 32 * 1 * 64 * 2  # K and V, one head of 64, 32 layers, BF16: 8,192 B


def test_falcon_7b_multi_query_is_the_default_when_the_config_leaves_it_out():
    """FalconConfig's multi_query defaults to true: a config without the key still has one K/V head."""
    cfg = {k: v for k, v in FALCON_7B.items() if k != "multi_query"}
    assert model_from_hf_config(cfg).num_kv_heads == 1


def test_falcon_7b_refinedwebmodel_spelling_n_head_n_layer():
    """The first falcon-7b upload (configuration_RW.py): model_type RefinedWebModel, n_head, n_layer."""
    cfg = {k: v for k, v in FALCON_7B.items() if k not in ("num_attention_heads", "num_hidden_layers")}
    cfg.update(model_type="RefinedWebModel", n_head=71, n_layer=32)
    assert params_total(model_from_hf_config(cfg)) == 6_921_720_704


def test_falcon_40b_new_architecture_reads_num_kv_heads():
    """41.3B parameters; num_kv_heads 8 wins over multi_query with the new decoder architecture."""
    m = model_from_hf_config({**FALCON_40B, "multi_query": True})
    assert (m.num_kv_heads, m.norms_per_layer) == (8, 2)
    assert params_total(m) == FALCON_40B_PARAMS == 41_303_293_952


def test_falcon_40b_refinedweb_spelling_n_head_kv():
    """The first falcon-40b upload: model_type RefinedWeb (the new decoder architecture) and n_head_kv."""
    cfg = {
        "model_type": "RefinedWeb",
        "hidden_size": 8192,
        "n_head": 128,
        "n_head_kv": 8,
        "n_layer": 60,
        "parallel_attn": True,
        "bias": False,
        "vocab_size": 65024,
    }
    m = model_from_hf_config(cfg)
    assert (m.num_kv_heads, m.norms_per_layer, params_total(m)) == (8, 2, FALCON_40B_PARAMS)


def test_falcon_rw_1b_sequential_with_biases_and_every_head_keyed():
    """tiiuae/falcon-rw-1b: multi_query false (32 K/V heads), parallel_attn false (two LayerNorms), bias true
    (fused QKV, dense and both MLP matrices), ALiBi (no position table). By hand, 1,311,625,216."""
    cfg = {
        "model_type": "falcon",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_hidden_layers": 24,
        "multi_query": False,
        "parallel_attn": False,
        "bias": True,
        "alibi": True,
        "vocab_size": 50304,
    }
    m = model_from_hf_config(cfg)
    assert (m.num_kv_heads, m.norms_per_layer) == (32, 2)
    h = 2048
    per_layer = (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
    assert params_total(m) == 24 * per_layer + 50304 * h + 2 * h == 1_311_625_216


def test_falcon_11b_one_norm_in_parallel_and_ffn_hidden_size():
    """tiiuae/falcon-11B: the new architecture with num_ln_in_parallel_attn 1 and ffn_hidden_size 16,384."""
    cfg = {
        **FALCON_40B,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_hidden_layers": 60,
        "num_ln_in_parallel_attn": 1,
        "ffn_hidden_size": 16384,
        "activation": "gelu",
    }
    m = model_from_hf_config(cfg)
    assert (m.num_kv_heads, m.norms_per_layer, m.intermediate_size, m.mlp_gated) == (8, 1, 16384, False)


# mosaicml/mpt-7b config.json: MPT's own names, attn_config nested, no_bias, ALiBi (learned_pos_emb is switched off)
MPT_7B = {
    "model_type": "mpt",
    "d_model": 4096,
    "n_heads": 32,
    "n_layers": 32,
    "expansion_ratio": 4,
    "max_seq_len": 2048,
    "vocab_size": 50432,
    "no_bias": True,
    "learned_pos_emb": True,
    "norm_type": "low_precision_layernorm",
    "attn_config": {"alibi": True, "attn_type": "multihead_attention", "qk_ln": False, "clip_qkv": None},
}


def test_mpt_7b_d_model_expansion_ratio_no_bias():
    """6,649,286,656 (safetensors). Per layer: Wqkv h x 3h, out_proj h x h, up 4h x h, down h x 4h, two bias-free
    LayerNorms h each; the output layer is wte (tied); ALiBi, so no position table."""
    m = model_from_hf_config(MPT_7B)
    assert (m.num_kv_heads, m.intermediate_size, m.mlp_gated, m.qkv_bias, m.mlp_bias) == (32, 16384, False, 0, 0)
    h = 4096
    per_layer = 3 * h * h + h * h + 2 * h * 4 * h + 2 * h
    assert params_total(m) == 32 * per_layer + 50432 * h + h == 6_649_286_656
    assert m.max_context_tokens == 2048


def test_mpt_30b():
    """mosaicml/mpt-30b: d_model 7,168, 64 heads, 48 layers, 8k context; 29.95B on the model card."""
    cfg = {**MPT_7B, "d_model": 7168, "n_heads": 64, "n_layers": 48, "max_seq_len": 8192}
    h = 7168
    assert params_total(model_from_hf_config(cfg)) == 48 * (4 * h * h + 8 * h * h + 2 * h) + 50432 * h + h
    assert params_total(model_from_hf_config(cfg)) == 29_957_200_896


@pytest.mark.parametrize(
    "attn,kv",
    [({"attn_type": "multiquery_attention"}, 1), ({"attn_type": "grouped_query_attention", "kv_n_heads": 8}, 8)],
)
def test_mpt_attn_config_attn_type_and_kv_n_heads(attn, kv):
    """llm-foundry's attn_config: multiquery_attention is one K/V head, grouped_query_attention reads kv_n_heads."""
    assert model_from_hf_config({**MPT_7B, "attn_config": {**MPT_7B["attn_config"], **attn}}).num_kv_heads == kv


def test_mpt_gated_ffn_biases_and_learned_positions():
    """ffn_config.ffn_type mptglu is gated; no_bias false keeps every bias (LayerNorms 2h); without ALiBi or RoPE
    learned_pos_emb adds a max_seq_len x h table."""
    cfg = {**MPT_7B, "no_bias": False, "attn_config": {"alibi": False}, "ffn_config": {"ffn_type": "mptglu"}}
    m = model_from_hf_config(cfg)
    assert (m.mlp_gated, m.qkv_bias, m.o_bias, m.mlp_bias, m.norm, m.learned_positions) == (
        True,
        True,
        True,
        True,
        "layernorm",
        2048,
    )


def test_dbrx_nested_kv_n_heads_and_experts():
    """databricks/dbrx-base: attn_config.kv_n_heads 8, ffn_config 16 experts of 10,752, top 4; bias-free LayerNorms
    (h each); untied. Published: 132B total, 36B active. Per layer: Wqkv h x (h + 2 x 8 x 128), out h x h, each
    expert 3 x h x 10,752, router h x 16, two norms h."""
    cfg = {
        "model_type": "dbrx",
        "d_model": 6144,
        "n_heads": 48,
        "n_layers": 40,
        "max_seq_len": 32768,
        "vocab_size": 100352,
        "tie_word_embeddings": False,
        "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
        "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4, "ffn_act_fn": {"name": "silu"}},
    }
    m = model_from_hf_config(cfg)
    h, expert = 6144, 3 * 6144 * 10752
    common = h * (h + 2048) + h * h + h * 16 + 2 * h
    outside = 2 * 100352 * h + h
    assert m.num_kv_heads == 8
    assert params_total(m) == 40 * (common + 16 * expert) + outside == 131_596_523_520
    assert params_active(m) == 40 * (common + 4 * expert) + outside == 36_469_708_800


# bigcode/starcoder config.json
STARCODER = {
    "model_type": "gpt_bigcode",
    "n_embd": 6144,
    "n_head": 48,
    "n_layer": 40,
    "n_inner": 24576,
    "n_positions": 8192,
    "vocab_size": 49152,
    "multi_query": True,
    "activation_function": "gelu_pytorch_tanh",
}


def test_starcoder_gpt_bigcode_multi_query_n_inner():
    """StarCoder (15.5B): one K/V head of 128; every linear layer biased; two LayerNorms; learned positions (wpe
    8,192 x h); lm_head tied to wte. Per layer: c_attn h x (h + 2 x 128) + bias, c_proj h x h + h, c_fc h x n_inner
    + n_inner, c_proj n_inner x h + h, LayerNorms 2 x 2h."""
    m = model_from_hf_config(STARCODER)
    assert (m.num_kv_heads, m.mlp_gated, m.learned_positions) == (1, False, 8192)
    h, i = 6144, 24576
    per_layer = h * (h + 256) + (h + 256) + h * h + h + h * i + i + i * h + h + 4 * h
    assert params_total(m) == 40 * per_layer + 49152 * h + 8192 * h + 2 * h == 15_517_456_384
    assert kv_bytes_per_token(m, 2) == 2 * 40 * 1 * 128 * 2
    assert model_from_hf_config({**STARCODER, "multi_query": False}).num_kv_heads == 48


def test_gpt2_biases_layernorm_and_positions():
    """openai-community/gpt2: 124,439,808 parameters (the published count): n_inner null is 4h."""
    cfg = {
        "model_type": "gpt2",
        "n_embd": 768,
        "n_head": 12,
        "n_layer": 12,
        "n_positions": 1024,
        "vocab_size": 50257,
        "n_inner": None,
        "activation_function": "gelu_new",
    }
    h = 768
    per_layer = (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 4 * h
    assert params_total(model_from_hf_config(cfg)) == 12 * per_layer + 50257 * h + 1024 * h + 2 * h == 124_439_808


# Nemotron-4-15B as transformers' NemotronConfig describes it (its defaults are this model) with its 8 KV heads
NEMOTRON_4_15B = {
    "model_type": "nemotron",
    "hidden_size": 6144,
    "intermediate_size": 24576,
    "num_hidden_layers": 32,
    "num_attention_heads": 48,
    "num_key_value_heads": 8,
    "hidden_act": "relu2",
    "vocab_size": 256000,
    "tie_word_embeddings": False,
    "partial_rotary_factor": 0.5,
}


def test_nemotron_squared_relu_mlp_is_not_gated():
    """NemotronMLP is up_proj -> relu2 -> down_proj: counted gated it was 20.5B; it is 15.6B. LayerNorm1P has a
    weight and a bias (2h). Per layer: q and o h x h, k and v h x 8 x 128, MLP 2 x h x I, two norms 2 x 2h."""
    m = model_from_hf_config(NEMOTRON_4_15B)
    assert (m.mlp_gated, m.norm) == (False, "layernorm")
    h, i = 6144, 24576
    per_layer = 2 * h * h + 2 * h * 1024 + 2 * h * i + 4 * h
    assert params_total(m) == 32 * per_layer + 2 * 256000 * h + 2 * h == 15_628_775_424


@pytest.mark.parametrize(
    "cfg,gated",
    [
        ({**LLAMA_3_1_8B_CONFIG, "model_type": "custom_llm", "hidden_act": "relu2"}, False),  # squared ReLU, unknown
        ({**LLAMA_3_1_8B_CONFIG, "model_type": "bitnet", "hidden_act": "relu2"}, True),  # BitNet gates its relu2
        ({**LLAMA_3_1_8B_CONFIG, "model_type": "arcee", "hidden_act": "relu2"}, False),  # ArceeMLP: up, down
        ({**LLAMA_3_1_8B_CONFIG, "model_type": "gemma", "hidden_act": "gelu_pytorch_tanh"}, True),  # GeGLU
        ({**LLAMA_3_1_8B_CONFIG, "model_type": "custom_gpt", "activation_function": "gelu_new"}, False),
        ({**LLAMA_3_1_8B_CONFIG, "model_type": "jais", "activation_function": "swiglu"}, True),
        (LLAMA_3_1_8B_CONFIG, True),
    ],
)
def test_gating_follows_the_mlp_the_family_runs(cfg, gated):
    assert model_from_hf_config(cfg).mlp_gated is gated


def test_chatglm2_multi_query_group_num():
    """THUDM/chatglm2-6b: 6,243,584,000 parameters (the published count). multi_query_group_num 2 K/V heads,
    padded_vocab_size, ffn_hidden_size 13,696 (SwiGLU: dense_h_to_4h is 2 x 13,696 wide), add_qkv_bias only,
    RMSNorm, untied output_layer."""
    cfg = {
        "model_type": "chatglm",
        "num_layers": 28,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "kv_channels": 128,
        "multi_query_attention": True,
        "multi_query_group_num": 2,
        "ffn_hidden_size": 13696,
        "padded_vocab_size": 65024,
        "seq_length": 32768,
        "add_qkv_bias": True,
        "add_bias_linear": False,
        "rmsnorm": True,
    }
    m = model_from_hf_config(cfg)
    assert (m.num_kv_heads, m.mlp_gated, m.max_context_tokens) == (2, True, 32768)
    h, i = 4096, 13696
    per_layer = h * (h + 2 * 2 * 128) + (h + 512) + h * h + 3 * h * i + 2 * h
    assert params_total(m) == 28 * per_layer + 2 * 65024 * h + h == 6_243_584_000


def test_qwen_1_fused_intermediate_size():
    """Qwen/Qwen-7B: 7,721,324,544 parameters (the published count). intermediate_size 22,016 is w1 and w2
    together (11,008 each); c_attn has a bias, no_bias drops c_proj's and the MLP's."""
    cfg = {
        "model_type": "qwen",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "intermediate_size": 22016,
        "kv_channels": 128,
        "vocab_size": 151936,
        "seq_length": 8192,
        "no_bias": True,
        "tie_word_embeddings": False,
    }
    h, i = 4096, 11008
    per_layer = 3 * h * h + 3 * h + h * h + 3 * h * i + 2 * h
    assert params_total(model_from_hf_config(cfg)) == 32 * per_layer + 2 * 151936 * h + h == 7_721_324_544


def test_olmo_1_n_kv_heads_mlp_hidden_size():
    """allenai/OLMo-7B (hf_olmo): 6,888,095,744 parameters published; gpuplan counts one final norm more (4,096:
    OLMo-1's LayerNorm has no parameters, and ModelArch always holds a final norm). n_kv_heads null is every head;
    mlp_hidden_size 22,016 is the fused SwiGLU width (11,008 each); embedding_size is the padded table."""
    cfg = {
        "model_type": "hf_olmo",
        "d_model": 4096,
        "n_heads": 32,
        "n_kv_heads": None,
        "n_layers": 32,
        "mlp_ratio": 8,
        "mlp_hidden_size": 22016,
        "activation_type": "swiglu",
        "vocab_size": 50280,
        "embedding_size": 50304,
        "weight_tying": False,
        "include_bias": False,
        "layer_norm_type": "default",
        "layer_norm_with_affine": False,
        "multi_query_attention": False,
        "max_sequence_length": 2048,
    }
    m = model_from_hf_config(cfg)
    assert (m.num_kv_heads, m.intermediate_size, m.norms_per_layer) == (32, 11008, 0)
    h = 4096
    published = 32 * (4 * h * h + 3 * h * 11008) + 2 * 50304 * h
    assert published == 6_888_095_744 and params_total(m) == published + h
    assert model_from_hf_config({**cfg, "n_kv_heads": 8}).num_kv_heads == 8
    assert model_from_hf_config({**cfg, "multi_query_attention": True}).num_kv_heads == 1


def test_phi_2_parallel_block_biases_layernorm():
    """microsoft/phi-2: 2,779,683,840 published; one LayerNorm per layer (attention and MLP in parallel), every
    linear layer biased; ModelArch has no lm_head bias, so the count is 51,200 (the vocabulary) short of it."""
    cfg = {
        "model_type": "phi",
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "vocab_size": 51200,
        "hidden_act": "gelu_new",
        "tie_word_embeddings": False,
    }
    h, i = 2560, 10240
    per_layer = 4 * (h * h + h) + (h * i + i) + (i * h + h) + 2 * h
    assert params_total(model_from_hf_config(cfg)) == 32 * per_layer + 2 * 51200 * h + 2 * h
    assert params_total(model_from_hf_config(cfg)) + 51200 == 2_779_683_840


def test_generic_multi_query_without_a_count_is_one_head():
    assert (
        model_from_hf_config({**LLAMA_3_1_8B_CONFIG, "num_key_value_heads": None, "multi_query": True}).num_kv_heads
        == 1
    )
