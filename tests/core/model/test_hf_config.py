"""Hugging Face configs read as the models are: multi-query attention and Falcon's LayerNorms."""

import json

from gpuplan_core.model.arch import kv_bytes_per_token, params_total
from gpuplan_core.model.hf_config import model_from_hf_config

# tiiuae/falcon-7b config.json (the fields gpuplan reads): 6,921,720,704 parameters on the model card / safetensors.
FALCON_7B = {
    "architectures": ["FalconForCausalLM"],
    "model_type": "falcon",
    "hidden_size": 4544,
    "n_head": 71,
    "n_layer": 32,
    "multi_query": True,
    "new_decoder_architecture": False,
    "parallel_attn": True,
    "bias": False,
    "vocab_size": 65024,
    "tie_word_embeddings": True,
}


def test_falcon_7b_multi_query_is_one_kv_head_and_its_count_is_exact():
    """multi_query: true was read as 71 KV heads (8.5B parameters). By hand, per layer: fused QKV h x (h + 2 x 64)
    = 21,229,568, dense h x h = 20,647,936, MLP 2 x h x 4h = 165,183,488, one LayerNorm 2h = 9,088; x 32 layers,
    + the tied embedding 65,024 x 4,544 = 295,469,056 and the final LayerNorm 9,088."""
    m = model_from_hf_config(json.dumps(FALCON_7B))
    assert m.num_kv_heads == 1
    per_layer = 4544 * (4544 + 2 * 64) + 4544 * 4544 + 2 * 4544 * 18176 + 2 * 4544
    assert params_total(m) == 32 * per_layer + 65024 * 4544 + 2 * 4544 == 6_921_720_704
    assert kv_bytes_per_token(m, 2) == 2 * 32 * 1 * 64 * 2  # K and V, one head of 64, 32 layers, BF16: 8,192 B


def test_falcon_40b_new_architecture_keeps_its_kv_heads():
    cfg = {**FALCON_7B, "hidden_size": 8192, "n_head": 128, "n_layer": 60, "num_kv_heads": 8,
           "new_decoder_architecture": True}  # fmt: skip
    m = model_from_hf_config(json.dumps(cfg))
    assert m.num_kv_heads == 8 and m.norms_per_layer == 2
