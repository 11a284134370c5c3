"""model/hf_families.py: each family's spelling of its architecture in config.json, read by the readers one at a
time (KV heads, gated MLP, biases, norms, learned positions, the dialects) and, through hf_config, to the exact
published parameter counts of facebook/opt-125m, google/gemma-2b and Qwen/Qwen2-0.5B."""

import pytest

from gpuplan_core.model import hf_families as fam
from gpuplan_core.model.arch import kv_bytes_per_token, params_total
from gpuplan_core.model.hf_config import model_from_hf_config


def _get(cfg: dict):
    """hf_config's key look-up without a dialect: the first key the config gives, else the default."""

    def get(*keys, default=None):
        return next((cfg[k] for k in keys if cfg.get(k) is not None), default)

    return get


def _kv(cfg: dict, model_type: str, heads: int = 32) -> int:
    return fam._kv_heads(cfg, model_type, heads, _get(cfg))


@pytest.mark.parametrize(
    "cfg,model_type,kv",
    [
        ({"num_key_value_heads": 8}, "llama", 8),
        ({}, "llama", 32),  # no count, no multi-query: multi-head
        ({"multi_query": True}, "llama", 1),  # a generic multi-query config without a count
        ({"multi_query_attention": True}, "llama", 1),
        ({"n_kv_heads": 4}, "hf_olmo", 4),
        ({}, "falcon", 1),  # FalconConfig.multi_query defaults to true (Falcon-7B)
        ({"new_decoder_architecture": True, "num_kv_heads": 8}, "falcon", 8),
        ({"multi_query": False}, "falcon", 32),  # Falcon-RW: num_kv_heads defaults to the head count
        ({"model_type": "RefinedWeb", "n_head_kv": 8}, "falcon", 8),  # 40B's first upload: the new architecture
        ({}, "gpt_bigcode", 1),
        ({"multi_query": False}, "gpt_bigcode", 32),
        ({"attn_config": {"attn_type": "multiquery_attention"}}, "mpt", 1),
        ({"attn_config": {"attn_type": "grouped_query_attention", "kv_n_heads": 8}}, "mpt", 8),
        ({"attn_config": {}}, "mpt", 32),  # MPT's default: multi-head
        ({"attn_config": {"kv_n_heads": 8}}, "dbrx", 8),  # DBRX's default: grouped-query
        ({"multi_query_attention": True, "multi_query_group_num": 2}, "chatglm", 2),
        ({"multi_query_attention": False, "multi_query_group_num": 2}, "chatglm", 32),
    ],
)
def test_the_kv_head_count_under_each_family_s_spelling(cfg, model_type, kv):
    assert _kv(cfg, model_type) == kv


@pytest.mark.parametrize(
    "cfg,model_type,gated",
    [
        ({"hidden_act": "silu"}, "llama", True),
        ({"hidden_act": "gelu"}, "gemma", True),  # GeGLU spelled gelu
        ({"hidden_activation": "gelu_pytorch_tanh"}, "gemma2", True),
        ({"hidden_act": "relu2"}, "bitnet", True),  # BitNet gates a squared ReLU
        ({"hidden_act": "relu2"}, "nemotron", False),
        ({"hidden_act": "relu2"}, "somenewmodel", False),  # squared ReLU in an unknown family: plain
        ({"activation_function": "gelu_new"}, "somenewmodel", False),  # GPT-2-style key in an unknown family
        ({"hidden_act": "gelu"}, "opt", False),
        ({"ffn_config": {"ffn_type": "mptglu"}}, "mpt", True),
        ({"model_type": "hf_olmo", "activation_type": "swiglu"}, "hf_olmo", True),
        ({"model_type": "hf_olmo", "activation_type": "gelu"}, "hf_olmo", False),
        ({}, "somenewmodel", True),  # the Llama MLP most configs now describe
    ],
)
def test_gated_or_plain_mlp(cfg, model_type, gated):
    assert fam._mlp_gated(cfg, model_type) is gated


