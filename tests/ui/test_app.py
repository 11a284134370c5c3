"""AppTest: every page renders on defaults, at slider extremes and from deep links; no exception.

The app is one frame (app.py: navigation, sidebar, scenario) running the page files under app_pages/. A
deep link is emulated with query params and switch_page before the first run: Streamlit then picks the
page by its file name, which is its url path. Cross-page behaviour in a real browser is in tests/e2e.
"""

import ast
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from gpuplan_core import api, load_pricing
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_ui import fetches
from tests.ui.apptest import open_page, texts

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = [f"app_pages/{f}" for f, *_ in __import__("gpuplan_ui.frame").frame.PAGES]
OVERVIEW, MEMORY, PERF, COST, COMPARE, DATA, METHODOLOGY = PAGES


def title(spec: dict) -> str:
    """A chart's title as one line (titles are wrapped with <br> to fit half-width columns)."""
    return spec["layout"]["title"]["text"].replace("<br>", " ")


def run_page(page: str, params: dict | None = None) -> AppTest:
    return open_page(page, params, timeout=60)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_defaults(page):
    at = run_page(page)
    assert_clean(at)
    assert at.title


EXTREMES = [
    {"in": "1000000", "out": "48576", "batch": "4096", "model": "Llama-3.1-405B"},
    {"src": "Model size only", "size_b": "2000B", "workload": "Pre-training", "ctx": "128", "batch": "1"},
    {"src": "Model size only", "size_b": "0.5B", "weights": "Ideal packed 4-bit (lower bound)", "kv": "FP8 (E4M3)"},
    {"workload": "Fine-tuning", "method": "QLoRA (4-bit base)", "model": "DeepSeek-V3", "ctx": "1024k"},
    {"model": "Mixtral-8x7B-v0.1", "gpus": "4096", "tp": "64", "pp": "64", "batch_max": "true"},
    {"provider": "modal", "billing": "Serverless", "rpd": "1000000000", "ttft_ms": "1", "tpot_ms": "1"},
]


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("params", EXTREMES, ids=[f"extreme{i}" for i in range(len(EXTREMES))])
def test_pages_survive_extremes(page, params):
    at = run_page(page, params)
    assert not at.exception, [e.message for e in at.exception]


def test_deep_link_reproduces_the_scenario_on_memory():
    at = run_page(MEMORY, {"model": "Llama-3.1-70B", "in": "7936", "out": "256", "batch": "4"})
    assert_clean(at)
    assert at.sidebar.selectbox(key="model").value == "Llama-3.1-70B"
    assert at.sidebar.number_input(key="in").value == 7936
    comps = at.dataframe[0].value
    kv = comps.loc[comps["component"] == "KV cache", "bytes"].iloc[0]
    assert kv == 327_680 * (7936 + 256) * 4  # Llama-3.1-70B KV bytes/token x (input + output) x 4 sequences


def test_an_older_link_with_a_context_shows_the_same_numbers_and_says_how_it_was_read():
    old = run_page(MEMORY, {"model": "Llama-3.1-70B", "ctx": "8k", "batch": "4"})
    assert not old.exception
    assert "read as 7,936 input + 256 output tokens" in texts(old)
    assert old.dataframe[0].value.equals(run_page(MEMORY, {"model": "Llama-3.1-70B", "in": "7936", "out": "256",
                                                            "batch": "4"}).dataframe[0].value)  # fmt: skip


def test_deep_link_training_on_cost():
    at = run_page(
        COST,
        {
            "workload": "Pre-training",
            "src": "Model size only",
            "size_b": "7B",
            "tokens_b": "1000",
            "mfu": "0.5",
            "gpus": "8",
            "zero": "3",
        },
    )
    assert_clean(at)
    assert "FLOPs" in texts(at)


