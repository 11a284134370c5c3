"""An offer renting a judged layout (plan/rent.py): the cold start's rule in words and in seconds, and every offer
renting the layouts of its GPU type (``inference_candidates``)."""

import pytest

from gpuplan_core.memory.components import model_weight_bytes
from gpuplan_core.model.formats import get_format
from gpuplan_core.model.presets import get_preset
from gpuplan_core.plan.rent import cold_start_rule, cold_start_s, inference_candidates
from gpuplan_core.scenario.scenario import Scenario


def test_the_cold_start_rule_prints_its_constants():
    assert cold_start_rule() == "20 s + weights load at 2 GB/s"


def test_a_cold_start_is_20_s_and_the_weights_at_2_gb_per_s():
    m = get_preset("Llama-3.1-8B")
    weights = model_weight_bytes(m, get_format("bf16"))  # about 16 GB of BF16 weights
    assert 15e9 < weights < 17e9
    assert cold_start_s(m, "bf16") == pytest.approx(20.0 + weights / 2e9)


def test_a_gpu_count_the_user_sets_is_the_least_the_layout_runs():
    """2 GPUs at TP 1 are 2 replicas (set_replicas = gpus // (tp x pp)); the traffic may need more, never fewer.
    Serverless offers scale with the traffic, so a set count of several replicas is not theirs to rent."""
    from gpuplan_core.pricing.billing import replicas_for_traffic
    from gpuplan_core.pricing.csv_file import load_pricing

    offers = load_pricing().offers
    for gpus, rpd in ((4, 10_000), (2, 3_000_000)):
        sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", gpus=gpus, requests_per_day=rpd)
        picks, rejected, *_ = inference_candidates(sc.model(), sc, offers, [sc.formats.weights_format])
        assert picks and not any(p.billing_model.startswith("serverless") for p in picks)
        assert any("serverless pool scales with the traffic" in r.reason for r in rejected)
        for p in picks:
            need = replicas_for_traffic(rpd, sc.traffic.peak_to_average, p.requests_per_s_per_replica)
            assert p.replicas == max(need, gpus // (p.tp * p.pp))
        assert all(p.replicas >= gpus for p in picks)  # TP 1 is the layout set: one GPU per replica
