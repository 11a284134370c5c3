"""How each model family's config.json says what its architecture is: the families whose MLP has no gate, whose
layers carry biases or LayerNorm, tie their embeddings, or name their fields differently (read from each family's
modeling code in Hugging Face transformers or vLLM), and the readers hf_config.py applies to a config."""

from __future__ import annotations

# Families whose MLP is up -> activation -> down (no gate), read from each family's modeling code in Hugging Face
# transformers (or vLLM where transformers has none): GPT-2 / GPT-BigCode (c_fc, c_proj), GPT-NeoX, GPT-J, OPT,
# BLOOM, Falcon (dense_h_to_4h), Phi-1/1.5/2 (fc1, fc2), StarCoder2 (c_fc), MPT (up_proj, down_proj),
# Nemotron and Arcee (up_proj, down_proj, squared ReLU), Persimmon (dense_h_to_4h, squared ReLU).
_PLAIN_MLP_FAMILIES = {
    "gpt2",
    "gpt_bigcode",
    "gpt_neox",
    "gptj",
    "codegen",
    "opt",
    "bloom",
    "falcon",
    "phi",
    "starcoder2",
    "mpt",
    "nemotron",
    "arcee",
    "persimmon",
}
# Gated although the activation alone would say otherwise: BitNet gates a squared ReLU (gate_proj, up_proj);
# Gemma's GeGLU is spelled gelu / gelu_pytorch_tanh.
_GATED_MLP_FAMILIES = {"bitnet", "gemma", "gemma2", "gemma3", "gemma3_text", "dbrx", "chatglm", "qwen"}
# Activations that mean a plain MLP when the family is not known: squared ReLU (Nemotron's relu2, Primer).
_PLAIN_ACTIVATIONS = {"relu2", "squared_relu", "relu_squared", "relu^2"}
# Families with every linear layer biased (c_attn, c_proj, c_fc ... in their modeling code) and LayerNorm with a bias
_ALL_BIAS_FAMILIES = {"gpt2", "gpt_bigcode", "gpt_neox", "opt", "bloom", "phi", "starcoder2"}
_LAYERNORM_FAMILIES = _ALL_BIAS_FAMILIES | {"falcon", "gptj", "codegen", "nemotron", "persimmon"}
# Attention and MLP read the same normed input: one norm per layer (Falcon-7B's one when it says so, below)
_ONE_NORM_FAMILIES = {"phi", "gptj", "codegen"}
# FalconForCausalLM ties lm_head to word_embeddings (falcon-7b's config.json does not say so); MPT's output is wte
_TIED_BY_DEFAULT = {
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "gpt2",
    "gpt_neox_japanese",
    "opt",
    "bloom",
    "gpt_bigcode",
    "falcon",
    "mpt",
}
_QKV_BIAS_FAMILIES = {"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"}
_FOUR_NORM_FAMILIES = {"gemma2", "gemma3", "gemma3_text"}
_QK_NORM_FAMILIES = {"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2"}
# Falcon's configs before transformers took them in (configuration_RW.py): 7B "RefinedWebModel", 40B "RefinedWeb"
_FALCON_ALIASES = {"refinedwebmodel": "falcon", "refinedweb": "falcon"}