@pytest.mark.parametrize("page", [MEMORY, COST])
def test_training_pages_show_the_predicted_mfu_with_its_band_and_an_override(page):
    """No MFU given: the page states the answer's predicted MFU, its band and the wall time's band; an MFU given
    (a link's ``mfu``) is used as given and said so."""
    link = {"workload": "Pre-training", "model": "Llama-3.1-8B", "gpu": "H100 SXM", "gpus": "8", "tokens_b": "100"}
    at = run_page(page, link)
    assert_clean(at)
    sc, _ = to_scenario({"workload": "pretrain", "model": "Llama-3.1-8B", "gpu": "H100-SXM", "gpus": 8,
                         "tokens_b": 100.0})  # fmt: skip
    pick = api.answer_report(sc).pick
    line = next(t for t in texts(at).splitlines() if t.startswith("Predicted MFU"))
    assert f"**{pick.mfu:.2f}** (band {pick.mfu_low:.2f}-{pick.mfu_high:.2f}" in line
    assert f"**{pick.wall_hours:,.1f} h** wall time" in line
    given = run_page(page, {**link, "mfu": "0.33"})
    assert_clean(given)
    assert "Run time at your MFU of 0.33" in texts(given)


def test_invalid_link_values_show_a_note_not_a_crash():
    at = run_page(PERF, {"in": "abc", "gpu": "H900", "batch": "-4", "workload": "<script>"})
    assert not at.exception
    warnings = "\n".join(w.value for w in at.warning)
    assert "in='abc'" in warnings and "gpu='H900'" in warnings and "batch='-4'" in warnings
    assert "\\<script\\>" in warnings  # shown escaped, as text
    assert at.sidebar.number_input(key="in").value == 2000  # the default
    assert at.sidebar.number_input(key="batch").value == 8
    assert dict(at.query_params) == {}  # taken out of the address: the widgets start from a clean link


def test_switching_pages_keeps_the_scenario():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.sidebar.selectbox(key="model").set_value("Qwen2.5-7B").run()
    at.sidebar.number_input(key="out").set_value(700.0).run()
    for page in PAGES[1:]:
        at.switch_page(page).run()  # the first run on the new page already has the values
        assert at.sidebar.selectbox(key="model").value == "Qwen2.5-7B", page
        assert at.sidebar.number_input(key="out").value == 700, page
        assert_clean(at)


def test_a_page_shows_the_scenario_the_frame_built():
    """The page reads the frame's scenario: the numbers follow the sidebar on the first run after a change. The
    Memory page budgets the answer's layout, so the KV cache is split over its tensor-parallel ranks."""
    at = run_page(MEMORY)
    before = at.dataframe[0].value.set_index("component").loc["KV cache", "bytes"]
    at.sidebar.number_input(key="in").set_value(4000.0).run()
    after = at.dataframe[0].value.set_index("component").loc["KV cache", "bytes"]
    offers = load_pricing().offers
    tp_before = api.answer_report(to_scenario({})[0], offers=offers).pick.tp
    tp_after = api.answer_report(to_scenario({"in": 4000})[0], offers=offers).pick.tp
    # bytes/token x (input + output, in whole 16-token KV blocks) x batch 8, over the pick's TP ranks (8 KV heads)
    assert before == 131_072 * 2304 * 8 // tp_before and after == 131_072 * 4304 * 8 // tp_after


def test_the_fine_tuning_method_stays_whatever_else_changes():
    at = run_page(MEMORY, {"workload": "Fine-tuning"})
    at.sidebar.number_input(key="batch").set_value(4.0).run()
    at.sidebar.selectbox(key="method").set_value("full").run()
    assert at.sidebar.selectbox(key="method").value == "full"
    at.sidebar.selectbox(key="workload").set_value("interactive").run()  # the method does not apply to serving...
    kept = next(e for e in at.sidebar.expander if e.label.startswith("Kept in the link"))
    assert kept.selectbox(key="method").value == "full"  # ...so it is kept, visibly, in the link
    at.sidebar.selectbox(key="workload").set_value("finetune").run()
    assert at.sidebar.selectbox(key="method").value == "full"
    assert_clean(at)


