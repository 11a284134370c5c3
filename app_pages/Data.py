"""Data: the GPU catalog and the pricing offers with sources and dates; a pricing CSV by upload or link."""

import hashlib
import json

import pandas as pd
import streamlit as st

from gpuplan_core import STALE_AFTER_DAYS, data_answer, offers_to_csv
from gpuplan_ui import cached, page
from gpuplan_ui.fmt import md_escape

sc, values = page.setup("Data & pricing upload", needs_model=False)
page.answer(data_answer(len(cached.gpu_table()), cached.offers_in_use(), STALE_AFTER_DAYS))

st.subheader("GPU catalog")
st.caption(
    "Dense peaks only: sparse (2:4) figures are about 2x and never used for speed. Nominal VRAM is the "
    "vendor's label; usable is what the CUDA runtime reports (GiB = 2^30 bytes)."
)
gpu_views = cached.gpu_views()
page.table(gpu_views["catalog"], "gpus", "gpuplan-gpus.csv")
with st.expander("Where each GPU's figures come from"):
    page.show(gpu_views["sources"], "gpu_sources")

st.subheader("Pricing")
LOADED = "pricing_loaded"  # the last file or link loaded in this session: (name, offers, problems, warnings, rows)


def use(name: str, offers, errors, warnings, n, key: str | None) -> None:
    """Keep what a file or link gave for this session (every page uses its offers until it is removed)."""
    st.session_state[LOADED] = (name, offers, errors, warnings, n)
    if key and offers:
        st.session_state["pricing_upload_offers"] = offers
        st.session_state["pricing_upload_key"] = key
    else:
        forget()


def forget() -> None:
    st.session_state.pop("pricing_upload_key", None)
    st.session_state.pop("pricing_upload_offers", None)


def on_upload() -> None:
    """on_change of the uploader: a new file is read; removing the file stops using it."""
    f = st.session_state.get("pricing_file")
    if f is None:
        st.session_state.pop(LOADED, None)
        forget()
        return
    data = f.getvalue()
    offers, errors, warnings, n = cached.parse_uploaded_pricing(data)
    use(f.name, offers, errors, warnings, n, hashlib.sha256(data).hexdigest()[:16])


def on_link() -> None:
    url = st.session_state.get("pricing_url", "").strip()
    if not url:
        return
    offers, errors, warnings, n, failure = cached.pricing_from_url(url)
    if failure:
        st.session_state[LOADED] = (url[:120], [], [], [], 0, failure)
        forget()
        return
    digest = hashlib.sha256(json.dumps(offers, sort_keys=True, default=str).encode()).hexdigest()[:16]
    use(url[:120], offers, errors, warnings, n, "url-" + digest)  # keyed by content: a link's file can change


st.file_uploader(
    "Use your own pricing CSV for this session",
    type=["csv", "txt"],
    key="pricing_file",
    on_change=on_upload,
    help="Same columns as the bundled file (download it below as a template). Every bad row is "
    "reported with its line and column; good rows are kept. Nothing leaves your session.",
)
with st.form("pricing_link", border=False, enter_to_submit=True):
    link_col, button_col = st.columns([5, 1], vertical_alignment="bottom")
    link_col.text_input(
        "or load one from a link",
        key="pricing_url",
        max_chars=2000,
        placeholder="https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
        help="A CSV with the same columns, or a SkyPilot catalog vms.csv (its cloud is read from the path). "
        "Links to raw.githubusercontent.com, gist.githubusercontent.com and huggingface.co only; fetched by "
        "this server, at most 5 MB, kept for an hour. Stays in this session, like an upload.",
    )
    button_col.form_submit_button("Load", icon=":material/download:", width="stretch", on_click=on_link)


def on_catalogs() -> None:
    """Today's prices from SkyPilot's public catalogs, added to the bundled offers like a file of your own."""
    offers, notes = cached.skypilot_catalogs()
    if not offers:
        st.session_state[LOADED] = ("the SkyPilot catalogs", [], [], [], 0, "; ".join(notes) or "nothing loaded")
        forget()
        return
    digest = hashlib.sha256(json.dumps(offers, sort_keys=True, default=str).encode()).hexdigest()[:16]
    use("the SkyPilot catalogs (today)", offers, notes, [], len(offers), "sky-" + digest)


st.button(
    "Load today's prices from the SkyPilot catalogs",
    icon=":material/refresh:",
    on_click=on_catalogs,
    help="AWS, GCP, Azure, Lambda, RunPod, Nebius, Vast and others as SkyPilot publishes them "
    "(github.com/skypilot-org/skypilot-catalog), added to the bundled offers with today's date. Needs this "
    "server to be online; offline, the bundled prices stay in use.",
)

if (loaded := st.session_state.get(LOADED)) is not None:
    name, offers, errors, warnings, n, *failure = loaded
    with page.guard("Your pricing file"):
        if failure:
            st.error(
                f"Could not load prices from {md_escape(name)}: {md_escape(failure[0])}. The bundled prices stay "
                "in use; upload the file instead if this server is offline.",
                icon=":material/cloud_off:",
            )
        else:
            if errors:
                st.error(
                    f"{len(errors)} problem(s) in {md_escape(name)}; {len(offers)} of {n} rows are usable.",
                    icon=":material/error:",
                )
                page.show(pd.DataFrame({"problem": errors}), "problems")
            if warnings:
                st.warning(f"{len(warnings)} warning(s): the rows are kept, but check them.", icon=":material/warning:")
                page.show(pd.DataFrame({"warning": warnings}), "warnings")
            if offers:
                st.success(
                    f"Using {len(offers)} offers from {md_escape(name)} on every page of this session. "
                    + cached.prices_in_use(),
                    icon=":material/check_circle:",
                )
                if st.button("Stop using them", icon=":material/delete:", key="pricing_forget"):
                    st.session_state.pop(LOADED, None)
                    forget()
                    st.rerun()
            else:
                st.info("No usable rows: the bundled prices stay in use.", icon=":material/info:")

pkey = cached.pricing_key()
table = cached.pricing_view(pkey)
st.caption(
    f"{len(table.frame)} offers in use. 'stale' marks prices older than {STALE_AFTER_DAYS} days; 'undated' means the "
    "source gives no date (a catalog snapshot), so re-check before committing money."
)
page.table(table, "pricing", "gpuplan-pricing-view.csv", height=480)
st.download_button(
    "Download the pricing CSV (template columns)",
    lambda: offers_to_csv(cached._offers(pkey)),  # written on click, not on every rerun
    "gpuplan-pricing.csv",
    "text/csv",
    key="dl_pricing_raw",
    on_click="ignore",
)
