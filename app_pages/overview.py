"""gpuplan home: the recommendation in one sentence, the numbers that decide it, why, and the evidence."""

import streamlit as st

from gpuplan_core import engine_name, plan_answer, training_speed_line
from gpuplan_ui import cached, fmt, page, prices, share, widgets

sc, values = page.setup("Which GPU should we rent, how many, and what will it cost?")
key = sc.model_dump_json()
inference = sc.job.mode == "inference"
explore = bool(widgets.page_value("alt_formats")) and inference

plan = None
with page.guard("Recommendation"):
    ans = cached.answer(sc)
    views = cached.plan_views(key, prices.pricing_key(), explore, not inference)
    plan = ans.plan
    page.answer(plan_answer(ans, sc))

if plan is not None:
    if not page.meeting():
        share.report_button(sc, values, "")
        if inference:
            widgets.page_input("alt_formats")
        if line := prices.prices_in_use():
            st.caption(fmt.md_escape(line))
        if ans.checks:
            st.caption(
                "Targets: "
                + "; ".join(c.text() for c in ans.checks)
                + (
                    " under your traffic, with continuous batching"
                    if sc.traffic.requests_per_day
                    else " for one request"
                )
                + " (set them under "
                + ("Traffic and latency targets)." if inference else "Training).")
            )
    if ans.pick is not None:
        top = ans.pick
        if ans.why:
            st.markdown("**Why this many GPUs, and this cost**")
            st.markdown(
                "\n".join(
                    f"{n}. **{fmt.md_escape(w.label)}: {fmt.md_escape(w.value)}**"
                    + (f" ({fmt.md_escape(w.detail)})" if w.detail else "")
                    for n, w in enumerate(ans.why, 1)
                )
            )
        if views.pareto is not None:
            st.plotly_chart(views.pareto, key="pareto", config={"displaylogo": False})
        if not inference and (line := training_speed_line(ans)):
            st.markdown(line)  # the predicted MFU with its band, as the Cost page shows it
        if not page.meeting():
            st.markdown("\n".join(f"- {fmt.md_escape(line)}" for line in top.why))
            if top.ttft_s is not None:
                st.caption(
                    f"How sure: {top.error_band} (the median error of comparable published measurements; "
                    "Performance lists them)."
                )
            st.markdown(f"**The {len(plan.picks)} cheapest of {plan.candidates} configurations** ({plan.unit})")
            page.table(views.picks, "picks", "gpuplan-recommendation.csv")
            if ans.near_misses:
                st.markdown("**Cheaper, but they miss the target**")
                st.markdown(
                    "\n".join(
                        "- "
                        + fmt.md_escape(
                            f"{p.offer_id} ({p.layout}, {p.weights_format}, "
                            f"{fmt.usd(p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd)}): "
                            + "; ".join(p.misses)
                        )
                        for p in ans.near_misses
                    )
                )
            deploy = f"Deploy it: the {engine_name(sc)} command and a SkyPilot task"
            if inference and (box := page.section(deploy, "deploy", ":material/rocket_launch:")):
                with box:
                    dep = cached.deployment(key, top.model_dump_json(), values.get("hf") or None)
                    st.caption("One replica of the pick; start as many as the plan says (or use `sky serve`).")
                    st.code(dep.command, language="bash")
                    st.code(dep.skypilot, language="yaml")
    if not page.meeting():
        if plan.tokens_note:
            st.caption(plan.tokens_note)
        cannot = f"{fmt.counted(len(plan.rejected), 'option')} that cannot run"
        if views.rejected is not None and (box := page.section(cannot, "rejected")):
            with box:
                page.show(views.rejected, "rejected")