def test_overview_recommendation_and_targets():
    at = run_page(OVERVIEW, {"tpot_ms": "1"})
    assert_clean(at)
    # nothing qualifies: the binding constraint, with its numbers
    assert re.search(r"Even one request alone takes [\d.]+ ms per token on the fastest layout \(\d x \S+, TP \d\); a "
                     r"TPOT of 1 ms is not reachable with these GPUs", texts(at))  # fmt: skip
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


def test_core_never_imports_streamlit():
    for path in (ROOT / "gpuplan_core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            assert not any(n.split(".")[0] == "streamlit" for n in names), f"{path} imports streamlit"


def test_no_unsafe_html_no_pickle_no_eval():
    """Nothing from a URL or upload is executed, unpickled or rendered as raw HTML."""
    for path in [
        ROOT / "app.py",
        *(ROOT / "app_pages").glob("*.py"),
        *(ROOT / "gpuplan_ui").glob("*.py"),
        *(ROOT / "gpuplan_core").glob("*.py"),
    ]:
        text = path.read_text()
        if path.name == "page.py":  # the meeting view's fixed stylesheet: a constant, no value of anyone's in it
            from gpuplan_ui.page import MEETING_CSS

            assert "{" not in MEETING_CSS.replace("{ ", "").replace("{\n", "") and "<script" not in MEETING_CSS
            text = text.replace("st.html(MEETING_CSS)", "")
        for banned in ("unsafe_allow_html=True", "pickle", "eval(", "exec(", "yaml.load(", "st.html("):
            assert banned not in text, f"{banned} in {path.name}"


def test_link_text_is_escaped_in_notes():
    at = run_page(MEMORY, {"gpu": "![x](http://evil.example/t.png)"})
    assert not at.exception
    note = next(w.value for w in at.warning if "gpu=" in w.value)
    assert "!\\[x\\]" in note  # shown as text, never as an image or a link


def _keys(at: AppTest) -> set[str]:
    return {w.key for kind in ("selectbox", "number_input", "slider", "select_slider") for w in at.sidebar.get(kind)}


def test_closed_groups_at_defaults_build_no_widgets_and_use_the_defaults():
    at = run_page(COST)
    assert_clean(at)
    assert "Changed in closed groups" not in texts(at)
    built = _keys(at)
    assert {"model", "weights", "in", "out", "batch", "gpu"} <= built
    assert not built & {"gpus", "tp", "pp", "rpd", "ttft_ms", "tpot_ms", "billing", "provider", "hours", "busy"}
    assert "**730 hours a month**" in texts(at)  # the default hours reached the cost engine


def test_a_link_value_builds_its_group_and_reaches_the_scenario():
    at = run_page(COST, {"hours": "200"})
    assert_clean(at)
    assert at.sidebar.number_input(key="hours").value == 200
    assert {"billing", "provider", "prices", "hours", "busy"} <= _keys(at)  # the whole Pricing group is built
    assert "gpus" not in _keys(at)  # other groups stay unbuilt
    assert "**200 hours a month**" in texts(at)
    assert "Changed in closed groups: Pricing: hours/month 200" in texts(at)  # visible while collapsed


def test_an_edited_group_stays_built_after_it_is_closed():
    at = run_page(COST)
    at.session_state["open_pricing"] = True  # the user opens Pricing
    at.run()
    assert "hours" in _keys(at)
    at.sidebar.number_input(key="hours").set_value(300.0).run()
    at.session_state["open_pricing"] = False  # ...and closes it again
    at.run()
    assert_clean(at)
    assert at.sidebar.number_input(key="hours").value == 300  # still built: its value stays in the link
    assert "**300 hours a month**" in texts(at)
    assert "Changed in closed groups: Pricing: hours/month 300" in texts(at)
    at.sidebar.number_input(key="hours").set_value(730.0).run()  # back to the default: the group may go
    at.run()
    assert "hours" not in _keys(at)
    assert "**730 hours a month**" in texts(at)
    assert "Changed in closed groups" not in texts(at)


def test_a_hugging_face_id_that_cannot_be_fetched_says_so_and_shows_no_results(monkeypatch):
    """A failed model load: the page says why and shows no numbers (they would be another model's); the last model
    that loaded is offered by name; what the user typed stays."""
    import gpuplan_core.pricing.fetch

    def offline(model_id, **kw):
        raise gpuplan_core.pricing.fetch.FetchError("huggingface.co is not reachable from this server")

    monkeypatch.setattr(gpuplan_core, "fetch_hf_config", offline)
    fetches._fetch_hf_config.clear()
    for page in (MEMORY, OVERVIEW, PERF, COST, COMPARE):
        at = run_page(page, {"src": "Hugging Face config", "hf": "meta-llama/Llama-3.1-8B"})
        assert not at.exception
        error = " ".join(e.value for e in at.error)
        assert "Could not fetch 'meta-llama/Llama-3.1-8B': huggingface.co is not reachable" in error
        assert "Upload its config.json instead" in error and "No results are shown" in error
        assert not at.get("plotly_chart") and not at.dataframe and not at.metric and not at.success
        assert at.sidebar.text_input(key="hf").value == "meta-llama/Llama-3.1-8B"  # what the user typed stays
    # a session that had a model: the page offers it back by name, and one click shows its numbers again
    at = AppTest.from_file(APP, default_timeout=60).switch_page(MEMORY).run()
    at.sidebar.radio(key="src").set_value("config").run()
    at.sidebar.text_input(key="hf").input("meta-llama/Llama-3.1-8B").run()
    back = next(b for b in at.button if b.key == "last_good_model")
    assert back.label == "Show Llama-3.1-8B instead"
    back.click().run()
    assert not at.error and at.metric


def _load_link(at: AppTest, url: str) -> AppTest:
    at.text_input(key="pricing_url").input(url)
    next(b for b in at.button if b.label == "Load").click()
    return at.run()


def test_a_pricing_link_that_cannot_be_fetched_says_so_and_keeps_the_bundled_prices(monkeypatch):
    import gpuplan_core.pricing.fetch

    def offline(url, **kw):
        raise gpuplan_core.pricing.fetch.FetchError("could not reach raw.githubusercontent.com (offline?)")

    monkeypatch.setattr(gpuplan_core, "fetch_pricing", offline)
    fetches._fetch_pricing.clear()
    at = run_page(DATA)
    bundled_rows = len(at.dataframe[-1].value)
    at = _load_link(at, "https://raw.githubusercontent.com/team/prices/main/prices.csv")
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    assert "Could not load prices from https://raw.githubusercontent.com/team/prices/main/prices.csv" in err
    assert "could not reach raw.githubusercontent.com (offline?)" in err and "bundled prices stay in use" in err
    assert at.text_input(key="pricing_url").value.endswith("prices.csv")  # what the user typed stays
    assert len(at.dataframe[-1].value) == bundled_rows


def _one_offer_file(price: float = 0.01) -> str:
    """The bundled file's header and first offer, at another price: one offer of yours with a bundled id."""
    lines = (ROOT / "data" / "pricing.csv").read_text().splitlines()
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO("\n".join(lines[:2]) + "\n")))
    rows[0]["price_per_gpu_hour_usd"] = str(price)
    rows[0]["price_per_node_hour_usd"] = str(price * float(rows[0]["gpus_per_node"]))
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def test_a_pricing_link_is_added_to_the_bundled_offers_and_can_be_used_alone(monkeypatch):
    import gpuplan_core.pricing.fetch
    from gpuplan_core.pricing.csv_file import load_pricing, load_pricing_text

    mine = _one_offer_file()
    monkeypatch.setattr(gpuplan_core, "fetch_pricing", lambda url, **kw: load_pricing_text(mine))
    fetches._fetch_pricing.clear()
    at = _load_link(run_page(DATA), "https://gist.githubusercontent.com/team/abc/raw/prices.csv")
    assert_clean(at)
    n = len(load_pricing().offers)
    assert any("Using 1 offers from https://gist.githubusercontent.com" in s.value for s in at.success)
    table = at.dataframe[-1].value
    assert len(table) == n  # the bundled offers + yours, yours replacing the bundled offer with the same id
    offer_id = load_pricing_text(mine).offers[0].offer_id
    assert table.set_index("offer").loc[offer_id, "USD/GPU-hour"] == 0.01
    assert "1 replace bundled offers with the same id" in texts(at)
    at.switch_page(COST).run()  # every page uses the same prices, and says so
    assert f"Prices: the {n} bundled offers + your 1 (1 replace" in texts(at)
    at.session_state["open_pricing"] = True
    at.run()
    at.sidebar.selectbox(key="prices").set_value("only").run()
    at.switch_page(DATA).run()
    assert len(at.dataframe[-1].value) == 1 and "your 1 offers only" in texts(at)


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
    for step in ("Requests per day: 50,000", "Peak requests per second: 1.74", "One replica's capacity", "Replicas",
                 "GPUs and machines", "Monthly cost"):  # fmt: skip
        assert step in why, step
    assert any(title(json.loads(c.proto.spec)).startswith("A faster first token costs more")
               for c in at.get("plotly_chart"))  # fmt: skip


