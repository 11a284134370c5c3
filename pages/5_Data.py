"""Data: the GPU catalog and the pricing offers with sources and dates; a pricing CSV by upload or link."""

import hashlib
import json

import pandas as pd
import streamlit as st

from gpuplan_core.pricing import STALE_AFTER_DAYS, Offer, offers_to_csv
from gpuplan_ui import cached, page, tables
from gpuplan_ui.fmt import md_escape

sc, values = page.setup("Data & pricing upload", ":material/table:")

st.subheader("GPU catalog")
st.caption(
    "Dense peaks only: sparse (2:4) figures are about 2x and never used for speed. Nominal VRAM is the "
    "vendor's label; usable is what the CUDA runtime reports (GiB = 2^30 bytes)."
)
gpus = pd.DataFrame(cached.gpu_table())
page.table(
    gpus[
        [
            "gpu",
            "family",
            "variant",
            "vram_nominal_gb",
            "vram_usable_gib",
            "vram_usable_source",
            "memory_type",
            "bandwidth_gb_s",
            "bf16_dense_tflops",
            "fp8_dense_tflops",
            "int8_dense_tops",
            "fp4_dense_tflops",
            "link_gb_s_per_direction",
            "tdp_w",
            "aliases",
            "sources",
            "notes",
        ]
    ],
    "gpus",
    "gpuplan-gpus.csv",
)

st.subheader("Pricing")


def show_load(name: str, offers, errors, warnings, n) -> bool:
    """What a pricing file gave: its problems and warnings, and whether its offers are now in use."""
    if errors:
        st.error(
            f"{len(errors)} problem(s) in {md_escape(name)}; {len(offers)} of {n} rows are usable.",
            icon=":material/error:",
        )
        st.dataframe(pd.DataFrame({"problem": errors}), hide_index=True, width="stretch")
    if warnings:
        st.warning(f"{len(warnings)} warning(s): the rows are kept, but check them.", icon=":material/warning:")
        st.dataframe(pd.DataFrame({"warning": warnings}), hide_index=True, width="stretch")
    if offers:
        st.success(
            f"Using {len(offers)} offers from {md_escape(name)} on every page of this session.",
            icon=":material/check_circle:",
        )
    else:
        st.info("No usable rows: the bundled prices stay in use.", icon=":material/info:")
    return bool(offers)


def use(offers, key: str | None) -> None:
    if key and offers:
        st.session_state["pricing_upload_offers"] = offers
        st.session_state["pricing_upload_key"] = key
    else:
        st.session_state.pop("pricing_upload_key", None)
        st.session_state.pop("pricing_upload_offers", None)


up = st.file_uploader(
    "Use your own pricing CSV for this session",
    type=["csv", "txt"],
    key="pricing_file",
    help="Same columns as the bundled file (download it below as a template). Every bad row is "
    "reported with its line and column; good rows are kept. Nothing leaves your session.",
)
with st.form("pricing_link", border=False, enter_to_submit=True):
    link_col, button_col = st.columns([5, 1], vertical_alignment="bottom")
    link = link_col.text_input(
        "or load one from a link",
        key="pricing_url",
        max_chars=2000,
        placeholder="https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv",
        help="A CSV with the same columns, or a SkyPilot catalog vms.csv (its cloud is read from the path). "
        "Links to raw.githubusercontent.com, gist.githubusercontent.com and huggingface.co only; fetched by "
        "this server, at most 5 MB, kept for an hour. Stays in this session, like an upload.",
    )
    load = button_col.form_submit_button("Load", icon=":material/download:", width="stretch")
if load:
    if link.strip():
        st.session_state["pricing_link_result"] = (link.strip(), *cached.pricing_from_url(link))
    else:
        st.session_state.pop("pricing_link_result", None)

if up is not None:
    data = up.getvalue()
    with page.guard("Pricing upload"):
        offers, errors, warnings, n = cached.parse_uploaded_pricing(data)
        ok = show_load(up.name, offers, errors, warnings, n)
        use(offers, hashlib.sha256(data).hexdigest()[:16] if ok else None)
elif (res := st.session_state.get("pricing_link_result")) is not None:
    url, offers, errors, warnings, n, failure = res
    with page.guard("Pricing link"):
        if failure:
            st.error(
                f"Could not load prices from {md_escape(url[:120])}: {md_escape(failure)}. The bundled prices stay "
                "in use; upload the file instead if this server is offline.",
                icon=":material/cloud_off:",
            )
            use([], None)
        else:
            ok = show_load(url[:120], offers, errors, warnings, n)
            digest = hashlib.sha256(json.dumps(offers, sort_keys=True, default=str).encode()).hexdigest()[:16]
            use(offers, "url-" + digest if ok else None)  # keyed by content: the file behind a link can change
else:
    use([], None)

rows, errs, warns = cached.bundled_pricing()
if st.session_state.get("pricing_upload_key"):
    rows = st.session_state["pricing_upload_offers"]
table = tables.pricing_offers(rows)
st.caption(
    f"{len(table)} offers. 'stale' marks prices older than {STALE_AFTER_DAYS} days; 'undated' means the source "
    "gives no date (a catalog snapshot), so re-check before committing money."
)
page.table(table, "pricing", "gpuplan-pricing-view.csv", height=480)
st.download_button(
    "Download the pricing CSV (template columns)",
    lambda: offers_to_csv([Offer(**r) for r in rows]),  # written on click, not on every rerun
    "gpuplan-pricing.csv",
    "text/csv",
    key="dl_pricing_raw",
    on_click="ignore",
)
