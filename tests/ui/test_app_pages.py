"""AppTest, page by page: the Overview's recommendation and targets, the Memory chart, a use case in the link,
Performance's load charts, the 70B question's why-chain, and Compare's verdicts (a price only for a side that fits).
"""

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan_core import api, load_pricing
from gpuplan_core.interface.inputs import to_scenario
from tests.ui.apptest import (
    COMPARE,
    MEMORY,
    OVERVIEW,
    PERF,
    assert_clean,
    differences,
    run_page,
    texts,
    title,
)


def test_overview_recommendation_and_targets():
    at = run_page(OVERVIEW, {"tpot_ms": "1"})
    assert_clean(at)
    # nothing qualifies: the binding constraint, with its numbers
    assert re.search(
        r"Even one request alone takes [\d.]+ ms per token on the fastest layout \(\d x \S+, TP \d\); a "
        r"TPOT of 1 ms is not reachable with these GPUs",
        texts(at),
    )
    ok = run_page(OVERVIEW)
    assert ok.success and "Rent" in ok.success[0].value


def test_memory_chart_spec():
    """The fit chart: one bar per GPU type (green where the layout search has a configuration on it, its words the
    search's count and layout), the answer's need per GPU as one line, and a title that names the answer; then what
    the need is made of, the weights first."""
    at = run_page(MEMORY)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    fit, parts = charts[0], charts[1]
    mem = api.memory_report(to_scenario({})[0], offers=load_pricing().offers)
    bars, words = fit["data"][1], fit["data"][2]
    assert len(bars["y"]) == len(mem.gpus) and bars["orientation"] == "h"
    need = mem.per_gpu_bytes / 1e9
    assert fit["layout"]["shapes"][0]["x0"] == need == mem.answer.per_gpu_bytes / 1e9
    assert title(fit).startswith(f"The answer: {mem.answer.gpus:,} x {mem.answer.label} at {need:,.1f} GB per GPU")
    running = sum(g.search.gpus is not None for g in mem.gpus)
    assert f"runs it on {running} of {len(mem.gpus)} GPU types" in title(fit)
    assert sum(not t.startswith("  no layout: ") for t in words["text"]) == running
    assert sum(t.startswith("  the answer: ") for t in words["text"]) == 1
    assert parts["data"][0]["name"] == "weights"


def test_a_use_case_sets_the_request_and_the_targets_and_is_in_the_link():
    at = run_page(PERF)
    at.sidebar.selectbox(key="usecase").set_value("rag").run()
    assert_clean(at)
    assert at.sidebar.number_input(key="in").value == 8000 and at.sidebar.number_input(key="out").value == 300
    assert at.sidebar.number_input(key="ttft_ms").value == 3000  # the targets group is built: its value changed
    assert "Requests/s per replica" in [m.label for m in at.metric]
    assert "within your targets (first token 3 s" in at.info[0].value  # the answer checks the targets it shows
    cold = run_page(PERF, {"usecase": "Code completion (short, strict first token)"})  # a hand-written link
    assert cold.sidebar.number_input(key="in").value == 1500 and cold.sidebar.number_input(key="tpot_ms").value == 30


def test_performance_shows_load_charts_with_target_and_capacity():
    at = run_page(PERF, {"rpd": "200000"})
    assert_clean(at)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    load = [s for s in specs if s["layout"]["xaxis"]["title"]["text"] == "requests per second (one replica)"]
    assert len(load) == 2
    ttft = next(s for s in load if s["layout"]["yaxis"]["title"]["text"] == "time to first token (ms)")
    assert title(ttft).startswith("The p95 wait for the first token stays within the target up to")
    texts_ = [a["text"] for a in ttft["layout"]["annotations"]]
    assert any(t.startswith("target 2,000 ms") for t in texts_) and any(t.startswith("capacity") for t in texts_)
    assert "Replicas for your traffic" in [m.label for m in at.metric]