def _differences(at: AppTest) -> dict[str, dict[str, str]]:
    """Compare's differences table: measure -> {A, B, B - A, change}."""
    df = next(d.value for d in at.dataframe if list(d.value.columns)[:3] == ["measure", "A", "B"])
    return {r["measure"]: r for r in df.to_dict("records")}


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
    rows = _differences(at)
    for side in ("A", "B"):
        if rows["Fits"][side] == "no":
            for cost in ("Cost per month", "Cost per 1M output tokens"):
                assert cost not in rows or rows[cost][side] == "n/a"
            assert f"{side} has no configuration." in texts(at)


def test_compare_b_as_a_copy_is_identical_and_a_change_gets_a_verdict():
    at = run_page(COMPARE, {"gpu": "H100 SXM"})
    assert_clean(at)
    assert at.info[0].value == "A and B are identical: every number is the same."
    rows = _differences(at)
    assert all(r["B - A"] in ("0", "same") for r in rows.values())
    at = run_page(COMPARE, {"gpu": "H100 SXM", "b_gpu": "H200"})
    verdict = at.success[0].value
    assert re.match(
        r"B runs 1 x H200 instead of 1 x H100 SXM; B is \d+% (cheaper|more expensive) per month and [\d.]+x "
        r"(faster|slower) per token; both fit\.",
        verdict,
    )


