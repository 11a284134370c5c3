"""Opening the app's pages with Streamlit's AppTest, written once for the UI tests."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = [f"app_pages/{f}" for f, *_ in __import__("gpuplan_ui.frame").frame.PAGES]
OVERVIEW, MEMORY, PERF, COST, COMPARE, DATA, METHODOLOGY = PAGES
# A link of issue 27: 64 x H100 SXM pre-training 1,000B tokens at MFU 0.5 (offers once shared a label and their bars
# merged on the Cost chart)
PRETRAINING_64_H100 = {
    "gpu": "H100 SXM",
    "gpus": "64",
    "src": "Model size only",
    "tokens_b": "1000",
    "workload": "Pre-training",
    "mfu": "0.5",
}


# The pages' sections below the fold (gpuplan_ui.page.section), built only while open. The UI tests open them all
# (their tables and charts are what many tests read); tests/ui/test_sections.py checks them closed.
SECTIONS = (
    "mem_parts",
    "mem_gpus",
    "mem_acc",
    "cost_detail",
    "cost_per_run",
    "cost_monthly",
    "cost_serverless",
    "cost_life",
    "cost_site",
    "cost_rejected",
    "cost_market",
    "perf_tpot",
    "perf_roofline",
    "perf_catalog",
    "perf_trust",
    "deploy",
    "rejected",
)


def open_sections(at: AppTest) -> AppTest:
    for key in SECTIONS:
        at.session_state[f"open_{key}"] = True
    return at


def open_page(page: str, params: dict | None = None, timeout: float = 90, sections: bool = True) -> AppTest:
    """A page opened cold from a link: the query parameters, then the page's file under app_pages/; every section
    below the fold open unless ``sections`` is False."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    if sections:
        open_sections(at)
    return at.switch_page(page).run()


def texts(at: AppTest) -> str:
    """Every text element a page shows, one per line (markdown, messages, captions)."""
    parts = [m.value for m in at.markdown] + [e.value for e in at.error] + [w.value for w in at.warning]
    parts += [s.value for s in at.success] + [i.value for i in at.info] + [c.value for c in at.caption]
    return "\n".join(str(p) for p in parts)


def title(spec: dict) -> str:
    """A chart's title as one line (titles are wrapped with <br> to fit half-width columns)."""
    return spec["layout"]["title"]["text"].replace("<br>", " ")


def run_page(page: str, params: dict | None = None) -> AppTest:
    return open_page(page, params, timeout=60)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def differences(at: AppTest) -> dict[str, dict[str, str]]:
    """Compare's differences table: measure -> {A, B, B - A, change}."""
    df = next(d.value for d in at.dataframe if list(d.value.columns)[:3] == ["measure", "A", "B"])
    return {r["measure"]: r for r in df.to_dict("records")}
