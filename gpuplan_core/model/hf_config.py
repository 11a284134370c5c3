"""A Hugging Face config.json -> ModelArch, and the checkpoint format its quantization_config names."""

from __future__ import annotations

import json

from .arch import ModelArch
from .hf_families import (
    _FALCON_ALIASES,
    _LAYERNORM_FAMILIES,
    _PLAIN_MLP_FAMILIES,
    _QK_NORM_FAMILIES,
    _TIED_BY_DEFAULT,
    _biases,
    _dialect,
    _kv_heads,
    _learned_positions,
    _mlp_gated,
    _norms_per_layer,
)


class HFConfigError(ValueError):
    pass


_MAX_CONFIG_BYTES = 2_000_000


def model_from_hf_config(config: dict | str | bytes, name: str | None = None) -> ModelArch:
    """See _model_from_hf_config; any unexpected value type becomes an HFConfigError too."""
    try:
        return _model_from_hf_config(config, name)
    except HFConfigError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError, OverflowError) as exc:
        raise HFConfigError(f"config.json: a value has an unexpected type or size ({type(exc).__name__})") from None


def _model_from_hf_config(config: dict | str | bytes, name: str | None = None) -> ModelArch:
    """Build a ModelArch from a Hugging Face ``config.json`` (a dict, or its text).

    Handles nested ``text_config`` (multimodal wrappers), explicit ``head_dim``, MoE keys
    (Mixtral ``num_local_experts``, Qwen ``num_experts``, DeepSeek ``n_routed_experts``), MLA
    keys (``kv_lora_rank`` ...), and the families that spell the shape their own way (_dialect: Falcon, MPT, DBRX,
    ChatGLM, Qwen-1, OLMo-1). Missing required keys raise HFConfigError naming them.
    """
    if isinstance(config, (str, bytes)):
        if len(config) > _MAX_CONFIG_BYTES:
            raise HFConfigError(f"config.json: larger than {_MAX_CONFIG_BYTES:,} bytes; not a model config")
        try:
            config = json.loads(config)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HFConfigError(f"config.json: not valid JSON ({exc})") from None
    if not isinstance(config, dict):
        raise HFConfigError("config.json: must be a JSON object with keys such as hidden_size, num_hidden_layers")
    cfg = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    raw_type = str(cfg.get("model_type") or config.get("model_type") or "").lower()
    model_type = _FALCON_ALIASES.get(raw_type, raw_type)
    over = _dialect(cfg, raw_type, model_type)

    def get(*keys, default=None, required=False):
        for k in keys:
            for source in (over, cfg):
                if k in source and source[k] is not None:
                    return source[k]
        if required:
            raise HFConfigError(f"config.json: missing required key {' or '.join(repr(k) for k in keys)}")
        return default

    layers = get("num_hidden_layers", "n_layer", "num_layers", "n_layers", required=True)
    hidden = get("hidden_size", "n_embd", "d_model", "n_embed", required=True)
    heads = get("num_attention_heads", "n_head", "n_heads", required=True)
    kv_heads = _kv_heads(cfg, model_type, heads, get)
    vocab = get("vocab_size", required=True)
    inter = get("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size", default=None)
    n_experts = get("num_local_experts", "num_experts", "n_routed_experts", default=0) or 0
    expert_inter = get("moe_intermediate_size", default=None)
    if inter is None:
        if n_experts and expert_inter:
            inter = expert_inter
        elif model_type in _PLAIN_MLP_FAMILIES:
            inter = 4 * hidden if isinstance(hidden, int) else None  # GPT-2's n_inner: null means 4h
        else:
            raise HFConfigError("config.json: missing required key 'intermediate_size'")
    layer_types = get("layer_types", default=None)
    window = get("sliding_window", default=0) or 0
    swa_layers = 0
    if isinstance(layer_types, list) and window:
        swa_layers = sum(1 for t in layer_types if "sliding" in str(t))
    elif window and model_type in ("gemma2",):
        swa_layers = layers // 2
    elif window and model_type in ("gemma3", "gemma3_text"):
        pattern = get("sliding_window_pattern", default=6) or 6
        swa_layers = layers - layers // pattern
    elif window and (model_type == "mistral" or get("use_sliding_window", default=False)):
        swa_layers = layers
    if model_type == "mixtral" and not get("sliding_window", default=None):
        swa_layers = 0
    qkv_bias, o_bias, mlp_bias = _biases(cfg, model_type, get)
    fields = dict(
        name=name or cfg.get("_name_or_path") or config.get("_name_or_path") or (model_type or "custom model"),
        source="Hugging Face config.json",
        num_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=get("head_dim", "kv_channels", default=None),
        intermediate_size=inter,
        mlp_gated=_mlp_gated(cfg, model_type),
        vocab_size=vocab,
        tied_embeddings=bool(get("tie_word_embeddings", default=model_type in _TIED_BY_DEFAULT)),
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        mlp_bias=mlp_bias,
        norm=over.get("norm") or ("layernorm" if model_type in _LAYERNORM_FAMILIES else "rmsnorm"),
        norms_per_layer=over.get("norms_per_layer", _norms_per_layer(cfg, model_type)),
        qk_norm=model_type in _QK_NORM_FAMILIES,
        learned_positions=over.get("learned_positions", _learned_positions(cfg, model_type)),
        max_context_tokens=get(
            "max_position_embeddings",
            "n_positions",
            "max_seq_len",
            "seq_length",
            "max_sequence_length",
            default=131_072,
        ),
        sliding_window_tokens=window if swa_layers else 0,
        sliding_window_layers=swa_layers,
        mtp_layers=get("num_nextn_predict_layers", default=0) or 0,
    )
    if n_experts:
        fields.update(
            num_experts=n_experts,
            experts_per_token=get("num_experts_per_tok", "num_experts_per_token", "moe_top_k", required=True),
            expert_intermediate_size=expert_inter or inter,
            num_shared_experts=get("n_shared_experts", default=0) or 0,
            shared_expert_intermediate_size=get("shared_expert_intermediate_size", default=0) or 0,
            first_dense_layers=get("first_k_dense_replace", default=0) or 0,
            router_bias=model_type in ("deepseek_v3",),
        )
    if get("kv_lora_rank", default=0):
        fields.update(
            kv_lora_rank=get("kv_lora_rank"),
            q_lora_rank=get("q_lora_rank", default=0) or 0,
            qk_rope_head_dim=get("qk_rope_head_dim", required=True),
            qk_nope_head_dim=get("qk_nope_head_dim", required=True),
            v_head_dim=get("v_head_dim", required=True),
            head_dim=None,
        )
    q = config.get("quantization_config")
    if isinstance(q, dict):
        fields["checkpoint_format"], fields["checkpoint_note"] = checkpoint_format(q)
    try:
        return ModelArch(**fields)
    except ValueError as exc:  # pydantic ValidationError is a ValueError
        raise HFConfigError(f"config.json: {_first_error(exc)}") from None


