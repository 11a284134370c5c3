"""The layout search's parts that read one part of the scenario."""

from gpuplan_core.plan.search import inference_candidates, layout_label, target_misses
from gpuplan_core.scenario.deployment import Traffic
from gpuplan_core.scenario.scenario import Scenario


def test_target_misses_reads_the_traffic_part_alone():
    t = Traffic(ttft_target_s=2.0, tpot_target_s=0.1)
    assert target_misses(t, 1.5, 0.05) == []
    assert target_misses(t, 2.517, 0.1234) == ["TTFT 2,517 ms > target 2,000 ms", "TPOT 123.4 ms > target 100.0 ms"]
    assert target_misses(Traffic(ttft_target_s=None, tpot_target_s=None), 99.0, 9.0) == []  # no targets, no misses


def test_layout_label():
    assert layout_label("H100-SXM", 2, 1) == "2 x H100-SXM, TP 2"
    assert layout_label("H100-SXM", 4, 2) == "8 x H100-SXM, TP 4, PP 2"


def test_asks_that_differ_in_volume_or_prices_alone_share_their_replicas_and_no_other_do():
    from gpuplan_core.plan.search import ServingAsk, _replica_part
    from gpuplan_core.scenario.scenario import Scenario

    sc = Scenario(preset="Llama-3.1-8B", requests_per_day=20_000)
    part = _replica_part(ServingAsk.of(sc))
    same = [
        sc.with_(requests_per_day=90_000),
        sc.with_(peak_to_average=4.5),
        sc.with_(hours_per_month=500.0),
        sc.with_(billing="on_demand"),
    ]
    for other in same:
        assert _replica_part(ServingAsk.of(other)) == part
    different = [
        sc.with_(requests_per_day=0),  # no traffic: the static batch alone
        sc.with_(ttft_target_s=1.0),
        sc.with_(arrival="bursty"),
        sc.with_(input_tokens=1200),
        sc.with_(engine="sglang"),
    ]
    for other in different:
        assert _replica_part(ServingAsk.of(other)) != part
    assert part.traffic.requests_per_day == 1.0 and part.traffic.peak_to_average == 1.0 and part.pricing is None


def test_a_gpu_count_the_user_sets_is_the_least_the_layout_runs():
    """2 GPUs at TP 1 are 2 replicas (set_replicas = gpus // (tp x pp)); the traffic may need more, never fewer.
    Serverless offers scale with the traffic, so a set count of several replicas is not theirs to rent."""
    from gpuplan_core.pricing.billing import replicas_for_traffic
    from gpuplan_core.pricing.csv_file import load_pricing

    offers = load_pricing().offers
    for gpus, rpd in ((4, 10_000), (2, 3_000_000)):
        sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", gpus=gpus, requests_per_day=rpd)
        picks, rejected, _ = inference_candidates(sc.model(), sc, offers, [sc.formats.weights_format])
        assert picks and not any(p.billing_model.startswith("serverless") for p in picks)
        assert any("serverless pool scales with the traffic" in r.reason for r in rejected)
        for p in picks:
            need = replicas_for_traffic(rpd, sc.traffic.peak_to_average, p.requests_per_s_per_replica)
            assert p.replicas == max(need, gpus // (p.tp * p.pp))
        assert all(p.replicas >= gpus for p in picks)  # TP 1 is the layout set: one GPU per replica
