"""The frame: navigation, the sidebar and the one scenario of this run, then the page being shown.

``app.py`` calls ``run()``. Every page is an ``st.Page`` under ``app_pages/`` and reads the scenario built here
(``page.setup``); no page creates scenario inputs of its own.

The page runs in a fragment (``PAGE_FRAGMENT``). When a sidebar change leaves the sidebar as it was (only a value
moved: same inputs, labels and groups; ``sidebar.shape``), only the page reruns: the scenario is rebuilt from the
session's values (``partial_run``) and the sidebar's ~40 elements are not sent and drawn again
(bench/bench_browser.py). Any other change reruns the whole app. ``GPUPLAN_PAGE_RERUNS=0`` turns this off (every
change reruns the app), as AppTest needs: its element tree holds only what the last run sent.

Why ``app_pages/`` and not ``pages/``: a folder named ``pages/`` beside app.py puts Streamlit 1.67 in its legacy
multipage mode, where the first click after opening a shared link drops the link's values (README, "Why
app_pages/").
"""

from __future__ import annotations

import functools
import runpy
from pathlib import Path
from typing import Any

import streamlit as st

from gpuplan_core import INPUTS, RECORDS, Scenario, apply_use_case, read_link, same_value, to_scenario, upgrade_link

from . import profiles, share, state
from .sidebar import render_sidebar, shape, values_now
from .state import FULL_RUN, LAST_GOOD, NEEDS_FULL_RUN, PAGE_FRAGMENT, RUN, SHAPE, Run, page_reruns
from .widgets import PAGE_INPUTS

# (file under app_pages/, title, icon). A page's url path is its file name (public: links use it); the
# overview, the default page, is served at "/".
PAGES = (
    ("overview.py", "Overview & recommendation", ":material/recommend:"),
    ("Memory.py", "Memory", ":material/memory:"),
    ("Performance.py", "Performance", ":material/speed:"),
    ("Cost.py", "Cost", ":material/payments:"),
    ("Compare.py", "Compare A vs B", ":material/compare_arrows:"),
    ("Data.py", "Data & pricing upload", ":material/table:"),
    ("Methodology.py", "Methodology", ":material/menu_book:"),
)
ROOT = Path(__file__).resolve().parents[1]
STARTED = "gpuplan_started"
OPEN_NOTES = "gpuplan_open_notes"  # what reading the link said, kept across the rerun that reads the clean link
MODEL_KEYS = ("src", "model", "size_b", "hf")


def run() -> None:
    st.set_page_config(
        page_title="gpuplan", page_icon=":material/calculate:", layout="wide", initial_sidebar_state="expanded"
    )
    pages = _pages(page_reruns())
    nav = st.navigation(pages, position="hidden")
    page = "" if nav.url_path in ("", "overview") else nav.url_path
    notes = _open_link() if STARTED not in st.session_state else st.session_state.pop(OPEN_NOTES, [])
    link, carry = _link(page)
    values, config_text, fetch_notes = render_sidebar(pages, link, carry)
    sc, sc_notes = to_scenario(values, config_text)
    sc, profile_notes = profiles.applied(sc)  # the link's deployment profile, if any (Performance, Calibrate)
    with st.sidebar:
        share.panel(values, sc, page)
    model_error = _model_error(values, config_text, sc, fetch_notes + sc_notes)
    if model_error is None:
        st.session_state[LAST_GOOD] = {"values": {k: values[k] for k in MODEL_KEYS}, "name": sc.model().name}
    else:  # said once, as the page's message, not again among the notes
        fetch_notes = [n for n in fetch_notes if n != model_error]
        sc_notes = [n for n in sc_notes if n != model_error]
    notes += fetch_notes + sc_notes + profile_notes + st.session_state.pop(share.IMPORT_NOTES, [])
    st.session_state[RUN] = Run(sc, values, config_text, page, notes, model_error, pages=pages, carry=carry)
    st.session_state[SHAPE] = shape(values)
    st.session_state.pop(NEEDS_FULL_RUN, None)  # this run builds the sidebar from what was set
    st.session_state[FULL_RUN] = True
    nav.run()


def _pages(in_fragment: bool) -> list:
    """The st.Page of each of PAGES. In a fragment, each page is a function that runs its script in the page
    fragment (``_page``), so the fragment is registered under the page's own script hash (a rerun of it keeps the
    page's widgets, such as its sections' open state); else the script file itself (what AppTest switches to)."""
    out = []
    for n, (f, title, icon) in enumerate(PAGES):
        script = ROOT / "app_pages" / f
        source = functools.partial(_page, str(script)) if in_fragment else script
        out.append(st.Page(source, title=title, icon=icon, default=n == 0, url_path=script.stem))
    return out