def checkpoint_format(q: dict) -> tuple[str | None, str]:
    """A ``quantization_config`` as a weights format, and a sentence saying how it was read. GPTQ and AWQ int4
    (any group size: priced as group 128), FP8 (``fp8``, ``fbgemm_fp8``, compressed-tensors float 8-bit),
    bitsandbytes (4-bit NF4, 8-bit), ModelOpt NVFP4 and MXFP4 quantise the decoder's linear layers only; their
    embeddings, LM head and norms stay 16-bit (``modules_to_not_convert`` / ``ignore`` name those)."""
    method = str(q.get("quant_method") or "").lower()
    bits = q.get("bits") or q.get("w_bit") or q.get("num_bits")
    group = q.get("group_size") or q.get("q_group_size")
    algo = str(q.get("quant_algo") or "").lower()
    fmt = None
    if method in ("gptq", "awq", "gptq_marlin", "awq_marlin") and bits == 4:
        fmt = "int4-g128"
    elif method in ("fp8", "fbgemm_fp8") or (method == "compressed-tensors" and "float" in json.dumps(q)):
        fmt = "fp8"
    elif method == "bitsandbytes":
        fmt = "nf4" if q.get("load_in_4bit") or q.get("_load_in_4bit") else "int8"
    elif method in ("modelopt",) and "fp4" in algo:
        fmt = "nvfp4"
    elif method == "mxfp4":
        fmt = "mxfp4"
    elif method in ("gptq", "awq") and bits == 8:
        fmt = "int8"
    kept = q.get("modules_to_not_convert") or q.get("ignore") or ["lm_head"]
    if fmt is None:
        what = f"{method or 'unknown'} ({bits or '?'} bits)"
        return None, f"quantization_config {what} is not recognised: the weights are priced in the format chosen"
    note = (
        f"The config's quantization_config ({method}, {bits or '-'} bits"
        + (f", group {group}" if group else "")
        + f") sets the weights format; {', '.join(map(str, kept))[:80]} and the embeddings and norms stay 16-bit."
    )
    if fmt == "int4-g128" and group not in (None, 128):
        note += f" Group size {group} is priced as group 128 (scales cost differs by a few %)."
    return fmt, note


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for e in errors():
            loc = ".".join(str(x) for x in e.get("loc", ())) or "model"
            msg = str(e.get("msg", "")).removeprefix("Value error, ")
            parts.append(f"{loc}: {msg}" if not msg.startswith(loc) else msg)
        return "; ".join(parts)
    return str(exc)
