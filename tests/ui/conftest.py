"""AppTest's element tree holds only what the last run sent: a rerun of the page's fragment alone (the app's
default for a sidebar value change, gpuplan_ui/frame.py) would leave the sidebar out of it. The UI tests run every
change as a whole-app rerun; the browser tests (tests/e2e) run the app as served, and
tests/ui/test_page_reruns.py compares the two paths' answers."""

import pytest

from gpuplan_ui.state import PAGE_RERUNS_ENV


@pytest.fixture(autouse=True)
def _whole_app_reruns(monkeypatch):
    monkeypatch.setenv(PAGE_RERUNS_ENV, "0")
