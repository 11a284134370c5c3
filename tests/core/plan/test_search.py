"""The layout search (gpuplan_core/plan/search.py): its parts that read one part of the scenario, and its two
shapes: a layout that holds the memory budget with its replica's judgement, and that layout under the traffic
(``Served``, built by ``served``)."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.request import memory_request
from gpuplan_core.plan.search import (
    Layout,
    Served,
    ServingAsk,
    evaluate_layouts,
    layout_label,
    served,
    set_replicas,
    target_misses,
)
from gpuplan_core.pricing.csv_file import load_pricing
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


SC = Scenario(preset="Llama-3.1-70B", gpu="H100-SXM", requests_per_day=0)


@pytest.fixture(scope="module")
def layouts() -> list[Layout]:
    offers = [o for o in load_pricing().offers if o.gpu == "H100-SXM"]
    fmt = SC.formats.weights_format
    ask, h100 = ServingAsk.of(SC), get_gpu("H100-SXM")
    lays, _ = evaluate_layouts(SC.model(), ask, h100, fmt, memory_request(SC), False, offers=offers)
    return lays


def test_each_layout_counts_and_names_its_gpus(layouts):
    # 70B in BF16 is 141 GB of weights: one 80 GB H100 cannot hold it, so every layout splits it over 2 or more
    assert layouts and all(lay.tp * lay.pp >= 2 for lay in layouts)
    for lay in layouts:
        assert lay.replica_gpus == lay.tp * lay.pp
        pp = f", PP {lay.pp}" if lay.pp > 1 else ""
        assert lay.label == f"{lay.tp * lay.pp} x H100-SXM, TP {lay.tp}{pp}"
        assert lay.kv_sequences > 0


def test_without_traffic_a_layout_runs_one_replica_or_the_count_set(layouts):
    lay = layouts[0]
    n = lay.replica_gpus
    one = served(lay, SC.traffic)
    assert isinstance(one, Served) and (one.replicas, one.set_replicas) == (1, 1)
    assert one.ttft_s == lay.replica.static.ttft_s and one.tpot_s == lay.replica.static.tpot_s
    four = served(lay, SC.traffic, gpus=4 * n)  # 4 x the replica's GPUs: 4 replicas
    assert (four.replicas, four.set_replicas) == (4, 4) == (set_replicas(lay, 4 * n),) * 2
    assert four.lines[-1] == f"the {4 * n} GPUs set hold 4 replicas"
    assert set_replicas(lay, 2 * n - 1) == 1  # fewer GPUs than two replicas: still the one the layout needs
