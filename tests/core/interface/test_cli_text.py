"""interface/cli_text.py: the command line's text form of each report, laid out from the report's fields: sizes in
GB and GiB side by side, the published counts, and the answer's line as the plan states it."""

import pytest

from gpuplan_core import api
from gpuplan_core.interface.cli_text import _gb, format_report
from gpuplan_core.scenario.scenario import Scenario

# Llama-3.1-8B on one H100, one request of 1,000 + 24 tokens: a context of 1,024 (64 vLLM blocks of 16)
SC = Scenario(gpu="H100", batch=1, input_tokens=1000, output_tokens=24)


@pytest.fixture(scope="module")
def memory_text() -> str:
    return format_report("memory", api.memory_report(SC))


def test_sizes_are_in_gb_and_gib():
    assert _gb(16_060_522_496) == "16.06 GB (14.96 GiB)"  # 2 bytes x 8,030,261,248; / 10^9 and / 2^30
    assert _gb(2**30) == "1.07 GB (1.00 GiB)"
    assert _gb(0) == "0.00 GB (0.00 GiB)"


def test_memory_text_states_the_published_counts(memory_text):
    lines = memory_text.splitlines()
    assert lines[0] == "Llama-3.1-8B: 8,030,261,248 parameters (8,030,261,248 active)"
    assert lines[1] == "KV cache: 131,072 bytes per token (bf16)"  # 2 x 32 layers x 8 heads x 128 x 2 bytes
    assert lines[2].startswith("inference (full), weights bf16, context 1,024, batch 1, layout ")
    assert "  weights                      16.06 GB (14.96 GiB)   exact" in lines
    # 131,072 bytes x 1,024 tokens = 134,217,728 bytes = 0.134 GB = 0.125 GiB
    assert "  KV cache                     0.13 GB (0.12 GiB)   exact" in lines


def test_memory_text_lists_every_gpu_of_the_catalog(memory_text):
    from gpuplan_core.hardware.catalog import load_gpus

    table = memory_text.splitlines()
    header = table.index(next(line for line in table if line.startswith("GPU ")))
    assert table[header].split() == ["GPU", "fits", "min", "GPUs", "max", "batch", "max", "context"]
    rows = [line.split()[0] for line in table[header + 1 :]]
    assert rows == [g.gpu for g in load_gpus() if g.is_gpu]


def test_perf_text_states_the_layout_and_the_ridge_point():
    text = format_report("perf", api.perf_report(SC))
    assert text.splitlines()[0].startswith(
        "Llama-3.1-8B on H100-SXM x1 (tp 1, pp 1), math bf16, batch 1 (max "
    ) and text.splitlines()[0].endswith("prompt 1,000, output 24")
    assert "  ridge point                   295.2 FLOP/byte" in text  # 989e12 FLOP/s / 3,350e9 B/s


def test_plan_text_leads_with_the_answer():
    ans = api.answer_report(SC)
    lines = format_report("plan", ans).splitlines()
    assert lines[0].startswith(f"Llama-3.1-8B (inference), {ans.plan.candidates} candidates; cost in ")
    replicas = f"{ans.pick.replicas} replica" + ("" if ans.pick.replicas == 1 else "s")  # never "1 replica(s)"
    assert lines[1].startswith(f"answer: {ans.pick.offer_id} ({ans.pick.layout}, {replicas}) ")
    assert f"{ans.cost_usd:,.0f} USD per {ans.cost_per}" in lines[1]
    assert lines[2].startswith(f"1. {ans.plan.picks[0].offer_id} (")


def test_cost_text_counts_its_offers():
    r = api.cost_report(SC)
    assert format_report("cost", r).splitlines()[0] == f"Llama-3.1-8B (inference): {len(r.offers)} offers"


def test_an_unknown_command_prints_the_report_itself():
    assert format_report("nonsense", "as is") == "as is"
