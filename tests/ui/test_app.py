"""AppTest: every page renders on defaults, at slider extremes and from deep links; no exception.

With a pages/ folder Streamlit runs the legacy multipage mode, so each page is tested from a fresh
AppTest with query params and switch_page before the first run (research/pages-folder.md).
Cross-page state in a real browser is covered by tests/e2e.
"""

import ast
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = ["app.py"] + sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))


def run_page(page: str, params: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    if page != "app.py":
        at.switch_page(page)
    return at.run()


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.error] + [w.value for w in at.warning]
    parts += [s.value for s in at.success] + [i.value for i in at.info] + [c.value for c in at.caption]
    return "\n".join(str(p) for p in parts)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_defaults(page):
    at = run_page(page)
    assert_clean(at)
    assert at.title


EXTREMES = [
    {"ctx": "1024k", "batch": "4096", "model": "Llama-3.1-405B"},
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
    at = run_page("pages/1_Memory.py", {"model": "Llama-3.1-70B", "ctx": "8k", "batch": "4"})
    assert_clean(at)
    assert at.sidebar.selectbox(key="model").value == "Llama-3.1-70B"
    assert at.sidebar.select_slider(key="ctx").value == 8192
    comps = at.dataframe[0].value
    kv = comps.loc[comps["component"] == "KV cache", "bytes"].iloc[0]
    assert kv == 327_680 * 8192 * 4  # Llama-3.1-70B KV bytes/token x 8,192 tokens x 4 sequences


def test_deep_link_training_on_cost():
    at = run_page(
        "pages/3_Cost.py",
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


def test_invalid_link_values_show_a_note_not_a_crash():
    at = run_page("pages/2_Performance.py", {"ctx": "abc", "gpu": "H900", "batch": "-4", "workload": "<script>"})
    assert not at.exception
    warnings = "\n".join(w.value for w in at.warning)
    assert "ctx='abc'" in warnings and "gpu='H900'" in warnings and "batch='-4'" in warnings
    assert "\\<script\\>" in warnings  # shown escaped, as text
    assert at.sidebar.select_slider(key="ctx").value == 4096  # the default


def test_switching_pages_keeps_the_scenario():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.sidebar.selectbox(key="model").set_value("Qwen2.5-7B").run()
    at.switch_page("pages/1_Memory.py").run()
    at.run()  # legacy pages/ mode: the first run after a switch may see defaults (research/pages-folder.md)
    assert at.sidebar.selectbox(key="model").value == "Qwen2.5-7B"
    assert_clean(at)


def test_overview_recommendation_and_targets():
    at = run_page("app.py", {"tpot_ms": "1"})
    assert_clean(at)
    assert "No configuration fits and meets the targets" in texts(at)
    ok = run_page("app.py")
    assert ok.success and "Rent" in ok.success[0].value


def test_memory_chart_spec():
    at = run_page("pages/1_Memory.py")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["name"] == "weights"


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
        *(ROOT / "pages").glob("*.py"),
        *(ROOT / "gpuplan_ui").glob("*.py"),
        *(ROOT / "gpuplan_core").glob("*.py"),
    ]:
        text = path.read_text()
        for banned in ("unsafe_allow_html=True", "pickle", "eval(", "exec(", "yaml.load(", "st.html("):
            assert banned not in text, f"{banned} in {path.name}"


def test_link_text_is_escaped_in_notes():
    at = run_page("pages/1_Memory.py", {"gpu": "![x](http://evil.example/t.png)"})
    assert not at.exception
    note = next(w.value for w in at.warning if "gpu=" in w.value)
    assert "!\\[x\\]" in note  # shown as text, never as an image or a link


def _keys(at: AppTest) -> set[str]:
    return {w.key for kind in ("selectbox", "number_input", "slider", "select_slider") for w in at.sidebar.get(kind)}


def test_closed_groups_at_defaults_build_no_widgets_and_use_the_defaults():
    at = run_page("pages/3_Cost.py")
    assert_clean(at)
    assert "Changed in closed groups" not in texts(at)
    built = _keys(at)
    assert {"model", "weights", "ctx", "batch", "gpu"} <= built
    assert not built & {"gpus", "tp", "pp", "rpd", "ttft_ms", "tpot_ms", "billing", "provider", "hours", "busy"}
    assert "**730 h/month**" in texts(at)  # the default hours reached the cost engine


def test_a_link_value_builds_its_group_and_reaches_the_scenario():
    at = run_page("pages/3_Cost.py", {"hours": "200"})
    assert_clean(at)
    assert at.sidebar.number_input(key="hours").value == 200
    assert {"billing", "provider", "hours", "busy"} <= _keys(at)  # the whole Pricing group, so the link keeps it
    assert "gpus" not in _keys(at)  # other groups stay unbuilt
    assert "**200 h/month**" in texts(at)
    assert "Changed in closed groups: Pricing: hours/month 200" in texts(at)  # visible while collapsed


def test_an_edited_group_stays_built_after_it_is_closed():
    at = run_page("pages/3_Cost.py")
    at.session_state["open_billing"] = True  # the user opens Pricing
    at.run()
    assert "hours" in _keys(at)
    at.sidebar.number_input(key="hours").set_value(300.0).run()
    at.session_state["open_billing"] = False  # ...and closes it again
    at.run()
    assert_clean(at)
    assert at.sidebar.number_input(key="hours").value == 300  # still built: its value stays in the link
    assert "**300 h/month**" in texts(at)
    assert "Changed in closed groups: Pricing: hours/month 300" in texts(at)
    at.sidebar.number_input(key="hours").set_value(730.0).run()  # back to the default: the group may go
    at.run()
    assert "hours" not in _keys(at)
    assert "**730 h/month**" in texts(at)
    assert "Changed in closed groups" not in texts(at)


def test_a_hugging_face_id_that_cannot_be_fetched_says_so_and_keeps_the_page(monkeypatch):
    import gpuplan_core.net
    from gpuplan_ui import cached

    def offline(model_id, **kw):
        raise gpuplan_core.net.FetchError("huggingface.co is not reachable from this server")

    monkeypatch.setattr(gpuplan_core.net, "fetch_hf_config", offline)
    cached._fetch_hf_config.clear()
    at = run_page("pages/1_Memory.py", {"src": "Hugging Face config", "hf": "meta-llama/Llama-3.1-8B"})
    assert not at.exception
    notes = " ".join(w.value for w in at.warning)
    assert "Could not fetch 'meta-llama/Llama-3.1-8B': huggingface.co is not reachable" in notes
    assert "Upload its config.json instead" in notes
    assert at.sidebar.text_input(key="hf").value == "meta-llama/Llama-3.1-8B"  # what the user typed stays


def _load_link(at: AppTest, url: str) -> AppTest:
    at.text_input(key="pricing_url").input(url)
    next(b for b in at.button if b.label == "Load").click()
    return at.run()


def test_a_pricing_link_that_cannot_be_fetched_says_so_and_keeps_the_bundled_prices(monkeypatch):
    import gpuplan_core.net
    from gpuplan_ui import cached

    def offline(url, **kw):
        raise gpuplan_core.net.FetchError("could not reach raw.githubusercontent.com (offline?)")

    monkeypatch.setattr(gpuplan_core.net, "fetch_pricing", offline)
    cached._fetch_pricing.clear()
    at = run_page("pages/5_Data.py")
    bundled_rows = len(at.dataframe[-1].value)
    at = _load_link(at, "https://raw.githubusercontent.com/team/prices/main/prices.csv")
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    assert "Could not load prices from https://raw.githubusercontent.com/team/prices/main/prices.csv" in err
    assert "could not reach raw.githubusercontent.com (offline?)" in err and "bundled prices stay in use" in err
    assert at.text_input(key="pricing_url").value.endswith("prices.csv")  # what the user typed stays
    assert len(at.dataframe[-1].value) == bundled_rows


def test_a_pricing_link_replaces_the_prices_for_the_session(monkeypatch):
    import gpuplan_core.net
    from gpuplan_core.pricing import load_pricing_text
    from gpuplan_ui import cached

    three = "\n".join((ROOT / "data" / "pricing.csv").read_text().splitlines()[:4]) + "\n"
    monkeypatch.setattr(gpuplan_core.net, "fetch_pricing", lambda url, **kw: load_pricing_text(three))
    cached._fetch_pricing.clear()
    at = _load_link(run_page("pages/5_Data.py"), "https://gist.githubusercontent.com/team/abc/raw/prices.csv")
    assert_clean(at)
    assert any("Using 3 offers from https://gist.githubusercontent.com" in s.value for s in at.success)
    assert len(at.dataframe[-1].value) == 3  # the pricing table now shows the link's offers
    assert at.session_state["pricing_upload_key"].startswith("url-")
