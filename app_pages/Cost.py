"""Cost: monthly always-on vs per-run cluster cost per offer, serverless, $ per 1M tokens, lifetime."""

import streamlit as st

from gpuplan_core.cost import MARKET_ESTIMATES, lifetime, market_projection
from gpuplan_ui import cached, figures, fmt, page, widgets

sc, values = page.setup("Cost")
key = sc.model_dump_json()
pkey = cached.pricing_key()

with page.guard("Costs per offer"):
    views = cached.cost_views(sc.model_copy(update={"gpu": None}).model_dump_json(), pkey)
    cost = views["cost"]
    rows = cost["offers"]
    if line := cached.prices_in_use():
        st.caption(line)
    serverless_line = (
        "**Serverless** (workers batch like replicas; start-up, execution and idle timeout billed, a cold start only "
        "after an idle gap longer than the idle timeout; cold start = 20 s + weights load at 2 GB/s)"
    )
    if not rows and views["serverless"] is not None:  # the filter kept serverless offers only
        st.markdown(serverless_line)
        page.table(views["serverless"], "serverless", "gpuplan-serverless.csv")
    elif not rows:
        st.info(
            "No offer matches the pricing filters, or the model fits no GPU that has offers. Widen the billing or "
            "provider filter in the sidebar.",
            icon=":material/info:",
        )
    elif sc.mode == "inference":
        st.markdown(
            f"Assumptions: always-on = nodes x node price x **{sc.hours_per_month:g} h/month**, billable while idle; "
            "per-run = one day's requests as a batch job on one replica (one hour without a traffic estimate), "
            "billed in each offer's increments with its minimum; $ per 1M tokens at "
            f"**{sc.utilization:.0%} utilization**. Interactive serving leaves out spot offers unless Billing = Spot."
        )
        left, right = st.columns(2)
        with left:
            st.markdown(f"**Monthly always-on** ({sc.hours_per_month:g} h)")
            page.table(views["always_on"], "always_on", "gpuplan-monthly-always-on.csv", height=420)
        with right:
            st.markdown(f"**Per run** ({rows[0]['run_description']})")
            page.table(views["per_run"], "per_run", "gpuplan-per-run.csv", height=420)
        with st.expander("Every offer in detail (replicas, $ per 1M input tokens, TTFT, TPOT, billing notes, sources)"):
            page.table(views["detail"], "cost_detail", "gpuplan-cost-detail.csv")
        if views["serverless"] is not None:
            st.markdown(serverless_line)
            page.table(views["serverless"], "serverless", "gpuplan-serverless.csv")
        elif not sc.requests_per_day:
            st.caption("Serverless needs a traffic estimate: set requests per day in the sidebar.")
        best_monthly = min(r["monthly_always_on_usd"] for r in rows)
        st.subheader("Lifetime: training once, inference every month")
        train_cost = cached.cost_report(
            sc.model_copy(
                update={"mode": "training", "training_tokens": None, "batch": 1, "zero_stage": 3}
            ).model_dump_json(),
            pkey,
        )
        est = min((r["run_cost_usd"] for r in train_cost["offers"]), default=0.0)
        bill = widgets.page_input("train_bill") or round(est, -2)
        life = lifetime(bill, best_monthly, 36)
        st.plotly_chart(
            figures.lifetime_figure(
                life, f"Cheapest always-on serving {fmt.usd(best_monthly)}/month vs a {fmt.usd(bill)} training bill"
            ),
            key="life",
            config={"displaylogo": False},
        )
    else:
        st.markdown(
            f"Training compute: **{cost['training_flops']:.3g} FLOPs** = tokens x (6 x active parameters + causal "
            f"attention), at MFU {cost['mfu']:.2f} of each GPU's dense BF16 peak; +{sc.overhead_factor:.0%} for failed "
            "runs and sweeps; GPUs rounded up to whole nodes, billed in each offer's increments."
        )
        if cost.get("tokens_note"):
            st.caption(cost["tokens_note"])
        left, right = st.columns([3, 2])
        with left:
            st.markdown("**Per-run cluster cost**")
            page.table(views["runs"], "train_run", "gpuplan-training-runs.csv", height=420)
        with right:
            st.markdown(f"**Monthly always-on** (the same GPUs kept {sc.hours_per_month:g} h/month)")
            page.table(
                views["monthly"],
                "train_monthly",
                "gpuplan-training-monthly.csv",
                height=420,
            )
        best = rows[0]
        serve = cached.cost_report(sc.model_copy(update={"mode": "inference", "batch": 8}).model_dump_json(), pkey)
        monthly = min((r["monthly_always_on_usd"] for r in serve["offers"]), default=0.0)
        st.subheader("Lifetime: this training run, then serving the model")
        life = lifetime(best["run_cost_usd"], monthly, 36)
        st.plotly_chart(
            figures.lifetime_figure(
                life,
                f"{fmt.usd(best['run_cost_usd'])} training run vs cheapest "
                f"always-on serving at {fmt.usd(monthly)}/month",
            ),
            key="life",
            config={"displaylogo": False},
        )
    if views["rejected"] is not None:
        with st.expander(f"{len(cost['rejected'])} GPU/offer combinations that cannot run"):
            st.dataframe(views["rejected"].arrow, hide_index=True, width="stretch")

with page.guard("Market context"):
    st.subheader("Market context (analyst estimates)")
    est = widgets.page_input("market")
    if est != "none" and rows:
        base = min(r["monthly_always_on_usd"] for r in rows)
        label = MARKET_ESTIMATES[est]["label"]
        st.caption(label + ". An API-price trend, not a GPU rental forecast: use today's rental prices for budgets.")
        st.plotly_chart(
            figures.projection_figure(market_projection(base, est, 24), label),
            key="projection",
            config={"displaylogo": False},
        )