def _dialect(cfg: dict, raw_type: str, model_type: str) -> dict:
    """The keys a family spells its own way, under the names read above (a value here wins over the config's).

    - MPT (mosaicml/mpt-7b, mpt-30b configuration_mpt.py; llm-foundry): d_model, n_heads, n_layers, max_seq_len;
      the MLP is expansion_ratio x d_model unless ffn_config.ffn_hidden_size says; ffn_config.ffn_type "mptglu" is
      gated; no_bias drops every bias, the LayerNorms' too (weight only: h per norm, counted as an RMSNorm is);
      learned positions (wpe) only when learned_pos_emb and neither attn_config.alibi nor rope.
    - DBRX (databricks/dbrx-base, transformers DbrxConfig): ffn_config.ffn_hidden_size / moe_num_experts /
      moe_top_k, LayerNorms without bias.
    - ChatGLM2/3, GLM-4 (THUDM configuration_chatglm.py): padded_vocab_size, ffn_hidden_size (SwiGLU: the
      fused dense_h_to_4h is twice it), rmsnorm true/false.
    - Qwen-1 (Qwen/Qwen-7B configuration_qwen.py): intermediate_size is the fused w1+w2 width, twice each's.
    - OLMo-1 "hf_olmo" (allenai/OLMo-7B): mlp_hidden_size (or mlp_ratio x d_model) is the fused SwiGLU width,
      embedding_size the padded table, weight_tying, include_bias, a LayerNorm without parameters by default.
    """
    out: dict = {}
    if model_type in ("mpt", "dbrx"):
        attn, ffn = _sub(cfg, "attn_config"), _sub(cfg, "ffn_config")
        if model_type == "mpt":
            ratio, width = cfg.get("expansion_ratio", 4), cfg.get("d_model")
            if isinstance(width, int) and isinstance(ratio, (int, float)):
                out["intermediate_size"] = ffn.get("ffn_hidden_size") or int(width * ratio)
            no_bias = bool(cfg.get("no_bias", False))
            out["norm"] = "rmsnorm" if no_bias else "layernorm"
            positional = attn.get("alibi", False) or attn.get("rope", False)
            if cfg.get("learned_pos_emb", True) and not positional:
                out["learned_positions"] = cfg.get("max_seq_len", 2048)
        else:
            out["intermediate_size"] = ffn.get("ffn_hidden_size")
            out["num_local_experts"] = ffn.get("moe_num_experts")
            out["num_experts_per_tok"] = ffn.get("moe_top_k")
            out["norm"] = "rmsnorm"  # nn.LayerNorm(bias=False): h parameters, as an RMSNorm's
    elif model_type == "chatglm":
        out["vocab_size"] = cfg.get("padded_vocab_size")
        out["norm"] = "rmsnorm" if cfg.get("rmsnorm", True) else "layernorm"
    elif model_type == "qwen" and isinstance(cfg.get("intermediate_size"), int):
        out["intermediate_size"] = cfg["intermediate_size"] // 2
    elif raw_type == "hf_olmo":
        ratio, d_model = cfg.get("mlp_ratio", 4), cfg.get("d_model")
        width = cfg.get("mlp_hidden_size") or (
            int(ratio * d_model) if isinstance(d_model, int) and isinstance(ratio, (int, float)) else None
        )
        gated = "glu" in str(cfg.get("activation_type", "swiglu")).lower()
        if isinstance(width, int):
            out["intermediate_size"] = width // 2 if gated else width
        out["vocab_size"] = cfg.get("embedding_size") or cfg.get("vocab_size")
        out["tie_word_embeddings"] = bool(cfg.get("weight_tying", False))
        if not cfg.get("layer_norm_with_affine", True):
            out["norms_per_layer"] = 0  # the final norm is still counted (h): ModelArch always has one
    return out


def _kv_heads(cfg: dict, model_type: str, heads, get):
    """The KV-head count under each family's spelling (grouped-query: fewer K/V heads than query heads).

    - num_key_value_heads: Llama, Mistral, Qwen2, Gemma, Nemotron, StarCoder2 and most of transformers.
    - Falcon (transformers FalconAttention): num_kv_heads when new_decoder_architecture (Falcon-40B, 180B, 11B)
      or when multi_query is false (Falcon-RW: num_kv_heads defaults to the head count); else multi_query, which
      defaults to true, means one K/V head (Falcon-7B). The older RW configs (configuration_RW.py) say n_head_kv,
      and "RefinedWeb" (40B) is the new decoder architecture.
    - GPT-BigCode (StarCoder, SantaCoder): multi_query, true by default, one K/V head.
    - MPT (llm-foundry attn_config): attn_type "multiquery_attention" is one head, "grouped_query_attention"
      reads kv_n_heads; DBRX's attn_config.kv_n_heads always counts.
    - ChatGLM2/3, GLM-4: multi_query_group_num when multi_query_attention is true.
    - OLMo-1 (hf_olmo), Llama / Mistral params.json: n_kv_heads; OLMo-1's multi_query_attention is one head.
    """
    if model_type == "falcon":
        new_arch = bool(cfg.get("new_decoder_architecture", str(cfg.get("model_type")).lower() == "refinedweb"))
        if new_arch or not cfg.get("multi_query", True):
            return get("num_kv_heads", "n_head_kv", "num_key_value_heads", default=heads)
        return 1
    if model_type == "gpt_bigcode":
        return 1 if cfg.get("multi_query", True) else heads
    if model_type in ("mpt", "dbrx"):
        attn = _sub(cfg, "attn_config")
        kind = str(attn.get("attn_type", "grouped_query_attention" if model_type == "dbrx" else "multihead"))
        if kind == "multiquery_attention":
            return 1
        return (attn.get("kv_n_heads") or heads) if kind == "grouped_query_attention" else heads
    if model_type == "chatglm":
        return (cfg.get("multi_query_group_num") or heads) if cfg.get("multi_query_attention") else heads
    counted = get("num_key_value_heads", "num_kv_heads", "n_kv_heads", "n_head_kv", "multi_query_group_num")
    if counted is None and (cfg.get("multi_query") is True or cfg.get("multi_query_attention") is True):
        return 1  # one K/V head shared by every query head, and no count given
    return heads if counted is None else counted


