"""This session's own pricing: a file uploaded on the Data page, a link or SkyPilot's catalogs loaded there.

A file with usable rows is kept on the server by content hash (prices.store) and the link names it
(``pricefile``, a Data page input the frame keeps in the link on every page), so a reload, a shared link and the
report's live link price with the same offers; prices.pricing_key() and prices.offers_for() read it from there.
A link or the catalogs that cannot be fetched, or a file the store refuses, never drop what is in use: the
failure is kept apart (FAILED) and the Data page says that the file in use is still used.
"""

from __future__ import annotations

import streamlit as st

from gpuplan_core import Offer, StoreError, content_hash, offers_to_csv, scenario_pricing_file

from . import fetches, prices
from .fmt import counted
from .prices import LINK_KEY, SESSION_ONLY, Loaded

FAILED = "pricing_failed"  # the last load that could not be fetched or kept: (what, why)
LAST = "pricing_loaded"  # the last file or link loaded in this session (Loaded): its own problems and warnings
__all__ = ["FAILED", "LAST", "Loaded", "loaded", "on_catalogs", "on_link", "on_upload", "settle", "stop"]


def _use(loaded: Loaded, data: bytes | str) -> None:
    """Keep what a file or link gave: with usable rows, on the server and in the link (every page uses its offers
    until it is removed); without, shown on the Data page only, and the bundled prices are used."""
    if loaded.offers:
        try:
            kept = prices.store().put(data, loaded.name, loaded.kind)
        except StoreError as exc:  # used in this session only, as before files were kept on the server
            loaded = loaded._replace(sha256=content_hash(data))
            st.session_state[SESSION_ONLY] = (loaded, str(exc))
            st.session_state[LAST] = loaded
            st.session_state.pop(FAILED, None)
            st.session_state[LINK_KEY] = ""
            return
        st.session_state.pop(SESSION_ONLY, None)
        loaded = loaded._replace(key=kept.key, sha256=kept.sha256)
        prices.remember(prices.parsed(kept.data, kept.name, kept.kind)._replace(key=kept.key, sha256=kept.sha256))
    st.session_state[LAST] = loaded
    st.session_state.pop(FAILED, None)
    st.session_state[LINK_KEY] = loaded.key  # the frame writes it to the link (a Data page input)


def settle() -> None:
    """At the top of the Data page, once the frame has written a load's ``pricefile`` to the link: the link holds
    it from now on (a value left in the session would later read as a new load and undo a link's change)."""
    st.session_state.pop(LINK_KEY, None)


def stop() -> None:
    """The "Stop using them" button: the bundled prices are used again, and the link no longer names the file."""
    for k in (LAST, FAILED, SESSION_ONLY):
        st.session_state.pop(k, None)
    st.session_state[LINK_KEY] = ""


def on_upload() -> None:
    """on_change of the uploader: a new file is read; removing the file stops using it (not a link loaded since)."""
    f = st.session_state.get("pricing_file")
    if f is None:
        if (now := loaded()) is None or now.kind == "upload":
            stop()
        return
    data = f.getvalue()
    _use(prices.parsed(data, f.name, "upload"), data)


def on_link() -> None:
    url = st.session_state.get("pricing_url", "").strip()
    if not url:
        return
    offers, errors, warnings, n, failure = fetches.pricing_from_url(url)
    if failure:
        st.session_state[FAILED] = (url[:120], failure)  # what is in use stays in use
        return
    _use(Loaded(url[:120], offers, errors, warnings, n, "link"), _as_csv(offers))  # kept: its usable rows


def on_catalogs() -> None:
    """Today's prices from SkyPilot's public catalogs, added to the bundled offers like a file of your own."""
    offers, notes = fetches.skypilot_catalogs()
    if not offers:
        st.session_state[FAILED] = ("the SkyPilot catalogs", "; ".join(notes) or "nothing loaded")
        return
    _use(Loaded("the SkyPilot catalogs (today)", offers, notes, [], len(offers), "catalogs"), _as_csv(offers))


def _as_csv(offers: list[dict]) -> str:
    return offers_to_csv([Offer(**o) for o in offers])


def loaded() -> Loaded | None:
    """What the Data page shows: the file the link names (this session's own load of it, with that load's
    problems, or the stored file as a link opened it), else a file of this session with no usable rows."""
    key = prices.link_file_key()
    last = st.session_state.get(LAST)
    if key:
        if last is not None and last.key == key:
            return last
        return prices.stored(key)
    return prices.session_file() or (last if last is not None and not last.key else None)


def session_only_line() -> str | None:
    """Why the file in use is in this session only (the store could not keep it); None when it is not."""
    held = st.session_state.get(SESSION_ONLY)
    if not held or prices.link_file_key():
        return None
    return f"Used in this session only, not in the link: {held[1]}."


def failure_line() -> str | None:
    """Why the last link could not be loaded, and which prices stay in use; None when nothing failed."""
    if (failed := st.session_state.get(FAILED)) is None:
        return None
    what, why = failed
    now = loaded()
    if now is not None and (now.key or prices.session_file() is now):
        n = len(now.offers)
        kept = (
            f"The uploaded file {now.name} is still used, with its {counted(n, 'offer')}."
            if now.kind == "upload"
            else f"The {counted(n, 'offer')} from {now.name} {'is' if n == 1 else 'are'} still used."
        )
    else:
        kept = "The bundled prices stay in use; upload the file instead if this server is offline."
    return f"Could not load prices from {what}: {why}. {kept}"


def for_scenario_file(values: dict) -> tuple[str, str] | None:
    """(name, CSV text) of the pricing file these values' ``pricefile`` names, for the scenario file; None when
    there is none this server holds."""
    found = prices.stored(str(values.get(LINK_KEY) or ""))
    if found is None:
        return None
    kept = prices.store().get(found.sha256)
    return None if kept is None else (kept.name, kept.data.decode("utf-8", "replace"))


def imported(text: bytes, values: dict, notes: list[str]) -> dict:
    """A scenario file's values with the pricing file it carries kept on this server and named by ``pricefile``
    (its hash here, the same as where it was saved); the values as they are when it carries none."""
    carried, why = scenario_pricing_file(text)
    notes += why
    if carried is None:
        return values
    name, csv_text = carried
    try:
        kept = prices.store().put(csv_text, name, "upload")
    except StoreError as exc:
        notes.append(
            f"scenario file: its pricing file {name} cannot be kept here ({exc}); the catalog's prices are used"
        )
        return {**values, LINK_KEY: ""}
    notes.append(f"scenario file: prices with its pricing file {name} ({kept.key}).")
    return {**values, LINK_KEY: kept.key}
