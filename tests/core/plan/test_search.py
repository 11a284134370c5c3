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
