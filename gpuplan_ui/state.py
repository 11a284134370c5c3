"""This run's state: the scenario the frame built, read by the pages and the cache wrappers.

Its own module so that every part of gpuplan_ui can read it without importing the frame (which imports them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from gpuplan_core import Scenario

RUN = "gpuplan_run"  # session key of this run's Run
LAST_GOOD = "gpuplan_last_good_model"  # the model inputs of the last run whose model loaded, and its name
PAGE_RERUNS_ENV = "GPUPLAN_PAGE_RERUNS"
PAGE_FRAGMENT = "page"  # the fragment the page runs in (frame._page): a sidebar value change reruns only it
SHAPE = "gpuplan_sidebar_shape"  # what the sidebar showed in the app's last run (sidebar.shape)
FULL_RUN = "gpuplan_full_run"  # set by the app's run just before the page fragment: absent in the fragment's reruns
SHARE_OPEN = "share_open"  # the share panel's expander: open, it shows the link, so it follows every change
NEEDS_FULL_RUN = "gpuplan_needs_full_run"  # a value was set from code (widgets.set_inputs): the sidebar must follow


@dataclass
class Run:
    """What the frame built for the page being shown."""

    scenario: Scenario
    values: dict[str, Any]  # every sidebar input's value (registry key -> value)
    config_text: str | None
    page: str  # the page's url path ("" for the overview)
    notes: list[str] = field(default_factory=list)  # link problems, scenario warnings, fetch failures
    model_error: str | None = None  # the model asked for could not be loaded: pages show this, not results
    notes_shown: bool = False
    pages: list = field(default_factory=list)  # the st.Page objects, in the sidebar's order (meeting view's nav)
    carry: dict[str, str] = field(default_factory=dict)  # what a page link carries besides the bound inputs


def current() -> Run:
    return st.session_state[RUN]


def page_reruns() -> bool:
    """Does the page run in its own fragment (a sidebar value change reruns only the page)? On unless the
    environment says ``GPUPLAN_PAGE_RERUNS=0``."""
    return os.environ.get(PAGE_RERUNS_ENV, "1") != "0"


def value_before(key: str):
    """An input's value in the run before this one (its Run's values, by link key)."""
    values = current().values
    return values.get(key)
