"""This session's own pricing: a file uploaded on the Data page, a link or SkyPilot's catalogs loaded there.

What was loaded last is kept in session state (LOADED); its usable offers are what prices.pricing_key() and
prices.offers_for() read ("pricing_upload_offers", keyed by "pricing_upload_key"). A link or the catalogs that
cannot be fetched never drop what is in use: the failure is kept apart (FAILED) and the Data page says that the
file in use is still used.
"""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

import streamlit as st

from . import fetches, prices

LOADED = "pricing_loaded"  # the last file or link loaded in this session (Loaded)
FAILED = "pricing_failed"  # the last link or catalog load that could not be fetched: (what, why)
OFFERS, KEY = "pricing_upload_offers", "pricing_upload_key"


class Loaded(NamedTuple):
    name: str  # the file's name or the link
    offers: list[dict]  # the usable rows, as Offer dumps
    errors: list[str]
    warnings: list[str]
    rows: int  # rows read
    kind: str  # "upload", "link" or "catalogs"


def _digest(offers: list[dict]) -> str:
    return hashlib.sha256(json.dumps(offers, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _use(loaded: Loaded, key: str) -> None:
    """Keep what a file or link gave for this session (every page uses its offers until it is removed)."""
    st.session_state[LOADED] = loaded
    st.session_state.pop(FAILED, None)
    if loaded.offers:
        st.session_state[OFFERS], st.session_state[KEY] = loaded.offers, key
    else:
        forget()


def forget() -> None:
    """Stop using this session's file: the bundled prices are used again."""
    st.session_state.pop(KEY, None)
    st.session_state.pop(OFFERS, None)


def stop() -> None:
    """The "Stop using them" button."""
    for k in (LOADED, FAILED):
        st.session_state.pop(k, None)
    forget()


def on_upload() -> None:
    """on_change of the uploader: a new file is read; removing the file stops using it (not a link loaded since)."""
    f = st.session_state.get("pricing_file")
    if f is None:
        if (loaded := st.session_state.get(LOADED)) is None or loaded.kind == "upload":
            stop()
        return
    data = f.getvalue()
    offers, errors, warnings, n = prices.parse_uploaded_pricing(data)
    _use(Loaded(f.name, offers, errors, warnings, n, "upload"), hashlib.sha256(data).hexdigest()[:16])


def on_link() -> None:
    url = st.session_state.get("pricing_url", "").strip()
    if not url:
        return
    offers, errors, warnings, n, failure = fetches.pricing_from_url(url)
    if failure:
        st.session_state[FAILED] = (url[:120], failure)  # what is in use stays in use
        return
    _use(Loaded(url[:120], offers, errors, warnings, n, "link"), "url-" + _digest(offers))  # keyed by content


def on_catalogs() -> None:
    """Today's prices from SkyPilot's public catalogs, added to the bundled offers like a file of your own."""
    offers, notes = fetches.skypilot_catalogs()
    if not offers:
        st.session_state[FAILED] = ("the SkyPilot catalogs", "; ".join(notes) or "nothing loaded")
        return
    _use(Loaded("the SkyPilot catalogs (today)", offers, notes, [], len(offers), "catalogs"), "sky-" + _digest(offers))


def loaded() -> Loaded | None:
    return st.session_state.get(LOADED)


def failure_line() -> str | None:
    """Why the last link could not be loaded, and which prices stay in use; None when nothing failed."""
    if (failed := st.session_state.get(FAILED)) is None:
        return None
    what, why = failed
    now = loaded()
    if st.session_state.get(KEY) and now is not None:
        n = len(now.offers)
        kept = (
            f"The uploaded file {now.name} is still used, with its {n} offers."
            if now.kind == "upload"
            else f"The {n} offers from {now.name} are still used."
        )
    else:
        kept = "The bundled prices stay in use; upload the file instead if this server is offline."
    return f"Could not load prices from {what}: {why}. {kept}"
