"""model/presets.py: the published models in data/models.json, looked up by any spelling of their name."""

import json

import pytest

from gpuplan_core.model.arch import kv_bytes_per_token, params_total
from gpuplan_core.model.presets import get_preset, load_presets
from tests.configs import LLAMA_3_1_8B_CONFIG


def test_the_bundled_presets():
    presets = load_presets()
    assert len(presets) == 19
    assert list(presets)[:3] == ["Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B"]
    assert all(m.name == name for name, m in presets.items())
    assert not any(m.approximate for m in presets.values())  # every preset is a published architecture


def test_llama_3_1_8b_is_its_published_config():
    m, c = get_preset("Llama-3.1-8B"), LLAMA_3_1_8B_CONFIG
    assert (m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads) == (
        c["num_hidden_layers"],
        c["hidden_size"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
    )
    assert (m.intermediate_size, m.vocab_size, m.tied_embeddings) == (14336, 128256, False)
    assert m.max_context_tokens == c["max_position_embeddings"] == 131_072
    assert params_total(m) == 8_030_261_248
    assert kv_bytes_per_token(m, 2.0) == 2 * 32 * 8 * 128 * 2 == 131_072


@pytest.mark.parametrize("spelling", ["Llama-3.1-8B", "llama 3.1 8b", "LLAMA_3_1_8B", "llama3.18b"])
def test_a_name_is_matched_without_case_or_punctuation(spelling):
    assert get_preset(spelling).name == "Llama-3.1-8B"


def test_an_unknown_model_names_the_field_and_every_preset():
    with pytest.raises(ValueError) as exc:
        get_preset("Llama-9")
    msg = str(exc.value)
    assert msg.startswith("preset: unknown model 'Llama-9'; allowed: Llama-3.1-8B, Llama-3.1-70B, ")
    assert all(name in msg for name in load_presets())


def test_presets_load_from_another_file(tmp_path):
    path = tmp_path / "models.json"
    tiny = {
        "name": "Tiny",
        "num_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_kv_heads": 2,
        "intermediate_size": 128,
        "vocab_size": 1000,
    }
    path.write_text(json.dumps({"models": [tiny]}))
    (m,) = load_presets(str(path)).values()
    # embeddings 1000 x 64 twice (untied) + per layer: q, o 64 x 64; k, v 64 x 32 (2 KV heads x 16); gated MLP
    # 3 x 64 x 128; two RMSNorms 2 x 64; the final norm 64
    per_layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128 + 2 * 64
    assert params_total(m) == 2 * 1000 * 64 + 2 * per_layer + 64 == 202_048
