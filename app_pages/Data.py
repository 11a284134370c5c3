"""Data: the GPU catalog and the pricing offers with sources and dates; a pricing CSV by upload or link."""

import pandas as pd
import streamlit as st

from gpuplan_core import STALE_AFTER_DAYS, STORE_EXPIRY_DAYS, data_answer, offers_to_csv
from gpuplan_ui import cached, page, prices, pricing_file
from gpuplan_ui.fmt import counted, md_escape

sc, values = page.setup("Data & pricing upload", needs_model=False)
pricing_file.settle()  # a load's pricefile is in the link now
page.answer(data_answer(len(cached.gpu_table()), prices.offers_in_use(), STALE_AFTER_DAYS))

st.subheader("GPU catalog")
st.caption(
    "Dense peaks only: sparse (2:4) figures are about 2x and never used for speed. Nominal VRAM is the "
    "vendor's label; usable is what the CUDA runtime reports (GiB = 2^30 bytes)."
)
gpu_views = cached.gpu_views()
page.table(gpu_views.catalog, "gpus", "gpuplan-gpus.csv")
with st.expander("Where each GPU's figures come from"):
    page.show(gpu_views.sources, "gpu_sources")

st.subheader("Pricing")
st.file_uploader(
    "Use your own pricing CSV for this session",
    type=["csv", "txt"],
    key="pricing_file",
    on_change=pricing_file.on_upload,
    help="Same columns as the bundled file (download it below as a template). Every bad row is "
    "reported with its line and column; good rows are kept. A file with usable rows is kept on this server by "
    "its content's hash, which the link names (pricefile), so a reload or a shared link prices with it.",
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
        "this server, at most 5 MB. Its usable rows are kept on this server and named in the link, like an upload.",
    )
    button_col.form_submit_button("Load", icon=":material/download:", width="stretch", on_click=pricing_file.on_link)
st.button(
    "Load today's prices from the SkyPilot catalogs",
    icon=":material/refresh:",
    on_click=pricing_file.on_catalogs,
    help="AWS, GCP, Azure, Lambda, RunPod, Nebius, Vast and others as SkyPilot publishes them "
    "(github.com/skypilot-org/skypilot-catalog), added to the bundled offers with today's date. Needs this "
    "server to be online; offline, the bundled prices stay in use.",
)

if failed := pricing_file.failure_line():
    st.error(md_escape(failed), icon=":material/cloud_off:")
if (loaded := pricing_file.loaded()) is not None:
    name, offers, errors, warnings, n = loaded.name, loaded.offers, loaded.errors, loaded.warnings, loaded.rows
    with page.guard("Your pricing file"):
        if errors:
            st.error(
                f"{counted(len(errors), 'problem')} in {md_escape(name)}; {len(offers)} of {n} rows are usable.",
                icon=":material/error:",
            )
            page.show(pd.DataFrame({"problem": errors}), "problems")
        if warnings:
            kept = f"{counted(len(warnings), 'warning')}: the rows are kept, but check them."
            st.warning(kept, icon=":material/warning:")
            page.show(pd.DataFrame({"warning": warnings}), "warnings")
        if offers:
            using = f"Using {counted(len(offers), 'offer')} from {md_escape(name)}"
            if only := pricing_file.session_only_line():  # the store could not keep it
                st.warning(f"{using}. {md_escape(only)}", icon=":material/warning:")
            else:
                st.success(
                    f"{using} on every page. Kept on this server as {loaded.key}, which the link names (pricefile): "
                    f"a reload or a shared link prices with it until it goes unused for {STORE_EXPIRY_DAYS} days.",
                    icon=":material/check_circle:",
                )
            st.button("Stop using them", icon=":material/delete:", key="pricing_forget", on_click=pricing_file.stop)
        else:
            st.info("No usable rows: the bundled prices stay in use.", icon=":material/info:")

pkey = prices.pricing_key()
table = cached.pricing_view(pkey)
st.caption(
    f"{len(table.frame)} offers in use. {md_escape(prices.prices_in_use())} 'stale' marks prices older than "
    f"{STALE_AFTER_DAYS} days; 'undated' means the source gives no date (a catalog snapshot), so re-check before "
    "committing money."
)
page.table(table, "pricing", "gpuplan-pricing-view.csv", height=480)
st.download_button(
    "Download the pricing CSV (template columns)",
    lambda: offers_to_csv(prices.offers_for(pkey)),  # written on click, not on every rerun
    "gpuplan-pricing.csv",
    "text/csv",
    key="dl_pricing_raw",
    on_click="ignore",
)