def test_the_70b_question_on_the_home_page_gets_a_pick_and_its_why_chain():
    at = run_page(OVERVIEW, {"model": "Llama-3.1-70B", "rpd": "50000", "in": "2000", "out": "300", "ttft_ms": "2000"})
    assert_clean(at)
    rent = at.success[0].value  # the page's answer, its first element after the title
    assert re.match(r"Rent (one|\d+ x) \S+", rent)  # what to rent, in plain words
    assert "serves 50,000 requests a day within your latency targets" in rent
    why = texts(at)
    for step in (
        "Requests per day: 50,000",
        "Peak requests per second: 1.74",
        "One replica's capacity",
        "Replicas",
        "GPUs and machines",
        "Monthly cost",
    ):
        assert step in why, step
    assert any(
        title(json.loads(c.proto.spec)).startswith("A faster first token costs more") for c in at.get("plotly_chart")
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["Llama-3.1-8B", "Llama-3.1-70B", "Qwen2.5-72B", "Mixtral-8x7B-v0.1"]),
    st.sampled_from(["H100 SXM", "L40S", "L4", "H200", "A100 SXM 80GB"]),
    st.sampled_from(["1", "2", "4", "8"]),
    st.sampled_from(["same as A", "L4", "B200", "RTX PRO 6000 Blackwell Server Edition"]),
)
def test_a_fit_verdict_and_a_price_never_disagree(model, gpu, gpus, b_gpu):
    """Compare shows a price only for a side that fits, and says what a side that does not fit needs."""
    at = run_page(COMPARE, {"model": model, "gpu": gpu, "gpus": gpus, "b_gpu": b_gpu, "b_gpus": "1"})
    assert not at.exception
    rows = differences(at)
    for side in ("A", "B"):
        if rows["Fits"][side] == "no":
            for cost in ("Cost per month", "Cost per 1M output tokens"):
                assert cost not in rows or rows[cost][side] == "n/a"
            assert f"{side} has no configuration." in texts(at)


def test_compare_b_as_a_copy_is_identical_and_a_change_gets_a_verdict():
    at = run_page(COMPARE, {"gpu": "H100 SXM"})
    assert_clean(at)
    assert at.info[0].value == "A and B are identical: every number is the same."
    rows = differences(at)
    assert all(r["B - A"] in ("0", "same") for r in rows.values())
    at = run_page(COMPARE, {"gpu": "H100 SXM", "b_gpu": "H200"})
    verdict = at.success[0].value
    assert re.match(
        r"B runs 1 x H200 instead of 1 x H100 SXM; B is \d+% (cheaper|more expensive) per month and [\d.]+x "
        r"(faster|slower) per token; both fit\.",
        verdict,
    )


def test_the_overview_exports_the_command_of_the_engine_the_scenario_runs():
    from gpuplan_core.hardware.catalog import get_gpu
    from gpuplan_core.hardware.engines import TRTLLM_1X_GPUS, engine_gpu_note

    tp_flag = {"vllm": "--tensor-parallel-size", "sglang": "--tp-size", "trtllm": "--tp_size"}
    starts = {"vllm": "vllm serve ", "sglang": "python -m sglang.launch_server ", "trtllm": "trtllm-serve "}
    for engine in ("vllm", "sglang", "trtllm"):
        at = run_page(OVERVIEW, {"engine": engine})
        assert_clean(at)
        command = at.code[0].value.splitlines()[-1]
        pick = api.answer_report(to_scenario({"engine": engine})[0], offers=load_pricing().offers).pick
        assert command.startswith(starts[engine]) and f"{tp_flag[engine]} {pick.tp}" in command
        note = engine_gpu_note(engine, None, get_gpu(pick.gpu))  # TensorRT-LLM on a GPU its page does not list
        assert (note is not None) == (engine == "trtllm" and pick.gpu not in TRTLLM_1X_GPUS)
        assert note is None or note in texts(at)