def _mlp_gated(cfg: dict, model_type: str) -> bool:
    """Whether the MLP multiplies a gate branch in (SwiGLU, GeGLU: 3 matrices) or not (2 matrices).

    The family's modeling code decides first (the sets above); an activation that names a GLU (swiglu, geglu,
    MPT's ffn_type mptglu, OLMo-1's activation_type) says gated; squared ReLU (relu2) or a GPT-2-style
    ``activation_function`` (gelu_new, gelu_pytorch_tanh ...) in an unknown family says plain; else gated (the
    Llama MLP most configs now describe)."""
    ffn = _sub(cfg, "ffn_config")
    named = [
        cfg.get("hidden_act"),
        cfg.get("hidden_activation"),
        cfg.get("activation_function"),
        cfg.get("activation"),
        cfg.get("activation_type"),
        ffn.get("ffn_type"),
    ]
    acts = {str(a).lower() for a in named if isinstance(a, str)}
    if any("glu" in a for a in acts):
        return True
    if model_type in _PLAIN_MLP_FAMILIES:
        return False
    if model_type in _GATED_MLP_FAMILIES:
        return True
    if acts & _PLAIN_ACTIVATIONS:
        return False
    if str(cfg.get("model_type")).lower() == "hf_olmo" and acts:
        return False  # activation_type gelu / relu, no glu in it
    return not isinstance(cfg.get("activation_function"), str)


def _biases(cfg: dict, model_type: str, get) -> tuple[bool, bool, bool]:
    """(QKV bias, attention-output bias, MLP bias) as each family's modeling code reads its config."""
    if model_type == "falcon":
        b = bool(cfg.get("bias", False))  # query_key_value, dense, dense_h_to_4h, dense_4h_to_h all take it
        return b, b, b
    if model_type == "mpt":
        b = not cfg.get("no_bias", False)
        return b, b, b
    if model_type == "starcoder2":
        b = bool(cfg.get("use_bias", True))
        return b, b, b
    if model_type == "opt":
        b = bool(cfg.get("enable_bias", True))
        return b, b, b
    if model_type in _ALL_BIAS_FAMILIES:
        return True, True, True
    if model_type in ("gptj", "codegen"):
        return False, False, True  # attention without bias, fc_in / fc_out with
    if model_type == "chatglm":
        linear = bool(cfg.get("add_bias_linear", False))
        return bool(cfg.get("add_qkv_bias", False)), linear, linear
    if model_type == "qwen":
        rest = not cfg.get("no_bias", True)
        return True, rest, rest  # c_attn always has a bias; c_proj and the MLP unless no_bias
    if str(cfg.get("model_type")).lower() == "hf_olmo":
        b = bool(cfg.get("include_bias", False))
        return b, b, b
    return (
        bool(get("attention_bias", "qkv_bias", default=model_type in _QKV_BIAS_FAMILIES)),
        bool(get("attention_bias", default=False)),
        bool(get("mlp_bias", default=False)),
    )


def _norms_per_layer(cfg: dict, model_type: str) -> int:
    """Falcon (transformers FalconDecoderLayer): two LayerNorms when attention and MLP run in sequence
    (parallel_attn false: Falcon-RW), else num_ln_in_parallel_attn, which defaults to two with the new decoder
    architecture (Falcon-40B: ln_attn, ln_mlp) and one without (Falcon-7B; Falcon-11B sets it to 1)."""
    if model_type in _FOUR_NORM_FAMILIES:
        return 4
    if model_type in _ONE_NORM_FAMILIES:
        return 1
    if model_type == "falcon":
        if not cfg.get("parallel_attn", True):
            return 2
        new_arch = cfg.get("new_decoder_architecture", str(cfg.get("model_type")).lower() == "refinedweb")
        return cfg.get("num_ln_in_parallel_attn") or (2 if new_arch else 1)
    return 2


def _learned_positions(cfg: dict, model_type: str) -> int:
    """Rows of a learned position table (wpe): GPT-2 and GPT-BigCode have n_positions of them; OPT's table has
    two more (OPTLearnedPositionalEmbedding's offset). Rotary and ALiBi families have none."""
    if model_type in ("gpt2", "gpt_bigcode"):
        return cfg.get("n_positions") or cfg.get("max_position_embeddings") or 1024
    if model_type == "opt":
        return (cfg.get("max_position_embeddings") or 2048) + 2
    return 0


def _sub(cfg: dict, key: str) -> dict:
    value = cfg.get(key)
    return value if isinstance(value, dict) else {}
