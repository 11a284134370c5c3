"""The Memory page's sentence without an answer's layout (report/memory_answer.py ``_memory_only``): GB are 10^9
bytes; Llama-3.1-8B's BF16 weights are 2 x 8,030,261,248 B = 16.1 GB."""

from __future__ import annotations

from gpuplan_core.report.memory_answer import memory_answer
from gpuplan_core.scenario.scenario import Scenario

SC = Scenario(preset="Llama-3.1-8B")  # 2,000 + 300 tokens per request


def test_types_that_hold_it(gpu_fit, memory_report):
    rows = [gpu_fit("L4", None, 20), gpu_fit("A10G", 1, 21.5), gpu_fit("H100", 1, 71)]
    a = memory_answer(memory_report(rows, per_gpu_gb=20.0), SC)
    assert a.sentence == (
        "Llama-3.1-8B needs 20.0 GB per GPU (2,000 + 300 tokens per request, batch 8): 2 of 3 GPU types hold it; "
        "the smallest is the A10G (21.5 GB usable)."
    )
    assert [(h.label, h.value) for h in a.headlines[:3]] == [
        ("Memory per GPU", "20.0 GB"),
        ("GPU types that hold it", "2 of 3"),
        ("Weights", "16.1 GB"),
    ]
    # KV cache per request: 131,072 B per token x 2,300 tokens = 301,465,600 B
    assert (a.headlines[3].label, a.headlines[3].value) == ("KV cache per request", "0.30 GB")
    assert a.tone == "good"


def test_the_chosen_gpu_short_by_memory_alone(gpu_fit, memory_report):
    """24 GB needed on an L4 that may fill 20 GB: 4.0 GB short; by memory alone 2 of them hold it."""
    rows = [gpu_fit("L4", 2, 20, selected=True, label="L4"), gpu_fit("H100", 1, 71)]
    a = memory_answer(memory_report(rows, per_gpu_gb=24.0), SC.with_(gpu="L4"))
    assert a.sentence == (
        "Llama-3.1-8B needs 24.0 GB per GPU (2,000 + 300 tokens per request, batch 8): 1 x L4 is 4.0 GB short; by "
        "memory alone it takes 2 x L4."
    )
    assert (a.headlines[1].label, a.headlines[1].value, a.tone) == ("Fits 1 x L4?", "no", "warn")


def test_no_type_holds_it(gpu_fit, memory_report):
    a = memory_answer(memory_report([gpu_fit("L4", 4, 20), gpu_fit("H100", 2, 71)], per_gpu_gb=90.0), SC)
    assert a.sentence.endswith("no single GPU type holds it at this layout; by memory alone the fewest are 2 x H100.")
    assert a.headlines[1].value == "0 of 2"