@st.fragment(key=PAGE_FRAGMENT)
def _page(script: str) -> None:
    """The page being shown, as a fragment: in the app's run, its script; in a rerun of this fragment alone (a
    sidebar value or one of the page's own inputs changed), the same script on a scenario rebuilt from the
    session's values (``partial_run``)."""
    if not st.session_state.pop(FULL_RUN, False):
        partial_run()
    runpy.run_path(script, run_name="__main__")  # one of PAGES' files


def partial_run() -> None:
    """Rebuild this run's scenario from the session, as the app's run would (the sidebar's widgets keep their
    values; ``sidebar.values_now`` reads them; a Hugging Face config is the one the app's run loaded). Anything the
    sidebar shows that would change (a page link's carried inputs, a value set from code, another config to load)
    reruns the whole app instead."""
    before = state.current()
    link, carry = _link(before.page)
    values = values_now(link)
    new_config = values.get("src") == "config" and values.get("hf") != state.value_before("hf")
    if carry != before.carry or new_config or st.session_state.pop(NEEDS_FULL_RUN, False):
        st.rerun()
    sc, notes = to_scenario(values, before.config_text)
    sc, profile_notes = profiles.applied(sc)
    notes += profile_notes
    if before.model_error is None:
        st.session_state[LAST_GOOD] = {"values": {k: values[k] for k in MODEL_KEYS}, "name": sc.model().name}
    notes += st.session_state.pop(share.IMPORT_NOTES, [])
    st.session_state[RUN] = Run(
        sc, values, before.config_text, before.page, notes, before.model_error, pages=before.pages, carry=carry
    )


def _link(page: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The link's validated values, and what the page links carry (the pages' own inputs, synced to the link)."""
    link, _ = read_link(st.query_params.to_dict())
    return link, carried(sync_page_inputs(page, link))


def _model_error(values: dict[str, Any], config_text: str | None, sc: Scenario, notes: list[str]) -> str | None:
    """Why the model the user asked for is not the one computed (a Hugging Face config that could not be fetched
    or read): then no page shows results, which would be another model's."""
    if values.get("src") != "config":
        return None
    if config_text is None:
        return next((n for n in notes if n.startswith(("Could not fetch", "No config loaded"))), "No config loaded.")
    if sc.model_source.config_text is None:
        return next((n for n in notes if n.startswith("The config could not be used")), "The config could not be used.")
    return None


def _open_link() -> list[str]:
    """The session's first run: read the link it was opened with. Values that are not allowed are taken out of
    the address (each gets a note naming the field and what is allowed), whole numbers are rounded, an option
    given by its key is written as its label, an older link form is upgraded. When the address changed, the run
    starts again on the clean address before any widget is built, so every widget starts from the address and
    keeps its value in it (a value set from code before a bound widget exists would not stay in the address)."""
    st.session_state[STARTED] = True
    raw = {k: str(v) for k, v in st.query_params.to_dict().items()}
    params, notes = upgrade_link(apply_use_case(raw))
    values, problems = read_link(params)
    changed = False
    for key in set(raw) | set(params):
        if key not in INPUTS:
            continue
        inp = INPUTS[key]
        want = inp.link_value(values[key]) if key in values else None
        if raw.get(key) == want:
            continue
        changed = True
        if want is None:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = want
    if changed:
        st.session_state[OPEN_NOTES] = notes + problems
        st.rerun()
    return notes + problems


def sync_page_inputs(page: str, link: dict[str, Any]) -> dict[str, Any]:
    """The pages' own inputs, kept in the link on every page. The link is their truth (a cold link, back and
    forward, a page link carrying them), except in the run where the user changed one on its page: then the
    new value is written to the link. Returns their values; sets the value a widget on this page starts from."""
    kept = st.session_state.setdefault(PAGE_INPUTS, {})
    for inp in RECORDS:
        if inp.page is None:
            continue
        key, in_link = inp.key, link.get(inp.key, inp.default)
        mine = inp.page == page
        if mine and key in st.session_state and not same_value(st.session_state[key], kept.get(key, in_link)):
            value = st.session_state[key]  # changed by the user in this run
        else:
            value = in_link
            if mine and (key not in st.session_state or not same_value(st.session_state[key], value)):
                st.session_state[key] = value  # before the page builds the widget
        kept[key] = value
        want = None if inp.is_default(value) else inp.link_value(value)
        if st.query_params.get(key) != want:
            if want is None:
                del st.query_params[key]
            else:
                st.query_params[key] = want
    return dict(kept)


def carried(page_values: dict[str, Any]) -> dict[str, str]:
    """What a page link carries besides the bound inputs (Streamlit keeps those itself): the pages' own inputs
    that are not at their defaults."""
    return {k: INPUTS[k].link_value(v) for k, v in page_values.items() if not INPUTS[k].is_default(v)}
