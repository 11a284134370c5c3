"""A sidebar change that leaves the sidebar as it was reruns only the page (gpuplan_ui/frame.py): the page's
answer must be the one a whole-app run gives for the same values, and any change that alters the sidebar must
rerun the whole app. AppTest's tree holds only what the last run sent, so a page-only rerun shows as a tree
without the sidebar. With page reruns on, the pages are functions (AppTest can only show the default page, the
Overview); tests/e2e/test_browser.py checks the other pages in a browser."""

from streamlit.testing.v1 import AppTest

from gpuplan_ui.state import PAGE_RERUNS_ENV
from tests.ui.apptest import APP, open_sections


def _overview(params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return open_sections(at).run()


def _headline(at) -> list[tuple[str, str]]:
    return [(m.label, m.value) for m in at.metric] + [("answer", s.value) for s in [*at.success, *at.warning]]


def test_a_value_change_reruns_only_the_page_with_the_answer_of_a_whole_run(monkeypatch):
    monkeypatch.setenv(PAGE_RERUNS_ENV, "1")
    at = _overview()
    assert at.sidebar.number_input(key="out").value == 300  # the chat use case's answer length
    at.sidebar.number_input(key="out").set_value(700.0).run()
    assert not at.exception
    # the sidebar was not sent again: only the page ran, and the box's own pair (its slider follows the box)
    assert [w.key for w in at.sidebar.get("number_input")] == ["out"]
    assert [(w.key, w.value) for w in at.sidebar.get("select_slider")] == [("out__slider", 700)]
    assert not at.sidebar.get("selectbox")
    partial = _headline(at)
    whole = _overview({"out": "700"})
    assert len(whole.sidebar.children) > 0
    assert partial == _headline(whole) and partial != _headline(_overview())


def test_a_change_that_alters_the_sidebar_reruns_the_whole_app(monkeypatch):
    monkeypatch.setenv(PAGE_RERUNS_ENV, "1")
    at = _overview()
    at.sidebar.selectbox(key="workload").set_value("pretrain").run()  # other inputs apply: the sidebar changes
    assert not at.exception
    assert at.sidebar.select_slider(key="ctx").value == 4096  # the training inputs are built: a whole run
    at.sidebar.select_slider(key="ctx").set_value(8192).run()  # then a value: the page alone
    assert len(at.sidebar.children) == 0
    assert _headline(at) == _headline(_overview({"workload": "Pre-training", "ctx": "8192"}))


def test_whole_app_reruns_when_turned_off(monkeypatch):
    monkeypatch.setenv(PAGE_RERUNS_ENV, "0")
    at = _overview()
    at.sidebar.number_input(key="out").set_value(700.0).run()
    assert at.sidebar.number_input(key="out").value == 700
