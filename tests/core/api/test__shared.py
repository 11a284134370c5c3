"""What every API function starts from (api/_shared.py): the scenario, the model's summary, the catalog rows."""

from __future__ import annotations

from gpuplan_core.api._shared import catalog_of, model_summary, scenario_of
from gpuplan_core.hardware.catalog import catalog_gpus, get_gpu
from gpuplan_core.scenario.scenario import Scenario


def test_scenario_of_a_dict_or_a_scenario():
    sc = Scenario(requests_per_day=5e4)
    assert scenario_of(sc) is sc
    assert scenario_of({"requests_per_day": 5e4, "ttft_target_s": None}).traffic.ttft_target_s is None


def test_model_summary_of_llama_3_1_8b():
    """Published config: 32 layers, hidden 4,096, 32 heads, 8 KV heads of 128; 8,030,261,248 parameters. KV per
    token: 2 (K, V) x 32 layers x 8 heads x 128 x 2 bytes (BF16) = 131,072 bytes; FP8 halves it."""
    s = model_summary(Scenario(preset="Llama-3.1-8B"))
    assert (s.params_total, s.params_active, s.layers, s.hidden_size) == (8_030_261_248, 8_030_261_248, 32, 4096)
    assert (s.attention_heads, s.kv_heads, s.head_dim, s.mla, s.moe_experts) == (32, 8, 128, False, 0)
    assert s.kv_cache_bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131_072
    assert s.max_context_tokens == 131_072 and not s.approximate
    assert model_summary(Scenario(kv_format="fp8")).kv_cache_bytes_per_token == 65_536


def test_catalog_of_adds_the_named_accelerator():
    gpus = catalog_gpus(False)
    assert catalog_of(Scenario()) == gpus
    assert catalog_of(Scenario(gpu="H100")) == gpus  # already a row
    tpu = catalog_of(Scenario(gpu="TPU-v5e"))
    assert tpu == (*gpus, get_gpu("TPU-v5e")) and len(tpu) == len(gpus) + 1
    assert catalog_of(Scenario(allow_accelerators=True)) == catalog_gpus(True)
