"""Published model configs the tests build models from, written once."""

# meta-llama/Llama-3.1-8B config.json (the fields gpuplan reads): 8,030,261,248 parameters.
LLAMA_3_1_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05,
}

# Qwen/Qwen2.5-7B config.json (the fields gpuplan reads): 7,615,616,512 parameters, 57,344 KV bytes per token in BF16.
QWEN2_5_7B_CONFIG = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_attention_heads": 28,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "tie_word_embeddings": False,
}
