"""AppTest: every page renders on defaults, at slider extremes and from deep links; no exception; the frame keeps
the scenario across pages, builds a sidebar group only when it is used, and the core and pages stay safe (no
streamlit in the core, no unsafe HTML, pickle or eval).

The app is one frame (app.py: navigation, sidebar, scenario) running the page files under app_pages/. A
deep link is emulated with query params and switch_page before the first run: Streamlit then picks the
page by its file name, which is its url path. Cross-page behaviour in a real browser is in tests/e2e. The pages'
own answers are in test_app_pages.py, what the app fetches (a Hugging Face id, a pricing link, today's prices)
in test_app_fetches.py.
"""

import ast
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gpuplan_core import api, load_pricing
from gpuplan_core.interface.inputs import to_scenario
from tests.ui.apptest import (
    APP,
    COST,
    MEMORY,
    OVERVIEW,
    PAGES,
    PERF,
    assert_clean,
    run_page,
    texts,
    title,
)

ROOT = Path(__file__).resolve().parents[2]


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
    assert old.dataframe[0].value.equals(
        run_page(MEMORY, {"model": "Llama-3.1-70B", "in": "7936", "out": "256", "batch": "4"}).dataframe[0].value
    )


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


@pytest.mark.parametrize("page", [OVERVIEW, MEMORY, COST])
def test_training_pages_show_the_predicted_mfu_with_its_band_and_an_override(page):
    """No MFU given: the page states the answer's predicted MFU, its band and the wall time's band; an MFU given
    (a link's ``mfu``) is used as given and said so."""
    link = {"workload": "Pre-training", "model": "Llama-3.1-8B", "gpu": "H100 SXM", "gpus": "8", "tokens_b": "100"}
    at = run_page(page, link)
    assert_clean(at)
    sc, _ = to_scenario(
        {"workload": "pretrain", "model": "Llama-3.1-8B", "gpu": "H100-SXM", "gpus": 8, "tokens_b": 100.0}
    )
    pick = api.answer_report(sc).pick
    line = next(t for t in texts(at).splitlines() if t.startswith("Predicted MFU"))
    assert f"**{pick.mfu:.2f}** (band {pick.mfu_low:.2f}-{pick.mfu_high:.2f}" in line
    assert f"**{pick.wall_hours:,.1f} h** wall time" in line
    given = run_page(page, {**link, "mfu": "0.33"})
    assert_clean(given)
    assert "Run time at your MFU of 0.33" in texts(given)


def test_the_cost_page_states_lora_s_4x_flops_and_the_memory_page_the_core_s_host_ram_sentence():
    """LoRA's FLOPs are 4 x (the frozen base has no weight gradients), as the Overview's why-chain says; the Memory
    page's host-RAM sentence is the budget's own (its figure and DeepSpeed's buffer factor from the core)."""
    link = {"workload": "Fine-tuning", "method": "LoRA", "model": "Llama-3.1-8B", "gpu": "H100 SXM"}
    at = run_page(COST, link)
    assert_clean(at)
    assert "= tokens x (4 x active parameters + causal attention) (4, not 6:" in texts(at)
    link = {"workload": "Pre-training", "model": "Llama-3.1-8B", "gpu": "H100 SXM", "gpus": "8", "zero": "2"}
    at = run_page(MEMORY, {**link, "offload": "Optimizer to CPU RAM (DeepSpeed ZeRO-Offload)"})
    assert_clean(at)
    sc, _ = to_scenario(
        {
            "workload": "pretrain",
            "model": "Llama-3.1-8B",
            "gpu": "H100-SXM",
            "gpus": 8,
            "zero": 2,
            "offload": "optimizer",
        }
    )
    note = api.memory_at_pick(sc, api.answer_report(sc).pick).host_note
    assert "DeepSpeed's 1.5x buffer" in note
    shown = next(i.value for i in at.info if i.value.startswith("**Host RAM:**"))
    assert shown.replace("\\", "") == "**Host RAM:** " + note


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


def test_an_ep_link_fixes_an_moe_models_serving_layout_and_a_dense_model_says_it_is_ignored():
    """/?model=DeepSeek-V3&weights=fp8&gpu=H200&rpd=500000&in=2000&out=500&spec_mtp=off (decoding plainly, so the
    layouts alone differ): the Cost chart's cheapest is 3 EP 8 replicas; with ep=1 in the link, tensor parallel
    alone: 4 TP 8 replicas (the link's ep reaches serving); ep=8 on Llama-3.1-8B (dense) is ignored, and a note says
    so."""
    q = {"model": "DeepSeek-V3", "weights": "FP8 (E4M3)", "gpu": "H200", "rpd": "500000", "in": "2000", "out": "500"}
    q |= {"spec_mtp": "off"}
    for ep, want in ((None, "24 x H200 (EP 8, attention DP)"), ("1", "32 x H200 (TP 8)")):
        at = run_page(COST, q | ({"ep": ep} if ep else {}))
        assert_clean(at)
        titles = [title(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]
        assert any(t.startswith("Cheapest") and want in t for t in titles), titles
    at = run_page(COST, {"ep": "8"})
    assert_clean(at)
    assert "Llama-3.1-8B is dense, so serving ignores it" in texts(at)
