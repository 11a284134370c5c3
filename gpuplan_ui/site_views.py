"""The Cost page's energy, carbon, owning and price-tier sections, from the one answer (layout only)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from gpuplan_core import ScenarioAnswer, site_answer

from . import cached, fmt, page
from .figures_site import own_vs_rent_figure


def energy_section(ans: ScenarioAnswer) -> None:
    e = ans.energy
    if e is None:
        if ans.pick is not None:
            st.caption(f"Energy: the {ans.pick.gpu}'s vendor publishes no board power, so its energy is not estimated.")
        return
    st.subheader("Energy and carbon")
    if (a := site_answer(ans)) is not None:
        st.markdown(fmt.md_escape(a.sentence))
    cols = st.columns(4)
    if e.phase == "training":
        cols[0].metric("Energy of the run", f"{e.energy_kwh:,.0f} kWh", help="GPU-hours x average W x PUE")
        cols[1].metric("Its electricity", fmt.usd(e.energy_cost_usd))
        cols[2].metric("CO2", f"{e.co2_kg / 1000:,.1f} t")
        cols[3].metric("Average power per GPU", f"{e.power_watts_per_gpu:,.0f} W")
    else:
        cols[0].metric("Energy a month", f"{e.monthly_energy_kwh:,.0f} kWh", help="always-on GPUs x W x PUE")
        cols[1].metric("CO2 a month", f"{e.monthly_co2_kg / 1000:,.2f} t")
        per = e.energy_kwh_per_million_output_tokens
        month = "" if not e.monthly_output_tokens else f" over {e.monthly_output_tokens / 1e6:,.1f}M output tokens"
        cols[2].metric(
            "kWh per 1M output tokens",
            "n/a" if per is None else f"{per:,.2f}",
            help=f"the month's kWh / the month's output tokens{month} ({e.output_tokens_basis})",
        )
        cols[3].metric("Output tokens per kWh", "n/a" if not e.tokens_per_kwh else f"{e.tokens_per_kwh:,.0f}")
    st.caption(
        f"{e.gpus:,} x {e.gpu} at {e.power_watts_per_gpu:,.0f} W each on average ({e.power_fraction:.0%} of TDP, "
        f"measured: {fmt.md_escape(e.power_source.split(' (')[0].split(';')[0])}; "
        + (f"+ {e.host_watts_per_gpu:,.0f} W of host per GPU" if e.host_watts_per_gpu else "host share not stated")
        + "), PUE "
        f"{e.pue:.2f}, {e.region_label}: {e.electricity_usd_per_kwh:.3f} USD/kWh, {e.grid_gco2_per_kwh:,.0f} g "
        "CO2/kWh (set the region and each figure under Site and owning in the sidebar)."
        + (
            f" The month's {e.monthly_output_tokens / 1e6:,.1f}M output tokens: {e.output_tokens_basis}."
            if e.monthly_output_tokens
            else ""
        )
    )
    if not e.electricity_price_published:
        st.warning(fmt.md_escape(e.electricity_price_note[0].upper() + e.electricity_price_note[1:]) + ".")


def own_section(ans: ScenarioAnswer) -> None:
    o = ans.own
    if o is None:
        if ans.pick is not None:
            st.caption(f"Owning: no public server price for the {ans.pick.gpu}; give one under Site and owning.")
        return
    st.subheader("Own or rent")
    cols = st.columns(4)
    cols[0].metric("Buying the GPUs", fmt.usd(o.capex_usd), help=f"{fmt.usd(o.server_usd_per_gpu)} per GPU")
    cols[1].metric("Owning a month", fmt.usd(o.monthly_own_usd), help="amortisation + power + hosting")
    cols[2].metric("Renting a month", fmt.usd(o.monthly_rent_usd))
    cols[3].metric("Break-even", "never" if o.break_even_months is None else f"{o.break_even_months:,.0f} months")
    st.plotly_chart(own_vs_rent_figure(o), key="own_rent", config={"displaylogo": False})
    wins = (
        f"owning wins above {o.break_even_utilization:.0%} of hours busy"
        if o.break_even_utilization is not None
        else "renting wins at any utilization"
    )
    st.caption(  # escaped whole: two "$" in one line would read as math and eat its spaces ("within 5years")
        fmt.md_escape(
            f"{fmt.counted(o.gpus, 'GPU')} at {fmt.usd(o.server_usd_per_gpu)} each ({o.server_price_source}), "
            f"amortised over {o.amortisation_years:g} years, busy {o.utilization:.0%} of hours; against the rental "
            f"at {o.rent_usd_per_gpu_hour:,.2f} USD/GPU-hour: {wins}."
        )
    )


def tiers_section(ans: ScenarioAnswer) -> None:
    """The cheapest offer of each billing for the pick's GPU. What each billing commits to is prose: it is said under
    the table (and kept in the CSV), so the table's columns fit a section at a 1280 px window."""
    if not ans.price_tiers or page.meeting():
        return
    n = ans.pick.gpus
    st.markdown(
        f"**Price tiers for {ans.pick.gpu}** (the cheapest offer of each billing, at {n:,} GPU{'s' if n > 1 else ''})"
    )
    df = pd.DataFrame([tier_row(t) for t in ans.price_tiers])
    page.table(cached.table(df, TIER_COLUMNS), "tiers", "gpuplan-price-tiers.csv")
    said = "; ".join(f"{_billing(t)}: {t.commitment}" for t in ans.price_tiers)
    st.caption(fmt.md_escape(f"Commitment: {said}"))


TIER_COLUMNS = ("billing", "offer", "USD/GPU-h", "effective USD/GPU-h", "monthly (USD)")  # shown; the CSV has all


def tier_row(t) -> dict:
    return {
        "billing": _billing(t),
        "offer": t.offer_id,
        "USD/GPU-h": t.price_per_gpu_hour_usd,
        "effective USD/GPU-h": t.effective_usd_per_gpu_hour,
        "monthly (USD)": t.monthly_usd,
        "commitment": t.commitment,
    }


def _billing(t) -> str:
    return t.billing_model.replace("_", "-")
