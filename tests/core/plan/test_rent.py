"""An offer renting a judged layout (plan/rent.py): the cold start's rule in words and in seconds."""

import pytest

from gpuplan_core.memory.components import model_weight_bytes
from gpuplan_core.model.formats import get_format
from gpuplan_core.model.presets import get_preset
from gpuplan_core.plan.rent import cold_start_rule, cold_start_s


def test_the_cold_start_rule_prints_its_constants():
    assert cold_start_rule() == "20 s + weights load at 2 GB/s"


def test_a_cold_start_is_20_s_and_the_weights_at_2_gb_per_s():
    m = get_preset("Llama-3.1-8B")
    weights = model_weight_bytes(m, get_format("bf16"))  # about 16 GB of BF16 weights
    assert 15e9 < weights < 17e9
    assert cold_start_s(m, "bf16") == pytest.approx(20.0 + weights / 2e9)
