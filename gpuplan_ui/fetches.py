"""What the app fetches over the network (a Hugging Face config, SkyPilot's catalogs, a pricing CSV by link),
cached for an hour; each call lends the run's turn while it waits (serve.released)."""

from __future__ import annotations

import streamlit as st


def hf_config(model_id: str) -> tuple[str | None, str | None]:
    """(config.json text, None) or (None, why not). The run lends its turn (serve.released) for the whole
    call, cache lookup included: a session that waits on the network, or on Streamlit's per-value
    cache lock while another session fetches the same id, must not hold the turn meanwhile (the two
    would wait on each other)."""
    from .serve import released

    with released():
        return _fetch_hf_config(model_id)


@st.cache_data(ttl=3600, max_entries=64, show_spinner=False)
def _fetch_hf_config(model_id: str) -> tuple[str | None, str | None]:
    from gpuplan_core import FetchError
    from gpuplan_core import fetch_hf_config as fetch

    try:
        return fetch(model_id), None
    except FetchError as exc:
        return None, str(exc)


def skypilot_catalogs() -> tuple[list[dict], list[str]]:
    """(offers, notes) from SkyPilot's public catalogs; the run lends its turn while it waits (see hf_config)."""
    from .serve import released

    with released():
        return _fetch_catalogs()


@st.cache_data(ttl=3600, max_entries=2, show_spinner="Loading the SkyPilot catalogs...")
def _fetch_catalogs() -> tuple[list[dict], list[str]]:
    from gpuplan_core import fetch_skypilot_catalogs

    offers, notes = fetch_skypilot_catalogs(timeout=(3.05, 20))
    return [o.model_dump() for o in offers], notes


def pricing_from_url(url: str) -> tuple[list[dict], list[str], list[str], int, str | None]:
    """(offers, problems, warnings, rows read, None) from a pricing CSV link, or ([], [], [], 0, why not).
    The run lends its turn while it waits (see hf_config)."""
    from .serve import released

    with released():
        return _fetch_pricing(url.strip())


@st.cache_data(ttl=3600, max_entries=32, show_spinner=False)
def _fetch_pricing(url: str) -> tuple[list[dict], list[str], list[str], int, str | None]:
    from gpuplan_core import FetchError, fetch_pricing

    try:
        r = fetch_pricing(url)
    except FetchError as exc:
        return [], [], [], 0, str(exc)
    return (
        [o.model_dump() for o in r.offers],
        [str(e) for e in r.errors],
        [str(w) for w in r.warnings],
        r.rows_read,
        None,
    )
