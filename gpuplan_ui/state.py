"""This run's state: the scenario the frame built, read by the pages and the cache wrappers.

Its own module so that every part of gpuplan_ui can read it without importing the frame (which imports them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from gpuplan_core import Scenario

RUN = "gpuplan_run"  # session key of this run's Run
LAST_GOOD = "gpuplan_last_good_model"  # the model inputs of the last run whose model loaded, and its name


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
