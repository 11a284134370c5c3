"""gpuplan home: the answer first (the recommendation), then headline numbers."""

import streamlit as st

from gpuplan_ui import cached, fmt, page, widgets

sc, values = page.setup("Which GPU should we rent, how many, and what will it cost?")
key = sc.model_dump_json()

with page.guard("Headline numbers"):
    mem = cached.memory_report(key)
    sel = next((g for g in mem.gpus if g.selected), mem.gpus[0])
    st.caption(
        fmt.md_escape(mem.model)
        + (" (approximate shape from the size)" if mem.approximate else "")
        + f" · {mem.mode}"
        + (f" ({mem.method})" if mem.mode != "inference" else "")
        + f" · weights {mem.weights_format} · "
        + (
            f"{sc.input_tokens:,} input + {sc.output_tokens:,} output tokens per request"
            if sc.mode == "inference"
            else f"sequences of {sc.sequence_tokens:,} tokens"
        )
        + f" · batch {mem.batch}"
    )
    c = st.columns(5)
    c[0].metric(
        "Parameters",
        fmt.count(mem.params_total),
        help=f"{mem.params_total:,} total, {mem.params_active:,} active per token",
    )
    c[1].metric(
        "Weights",
        fmt.gb(mem.weights_bytes_total),
        help="Scope: weights only, whole model, decimal GB",
    )
    c[2].metric(
        "Memory per GPU",
        fmt.gb(mem.per_gpu_bytes),
        help=f"Scope: whole runtime, at {mem.layout.gpus} GPU(s); {fmt.gib(mem.per_gpu_bytes)}",
    )
    if sc.gpu:
        c[3].metric(
            f"Fits one {sel.label}?" if mem.layout.gpus == 1 else f"Fits {mem.layout.gpus} x {sel.label}?",
            "yes" if sel.fits else "no",
            delta=None if sel.fits else (f"needs {sel.min_gpus:,} GPUs" if sel.min_gpus else "fits no layout"),
            delta_color="off",
            help=f"Per-GPU budget {fmt.gb(sel.budget_bytes)} = usable VRAM x {mem.memory_utilization:.0%}; the "
            f"smallest layout that fits: {sel.min_gpus or 'none up to 4,096'} GPUs",
        )
    else:
        holds = [g.label for g in mem.gpus if g.fits]
        c[3].metric(
            f"GPU types that hold it at {mem.layout.gpus} GPU(s)",
            f"{len(holds)} of {len(mem.gpus)}",
            help=(", ".join(holds) or "none: it needs more GPUs per replica (the recommendation finds how many)")
            + ". The complete memory budget at the scenario's batch against usable VRAM x memory utilization.",
        )
    if mem.mode == "inference":
        c[4].metric(
            "KV cache per token",
            f"{mem.kv_cache_bytes_per_token:,.0f} B",
            help="2 x layers x KV heads x head_dim x bytes (MLA: the latent)",
        )
    else:
        c[4].metric(
            "Model states per GPU",
            fmt.gb(mem.budgets.get("model states")),
            help="Weights + master weights + gradients + optimizer states",
        )

st.subheader("Recommendation")
explore = widgets.page_input("alt_formats")
if line := cached.prices_in_use():
    st.caption(line)
if sc.mode == "inference" and (sc.ttft_target_s or sc.tpot_target_s):
    st.caption(
        f"Targets: p95 TTFT {fmt.ms(sc.ttft_target_s)} and mean TPOT {fmt.ms(sc.tpot_target_s)}"
        + (" under the traffic, with continuous batching" if sc.requests_per_day else " for one request")
        + " (set them under Traffic and latency targets)."
    )
with page.guard("Recommendation"):
    views = cached.plan_views(key, cached.pricing_key(), explore and sc.mode == "inference", sc.mode != "inference")
    plan = views["plan"]
    if not plan.picks:
        st.info(plan.message or "No configuration fits and meets the targets.", icon=":material/info:")
    else:
        top = plan.picks[0]
        cost = top.monthly_usd if top.monthly_usd is not None else top.run_cost_usd
        replicas = f" x {top.replicas} replicas" if top.replicas > 1 else ""
        st.success(
            f"**Rent {top.layout}{replicas} from {top.provider} ({top.product}, "
            f"{top.billing_model.replace('_', ' ')})** with {top.weights_format} weights: "
            f"**{fmt.usd(cost)}** {plan.unit.replace('USD ', '')}.",
            icon=":material/check_circle:",
        )
        if plan.why:
            st.markdown("**Why this many GPUs, and this cost**")
            st.markdown(
                "\n".join(
                    f"{n}. **{fmt.md_escape(w.label)}: {fmt.md_escape(w.value)}**"
                    + (f" ({fmt.md_escape(w.detail)})" if w.detail else "")
                    for n, w in enumerate(plan.why, 1)
                )
            )
        st.markdown("\n".join(f"- {fmt.md_escape(line)}" for line in top.why))
        if top.ttft_s is not None:
            st.caption(
                f"Predicted {'p95 ' if sc.requests_per_day else ''}TTFT {fmt.ms(top.ttft_s)}"
                + ("" if top.tpot_s is None else f", TPOT {fmt.ms(top.tpot_s)}")
                + f"; how sure: {top.error_band} (the median error of comparable published measurements; "
                "Performance lists them)."
            )
        st.markdown(f"**Top {len(plan.picks)} of {plan.candidates} candidates** ({plan.unit})")
        page.table(views["picks"], "picks", "gpuplan-recommendation.csv")
        if views["pareto"] is not None:
            st.plotly_chart(views["pareto"], key="pareto", config={"displaylogo": False})
        if plan.near_misses:
            st.markdown("**Cheaper, but they miss the target**")
            st.markdown(
                "\n".join(
                    f"- {p.offer_id} ({p.layout}, {p.weights_format}, "
                    f"{fmt.usd(p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd)}): "
                    + "; ".join(p.misses)
                    for p in plan.near_misses
                )
            )
        if sc.mode == "inference":
            with st.expander("Deploy it: the vLLM command and a SkyPilot task", icon=":material/rocket_launch:"):
                dep = cached.deployment(key, top.offer_id, top.layout, top.weights_format, values.get("hf") or None)
                st.caption("One replica of the pick; start as many as the plan says (or use `sky serve`).")
                st.code(dep["vllm"], language="bash")
                st.code(dep["skypilot"], language="yaml")
    if plan.tokens_note:
        st.caption(plan.tokens_note)
    if views["rejected"] is not None:
        with st.expander(f"{len(plan.rejected)} options that cannot run"):
            st.dataframe(views["rejected"].arrow, hide_index=True, width="stretch")