@pytest.mark.parametrize(
    "cfg,model_type,biases",
    [
        ({}, "llama", (False, False, False)),
        ({"attention_bias": True}, "llama", (True, True, False)),
        ({"mlp_bias": True}, "llama", (False, False, True)),
        ({}, "qwen2", (True, False, False)),  # Qwen2: q, k, v biased, o and the MLP not
        ({}, "gpt2", (True, True, True)),
        ({}, "gptj", (False, False, True)),  # attention without bias, fc_in / fc_out with
        ({"bias": True}, "falcon", (True, True, True)),
        ({}, "falcon", (False, False, False)),
        ({"no_bias": True}, "mpt", (False, False, False)),
        ({"use_bias": False}, "starcoder2", (False, False, False)),
        ({"enable_bias": False}, "opt", (False, False, False)),
        ({"add_qkv_bias": True}, "chatglm", (True, False, False)),  # ChatGLM2/3: add_bias_linear false
        ({}, "qwen", (True, False, False)),  # Qwen-1: c_attn always, no_bias true by default
        ({"no_bias": False}, "qwen", (True, True, True)),
        ({"model_type": "hf_olmo", "include_bias": True}, "hf_olmo", (True, True, True)),
    ],
)
def test_biases_as_each_family_s_modeling_code_reads_them(cfg, model_type, biases):
    assert fam._biases(cfg, model_type, _get(cfg)) == biases


@pytest.mark.parametrize(
    "cfg,model_type,norms",
    [
        ({}, "llama", 2),
        ({}, "gemma2", 4),  # pre- and post-norm around attention and MLP
        ({}, "phi", 1),  # attention and MLP read the same normed input
        ({"parallel_attn": False}, "falcon", 2),  # Falcon-RW: sequential
        ({}, "falcon", 1),  # Falcon-7B: parallel, old architecture
        ({"new_decoder_architecture": True}, "falcon", 2),  # Falcon-40B: ln_attn, ln_mlp
        ({"new_decoder_architecture": True, "num_ln_in_parallel_attn": 1}, "falcon", 1),  # Falcon-11B
    ],
)
def test_norms_per_layer(cfg, model_type, norms):
    assert fam._norms_per_layer(cfg, model_type) == norms


@pytest.mark.parametrize(
    "cfg,model_type,rows",
    [
        ({"n_positions": 1024}, "gpt2", 1024),
        ({"n_positions": 8192}, "gpt_bigcode", 8192),
        ({}, "gpt2", 1024),
        ({"max_position_embeddings": 2048}, "opt", 2050),  # OPTLearnedPositionalEmbedding's offset of 2
        ({"max_position_embeddings": 131072}, "llama", 0),  # rotary: no table
    ],
)
def test_learned_position_rows(cfg, model_type, rows):
    assert fam._learned_positions(cfg, model_type) == rows


