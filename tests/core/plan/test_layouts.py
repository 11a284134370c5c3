"""The layout search's two shapes (gpuplan_core/plan/layouts.py): a layout that holds the memory budget with its
replica's judgement, and that layout under the traffic (``Served``, built by search.served)."""

from __future__ import annotations

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.request import memory_request
from gpuplan_core.plan.layouts import Layout, Served
from gpuplan_core.plan.search import ServingAsk, evaluate_layouts, served, set_replicas
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

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
