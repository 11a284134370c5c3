"""The layout search's parts that read one part of the scenario."""

from gpuplan_core.plan.search import layout_label, target_misses
from gpuplan_core.scenario.deployment import Traffic


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