def test_the_dialects_rename_what_a_family_spells_its_own_way():
    mpt = {"d_model": 4096, "expansion_ratio": 4, "no_bias": True, "max_seq_len": 2048, "attn_config": {"alibi": True}}
    assert fam._dialect(mpt, "mpt", "mpt") == {"intermediate_size": 16384, "norm": "rmsnorm"}  # ALiBi: no positions
    learned = {**mpt, "no_bias": False, "attn_config": {}}
    assert fam._dialect(learned, "mpt", "mpt") == {
        "intermediate_size": 16384,
        "norm": "layernorm",
        "learned_positions": 2048,
    }
    dbrx = {"ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}}
    assert fam._dialect(dbrx, "dbrx", "dbrx") == {
        "intermediate_size": 10752,
        "num_local_experts": 16,
        "num_experts_per_tok": 4,
        "norm": "rmsnorm",
    }
    assert fam._dialect({"padded_vocab_size": 65024}, "chatglm", "chatglm") == {"vocab_size": 65024, "norm": "rmsnorm"}
    assert fam._dialect({"intermediate_size": 22016}, "qwen", "qwen") == {"intermediate_size": 11008}  # fused w1+w2
    olmo = {"d_model": 4096, "mlp_ratio": 8, "embedding_size": 50304, "vocab_size": 50280, "weight_tying": False}
    assert fam._dialect({**olmo, "layer_norm_with_affine": False}, "hf_olmo", "hf_olmo") == {
        "intermediate_size": 16384,  # 8 x 4,096 fused SwiGLU width, halved
        "vocab_size": 50304,
        "tie_word_embeddings": False,
        "norms_per_layer": 0,
    }
    assert fam._dialect({"hidden_size": 4096}, "llama", "llama") == {}


def test_falcon_s_first_uploads_are_falcon_and_each_bias_family_has_layernorm():
    assert fam._FALCON_ALIASES == {"refinedwebmodel": "falcon", "refinedweb": "falcon"}
    assert fam._ALL_BIAS_FAMILIES <= fam._LAYERNORM_FAMILIES
    assert fam._sub({"attn_config": None}, "attn_config") == {} and fam._sub({"a": {"b": 1}}, "a") == {"b": 1}


# facebook/opt-125m config.json (the fields gpuplan reads)
OPT_125M = {
    "model_type": "opt",
    "hidden_size": 768,
    "ffn_dim": 3072,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "vocab_size": 50272,
    "max_position_embeddings": 2048,
    "activation_function": "relu",
    "enable_bias": True,
}


def test_opt_125m_count_is_the_published_125_239_296():
    """Per layer: 4 biased h x h attention matrices 4 x (768^2 + 768) = 2,362,368, fc1 768 x 3,072 + 3,072 =
    2,362,368, fc2 3,072 x 768 + 768 = 2,360,064, two LayerNorms 2 x 1,536; x 12 layers = 85,054,464. Tied embedding
    50,272 x 768 = 38,608,896, positions (2,048 + 2) x 768 = 1,574,400, final LayerNorm 1,536."""
    m = model_from_hf_config(OPT_125M)
    assert (m.mlp_gated, m.tied_embeddings, m.norm, m.learned_positions) == (False, True, "layernorm", 2050)
    per_layer = 4 * (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 2 * 768
    assert params_total(m) == 12 * per_layer + 50272 * 768 + 2050 * 768 + 2 * 768 == 125_239_296


def test_gemma_2b_count_is_the_published_2_506_172_416():
    """google/gemma-2b: multi-query (1 KV head of 256), GeGLU spelled gelu (gated: 3 matrices), tied embedding of
    256,000 x 2,048. Per layer q 2,048 x 2,048, k and v 2,048 x 256 each, o 2,048 x 2,048, MLP 3 x 2,048 x 16,384,
    two RMSNorms 2 x 2,048 = 110,104,576; x 18 + the embedding 524,288,000 + the final norm 2,048."""
    cfg = {
        "model_type": "gemma",
        "hidden_size": 2048,
        "intermediate_size": 16384,
        "num_attention_heads": 8,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "num_hidden_layers": 18,
        "vocab_size": 256000,
        "hidden_act": "gelu",
    }
    m = model_from_hf_config(cfg)
    assert (m.mlp_gated, m.tied_embeddings, m.norms_per_layer) == (True, True, 2)
    per_layer = 2 * 2048 * 2048 + 2 * 2048 * 256 + 3 * 2048 * 16384 + 2 * 2048
    assert params_total(m) == 18 * per_layer + 256000 * 2048 + 2048 == 2_506_172_416
    assert kv_bytes_per_token(m, 2) == 2 * 18 * 1 * 256 * 2  # 18,432 B per BF16 token


def test_qwen2_0_5b_count_is_the_published_494_032_768():
    """Qwen/Qwen2-0.5B: q, k, v biased by default (the qwen2 family), 2 KV heads of 64, tied embedding 151,936 x
    896. Per layer q 896^2 + 896, k and v 896 x 128 + 128 each, o 896^2, MLP 3 x 896 x 4,864, norms 2 x 896."""
    cfg = {
        "model_type": "qwen2",
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "num_hidden_layers": 24,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
    }
    m = model_from_hf_config(cfg)
    assert (m.qkv_bias, m.o_bias, m.mlp_bias) == (True, False, False)
    per_layer = (896 * 896 + 896) + 2 * (896 * 128 + 128) + 896 * 896 + 3 * 896 * 4864 + 2 * 896
    assert params_total(m) == 24 * per_layer + 151936 * 896 + 896 == 494_032_768