def test_todays_prices_from_the_skypilot_catalogs_offline_and_online(monkeypatch):
    import gpuplan_core.pricing.fetch
    from gpuplan_core.pricing.csv_file import load_pricing, load_pricing_text

    monkeypatch.setattr(gpuplan_core, "fetch_skypilot_catalogs", lambda **kw: ([], ["aws: offline", "gcp: offline"]))
    fetches._fetch_catalogs.clear()
    at = run_page(DATA)
    n = len(at.dataframe[-1].value)
    next(b for b in at.button if b.label.startswith("Load today's prices")).click()
    at.run()
    assert not at.exception
    assert "Could not load prices from the SkyPilot catalogs: aws: offline; gcp: offline" in " ".join(
        e.value for e in at.error
    )
    assert len(at.dataframe[-1].value) == n  # the bundled prices stay
    fresh = load_pricing_text(_one_offer_file(1.5)).offers
    monkeypatch.setattr(gpuplan_core, "fetch_skypilot_catalogs", lambda **kw: (fresh, ["gcp: offline"]))
    fetches._fetch_catalogs.clear()
    next(b for b in at.button if b.label.startswith("Load today's prices")).click()
    at.run()
    assert any("Using 1 offers from the SkyPilot catalogs (today)" in s.value for s in at.success)
    assert len(at.dataframe[-1].value) == len(load_pricing().offers)  # the same id replaces its bundled offer
