"""One scenario, one answer: over random scenarios of every job, the headline figures of the Overview, Cost,
Performance, Memory and Compare pages equal the core's answer (api.answer_report), and so does ``plan --json``.

Each example opens the pages cold from the same link (AppTest), the way a shared link is opened.
"""

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from gpuplan_core import api, gb, load_pricing, ms, read_link, to_scenario, usd
from gpuplan_core.report.answers import memory_label
from gpuplan_ui.tables import perf_latency_headers
from tests.ui.apptest import open_page

OFFERS = load_pricing().offers
SETTINGS = settings(
    max_examples=10,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: each example opens pages (seconds)
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

inference = st.fixed_dictionaries(
    {
        "workload": st.sampled_from(["interactive", "batch"]),
        "model": st.sampled_from(["Llama-3.1-8B", "Llama-3.1-70B", "Mistral-7B-v0.1", "Qwen2.5-72B"]),
        "in": st.sampled_from(["500", "2000", "8000"]),
        "out": st.sampled_from(["100", "300", "1000"]),
        "rpd": st.sampled_from(["0", "5000", "50000"]),
        "weights": st.sampled_from(["BF16", "FP8 (E4M3)"]),
        "gpu": st.sampled_from(["Any GPU", "H100 SXM", "H200", "L40S"]),
    }
)
pretraining = st.fixed_dictionaries(
    {
        "workload": st.just("pretrain"),
        "src": st.just("size"),
        "size_b": st.sampled_from(["1B", "7B", "13B"]),
        "tokens_b": st.sampled_from(["20", "200"]),
        "gpu": st.sampled_from(["Any GPU", "H100 SXM"]),
    }
)
pretraining_count = st.fixed_dictionaries(
    {
        "workload": st.just("pretrain"),
        "src": st.just("size"),
        "size_b": st.sampled_from(["1B", "7B"]),
        "tokens_b": st.sampled_from(["200", "1000"]),
        "gpu": st.just("H100 SXM"),
        "gpus": st.sampled_from(["8", "64"]),
        "ctx": st.sampled_from(["4096", "16384"]),
    }
)
finetuning = st.fixed_dictionaries(
    {
        "workload": st.just("finetune"),
        "model": st.sampled_from(["Llama-3.1-8B", "Mistral-7B-v0.1"]),
        "method": st.sampled_from(["lora", "qlora", "full"]),
        "gpu": st.sampled_from(["Any GPU", "A100 SXM 80GB"]),
    }
)


def _open(page: str, params: dict) -> AppTest:
    at = open_page(page, params)
    assert not at.exception, at.exception
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _answer(params: dict):
    values, problems = read_link(params)
    assert not problems, problems
    sc, _ = to_scenario(values)
    return sc, api.answer_report(sc, offers=OFFERS)


def _check_overview(params: dict) -> None:
    sc, ans = _answer(params)
    at = _open("app_pages/overview.py", params)
    heads = _metrics(at)
    if ans.pick is None:
        assert at.warning[0].value.startswith((ans.message or "No configuration")[:40])
        return
    cost_label = "Cost per month" if ans.cost_per == "month" else "Cost of the run"
    assert heads[cost_label] == usd(ans.cost_usd)
    assert heads["GPUs"] == f"{ans.pick.gpus:,}"
    assert heads[memory_label(ans)] == gb(ans.memory_per_gpu_bytes)  # a split's: "(decode worker)"
    if ans.pick.ttft_s is not None:
        label = "First token (p95)" if sc.traffic.requests_per_day else "First token"
        assert heads[label] == ms(ans.pick.ttft_s)
    assert ans.pick.provider in at.success[0].value
    # plan --json: the same answer
    from gpuplan_core.interface.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan", "--json", *_cli_flags(sc)]) == 0
    data = json.loads(out.getvalue())["answer"]
    assert data["pick"]["offer_id"] == ans.pick.offer_id
    assert data["cost_usd"] == ans.cost_usd
    assert data["memory_per_gpu_bytes"] == ans.memory_per_gpu_bytes


def _check_cost(params: dict) -> None:
    """The Cost page headlines the answer's cost, and its alternatives are the answer's (each meets the targets, or
    says what it misses)."""
    sc, ans = _answer(params)
    at = _open("app_pages/Cost.py", params)
    heads = _metrics(at)
    if ans.pick is None:
        return
    assert heads["Cheapest per month" if sc.job.mode == "inference" else "Cheapest run"] == usd(ans.cost_usd)
    for o in ans.alternatives:
        label = {"cheapest always-on": "Cheapest always-on", "cheapest per run": "Cheapest per run"}[o.role]
        if label in heads:
            value = o.pick.monthly_usd if o.role == "cheapest always-on" else o.pick.run_cost_usd
            assert heads[label] == usd(value)
            assert o.meets_targets or "misses" in o.differs


def _check_performance(params: dict) -> None:
    """Performance shows the recommended layout unless the user picked another; with traffic its first token is the
    answer's p95 at the peak; it never says 'within your targets' for a latency above one. Its headline and the
    pick's row of its per-GPU table are the answer's pick's figures (_check_performance_table, the same page)."""
    sc, ans = _answer(params)
    at = _open("app_pages/Performance.py", params)
    _check_performance_table(params, at)
    heads = _metrics(at)
    sentence = [*at.success, *at.info, *at.warning][0].value
    if ans.shows_pick(sc.parallelism) and sc.traffic.requests_per_day and ans.pick.tpot_s:
        assert heads["First token (p95 at peak)"] == ms(ans.pick.ttft_s)
        assert ans.pick.replicas == int(heads["Replicas for your traffic"].replace(",", ""))
    for c in ans.checks if ans.shows_pick(sc.parallelism) and sc.traffic.requests_per_day else ():
        assert c.met  # the answer's own figures meet every target
    target = sc.traffic.ttft_target_s if sc.job.serving == "interactive" else None
    ttft_shown = heads.get("First token (p95 at peak)") or heads.get("Time to first token")
    if target and ttft_shown:
        value_s = float(ttft_shown.replace(",", "").split()[0]) / (1e3 if ttft_shown.endswith(" ms") else 1)
        if value_s > target * 1.005:
            assert "within your targets" not in sentence and "misses the" in sentence


def _check_compare(params: dict, b_gpu: str) -> None:
    """Compare's verdict and B's headline figures are the core's comparison of A and B."""
    from gpuplan_core import variant

    values, problems = read_link({**params, "b_gpu": b_gpu})
    assert not problems, problems
    sc, _ = to_scenario(values)
    sc_b, _ = variant(sc, values)
    report = api.compare_report(sc, sc_b, OFFERS)
    at = _open("app_pages/Compare.py", {**params, "b_gpu": b_gpu})
    _check_compare_a(params, at)  # B is another GPU: side A is still the sidebar's answer
    boxes = [*at.success, *at.info, *at.warning]
    assert boxes[0].value.replace("\\", "") == report.comparison.verdict
    heads = _metrics(at)
    for row in report.comparison.rows:
        if f"{row.metric}, B" in heads:
            assert heads[f"{row.metric}, B"] == row.b


def _check_memory(params: dict) -> None:
    """The Memory page headlines the answer's memory per GPU, its GPU count and that its layout fits; without a pick
    it never names a count as what it takes."""
    from gpuplan_core import get_gpu

    sc, ans = _answer(params)
    at = _open("app_pages/Memory.py", params)
    heads = _metrics(at)
    sentence = [*at.success, *at.info, *at.warning][0].value.replace("\\", "")
    if ans.pick is None:
        assert "it takes" not in sentence and "GPUs" not in heads
        return
    p = ans.pick
    assert heads[memory_label(ans)] == gb(ans.memory_per_gpu_bytes)  # a split's: "(decode worker)"
    assert heads["GPUs"] == f"{p.gpus:,}"
    assert heads[f"Fits {p.gpus:,} x {get_gpu(p.gpu).label}?"] == "yes"
    assert f"it takes {p.gpus:,} x {get_gpu(p.gpu).label}" in sentence and "short" not in sentence


def _check_compare_a(params: dict, at: AppTest | None = None) -> None:
    """Compare's side A is the sidebar's answer: its GPUs, memory per GPU, first token, time per token and monthly
    cost are the Overview's (``at``: the Compare page already opened from ``params`` and a B side)."""
    from gpuplan_core import get_gpu

    sc, ans = _answer(params)
    at = at or _open("app_pages/Compare.py", params)
    side_a = next(m.value for m in at.markdown if m.value.startswith("**A:**")).replace("\\", "")
    table = at.dataframe[0].value.set_index("measure")["A"]
    if ans.pick is None:
        assert table["Fits"] == "no"
        return
    p = ans.pick
    assert side_a.startswith(f"**A:** {p.gpus:,} x {get_gpu(p.gpu).label}")
    assert table["Memory per GPU"] == gb(ans.memory_per_gpu_bytes)
    if p.ttft_s is not None:
        assert table["Time to first token"] == ms(p.ttft_s)
        assert table["Time per output token"] == ms(p.tpot_s)
    if p.monthly_usd is not None and sc.job.mode == "inference":
        assert table["Cost per month"] == usd(p.monthly_usd)
    if sc.job.mode != "inference":
        assert table["Cost of the training run"] == usd(p.run_cost_usd)


def _cli_flags(sc) -> list[str]:
    """The scenario as CLI flags: every field the plan command has a flag for, at the scenario's value."""
    from gpuplan_core.interface.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    flags = {a.dest: a.option_strings[0] for a in sub.choices["plan"]._actions if a.option_strings}
    out = []
    for name, value in sc.flat().items():
        if name not in flags or (value is None and name in ("preset", "config_text", "params")):
            continue
        out += [flags[name], "none" if value is None else str(value)]
    return out


# Each random question is asked once and every page is checked against its answer: a new serving question costs
# seconds (its layouts simulated), a page opened from it a few hundred milliseconds.
@SETTINGS
@given(inference, st.sampled_from(["H200", "L40S", "A100 SXM 80GB"]))
def test_inference_pages_state_the_answer(params, b_gpu):
    _check_overview(params)
    _check_cost(params)
    _check_performance(params)
    _check_compare(params, b_gpu)
    _check_memory(params)


@SETTINGS
@given(pretraining)
def test_pretraining_pages_state_the_answer(params):
    _check_overview(params)
    _check_cost(params)
    _check_memory(params)


@SETTINGS
@given(pretraining_count)
def test_pretraining_on_a_set_count_pages_state_the_answer(params):
    _check_memory(params)
    _check_compare_a(params)


@SETTINGS
@given(finetuning)
def test_finetuning_pages_state_the_answer(params):
    _check_overview(params)
    _check_cost(params)
    _check_memory(params)
    _check_compare_a(params)


def _check_performance_table(params: dict, at: AppTest) -> None:
    """Performance (``at``, opened from ``params``): the headline first token and time per token, and the pick's row
    of the per-GPU table (each GPU type as the plan runs it at this load), are the answer's pick's figures."""
    from gpuplan_core import rate

    sc, ans = _answer(params)
    if sc.job.mode != "inference" or ans.pick is None or ans.pick.ttft_s is None or not ans.shows_pick(sc.parallelism):
        return
    heads = _metrics(at)
    label = "First token (p95 at peak)" if sc.traffic.requests_per_day and ans.pick.tpot_s else "Time to first token"
    assert heads[label] == ms(ans.pick.ttft_s)
    if sc.traffic.requests_per_day and ans.pick.tpot_s:
        assert heads["Tokens/s per user"] == rate(1 / ans.pick.tpot_s, "")
    ttft, tpot = perf_latency_headers(bool(sc.traffic.requests_per_day))  # p95 and mean under traffic: so labelled
    table = next(d.value for d in at.dataframe if ttft in d.value.columns and "layout" in d.value.columns)
    rows = table[table["GPU"] == f"{ans.pick.gpu} (the pick)"]
    assert len(rows) == 1, list(table["GPU"])
    row = rows.iloc[0]
    assert row["layout"] == ans.pick.layout and int(row["replicas"]) == ans.pick.replicas
    assert float(row[ttft]) == pytest.approx(ans.pick.ttft_s * 1e3, rel=5e-3)
    if ans.pick.tpot_s:
        assert float(row[tpot]) == pytest.approx(ans.pick.tpot_s * 1e3, rel=5e-3)


def test_the_memory_pages_gpu_table_row_of_the_answer_is_the_answers_memory():
    """Issue 27's pre-training link (64 x H100 SXM, ZeRO-2, micro-batch 2, no recompute: 64.8 GB per GPU since the
    training step knows its kernel stack, issue 29): the Memory page's table of GPU types said 85.0 GB on the answer's own row (a
    budget kept for another type's pick at the same layout but a larger micro-batch). Each row's memory is its own
    pick's; the answer's row is the headline's."""
    link = {"workload": "Pre-training", "src": "Model size only", "tokens_b": "1000", "gpu": "H100 SXM", "gpus": "64"}
    at = open_page("app_pages/Memory.py", link)
    assert not at.exception, at.exception
    sc, _ = to_scenario(read_link(link)[0])
    ans = api.answer_report(sc, offers=load_pricing().offers)
    table = next(d.value for d in at.dataframe if "memory per GPU there (GB)" in d.value.columns)
    row = table.set_index("GPU").loc[ans.pick.gpu]
    assert "the answer" in row["layout search: note"]
    assert float(row["memory per GPU there (GB)"]) == round(ans.memory_per_gpu_bytes / 1e9, 1) == 64.8
    assert next(m.value for m in at.metric if m.label == "Memory per GPU") == gb(ans.memory_per_gpu_bytes)


def test_the_overviews_targets_print_the_latencies_as_the_headlines_do():
    """One rounding rule for a figure: the Overview's "Targets:" line prints the pick's p95 first token and time per
    token as the Performance headline does (``ms``: 36.9 ms, never a second rounding to 37 ms), and the per-GPU
    table names what its latency columns hold under traffic (p95 first token, mean time per token)."""
    params = {"model": "Llama-3.1-70B", "rpd": "50000"}
    sc, ans = _answer(params)
    p = ans.pick
    assert p is not None and p.tpot_s and ans.checks
    caption = next(c.value for c in _open("app_pages/overview.py", params).caption if c.value.startswith("Targets:"))
    assert f"({ms(p.ttft_s)})" in caption and f"({ms(p.tpot_s)})" in caption, caption
    at = _open("app_pages/Performance.py", params)
    assert f"({ms(p.tpot_s)} per token" in [*at.success, *at.info, *at.warning][0].value
    table = next(d.value for d in at.dataframe if "layout" in d.value.columns and "GPU" in d.value.columns)
    assert {"p95 TTFT (ms)", "mean TPOT (ms)"} <= set(table.columns) and "TTFT (ms)" not in table.columns
