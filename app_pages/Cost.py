"""Cost: the cheapest way to run it, then monthly always-on vs per-run cost per offer, serverless, lifetime."""

from datetime import date

import streamlit as st

from gpuplan_core import (
    MarketProjection,
    cold_start_rule,
    cost_answer,
    growth_problem,
    training_compute_line,
    training_speed_line,
)
from gpuplan_ui import cached, figures_cost, fmt, page, prices, site_views, tables_cost, widgets

sc, values = page.setup("Cost")
pkey = prices.pricing_key()
chart = {"displaylogo": False}


def _serving_lifetime(ans) -> None:
    """Three years of serving as recommended (grown month by month when traffic grows), after any training bill."""
    best_monthly = ans.cost_usd if ans.pick is not None else cost.cheapest_monthly_usd
    bill = widgets.page_input("train_bill")
    title = f"Serving as recommended, {fmt.usd(best_monthly)} a month" + (
        f", after a {fmt.usd(bill)} training bill" if bill else ""
    )
    grown = None
    if sc.traffic.grows and not (why := growth_problem(sc.traffic, ans.pick)):
        explore = bool(widgets.page_value("alt_formats"))
        grown = cached.growth_view(sc.model_dump_json(), pkey, explore, bill, 36, date.today().isoformat())
    elif sc.traffic.grows:
        st.caption(f"Growth is not drawn: {why.split(': ', 1)[-1]}.")
    if grown is None:
        st.plotly_chart(cached.lifetime_figure(bill, best_monthly, 36, title), key="life", config=chart)
    else:
        st.plotly_chart(grown[1], key="life", config=chart)
        st.caption(fmt.md_escape(grown[0].text()))


rows = []
with page.guard("Costs per offer"):
    views = cached.cost_views(sc.model_dump_json(), pkey)  # the offers the answer ranks (its GPU type, if chosen)
    cost = views.cost
    rows = cost.offers
    ans = cached.answer(sc)
    page.answer(cost_answer(ans, sc, len(rows)))
    if line := prices.prices_in_use():
        st.caption(fmt.md_escape(line))
    serverless_line = (
        "**Serverless** (workers batch like replicas; start-up, execution and idle timeout billed, a cold start only "
        f"after an idle gap longer than the idle timeout; cold start = {cold_start_rule()})"
    )
    if rows:
        st.plotly_chart(views.cheapest, key="cheapest", config=chart)
    if page.meeting():
        pass
    elif not rows and views.serverless is not None:  # the filter kept serverless offers only
        st.markdown(serverless_line)
        page.table(views.serverless, "serverless", "gpuplan-serverless.csv")
    elif not rows:
        st.info(
            "No offer matches the pricing filters, or the model fits no GPU that has offers. Widen the billing or "
            "provider filter in the sidebar.",
            icon=":material/info:",
        )
    elif sc.job.mode == "inference":
        st.markdown(
            f"Always-on = machines x machine price x **{sc.pricing.hours_per_month:g} hours a month**, billed while "
            "idle; per run = one day's requests as a batch job on one replica (one hour without a traffic estimate), "
            "billed in each offer's increments with its minimum; $ per 1M tokens at "
            f"**{sc.pricing.utilization:.0%} utilization**. Interactive serving leaves out spot offers unless Billing "
            "= Spot."
        )
        st.markdown(f"**Monthly, always on** ({sc.pricing.hours_per_month:g} h)")
        page.table(views.always_on, "always_on", "gpuplan-monthly-always-on.csv", height=420)
        if box := page.section(f"Per run ({rows[0].run_description})", "cost_per_run", ":material/table:"):
            with box:
                page.table(views.per_run, "per_run", "gpuplan-per-run.csv", height=420)
        detail = "Every offer in detail (replicas, $ per 1M input tokens, latency, billing notes, sources)"
        if box := page.section(detail, "cost_detail", ":material/table:"):
            with box:
                page.table(views.detail, "cost_detail", "gpuplan-cost-detail.csv")
        if views.serverless is not None:
            if box := page.section("Serverless", "cost_serverless", ":material/cloud:"):
                with box:
                    st.markdown(serverless_line)
                    page.table(views.serverless, "serverless", "gpuplan-serverless.csv")
        elif not sc.traffic.requests_per_day:
            st.caption("Serverless needs a traffic estimate: set requests per day in the sidebar.")
        if box := page.section("Over three years: serving every month", "cost_life", ":material/timeline:"):
            with box:
                _serving_lifetime(ans)
    else:
        st.markdown(training_compute_line(sc, cost.training_flops))
        if line := training_speed_line(ans):
            st.markdown(line)
        if cost.tokens_note:
            st.caption(cost.tokens_note)
        st.markdown("**Per-run cluster cost**")
        page.table(views.runs, "train_run", "gpuplan-training-runs.csv", height=420)
        monthly = f"Monthly always-on (the same GPUs kept {sc.pricing.hours_per_month:g} h a month)"
        if box := page.section(monthly, "cost_monthly", ":material/table:"):
            with box:
                page.table(views.monthly, "train_monthly", "gpuplan-training-monthly.csv", height=420)
        title = "Over three years: this training run, then serving the model"
        if box := page.section(title, "cost_life", ":material/timeline:"):
            with box:
                run_usd = ans.cost_usd if ans.pick is not None else min(r.run_cost_usd for r in rows)
                serving = cached.answer_at(sc.with_(mode="inference", batch=1).model_dump_json(), pkey, False)
                monthly = serving.cost_usd or 0.0
                title = f"{fmt.usd(run_usd)} training run, then serving as recommended at {fmt.usd(monthly)} a month"
                st.plotly_chart(cached.lifetime_figure(run_usd, monthly, 36, title), key="life", config=chart)
    if not page.meeting():
        with page.guard("Energy, carbon and owning"):
            if box := page.section("Energy, carbon, price tiers and owning", "cost_site", ":material/bolt:"):
                with box:
                    site_views.energy_section(ans)
                    site_views.tiers_section(ans)
                    site_views.own_section(ans)
    cannot = f"{fmt.counted(len(cost.rejected), 'GPU/offer combination')} that cannot run"
    if views.rejected is not None and not page.meeting() and (box := page.section(cannot, "cost_rejected")):
        with box:
            page.show(views.rejected, "rejected")

if rows and not page.meeting():
    with page.guard("Market context"):
        if box := page.section("Market context (analyst estimates)", "cost_market", ":material/trending_down:"):
            with box:
                est = widgets.page_input("market")
                if est != "none":
                    start, basis = tables_cost.projection_start(ans, cost)
                    proj = MarketProjection.of(start, est, 24)
                    st.caption(
                        fmt.md_escape(
                            f"{proj.estimate.label}, from {basis} ({fmt.usd(start)} a month). An API-price trend, not "
                            "a GPU rental forecast: use today's rental prices for budgets."
                        )
                    )
                    st.plotly_chart(figures_cost.projection_figure(proj), key="projection", config=chart)
