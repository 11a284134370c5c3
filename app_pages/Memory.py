"""Memory: the budget by component against each GPU's VRAM, and what fits where."""

import streamlit as st

from gpuplan_core import memory_answer, training_speed_line
from gpuplan_ui import cached, fmt, page, prices

sc, values = page.setup("Memory", gpu_figures="memory")
key = sc.model_dump_json()
pkey, explore = prices.pricing_key(), cached.explore(sc)

with page.guard("Memory budget"):
    mem = cached.memory(sc)  # at the layout the answer runs (the Overview's pick)
    views = cached.memory_views(key, pkey, explore)
    page.answer(memory_answer(mem, sc))
    if mem.host_note:
        st.info(f"**Host RAM:** {fmt.md_escape(mem.host_note)}", icon=":material/memory:")
    if sc.job.mode != "inference" and (line := training_speed_line(cached.answer(sc))):
        st.markdown(line)
    st.plotly_chart(views.figure, key="mem_chart", config={"displaylogo": False})
    st.caption(
        f"Each bar: what a job may fill on one GPU of that type (the usable VRAM x {mem.memory_utilization:.0%} "
        "utilization), green where the layout search has a configuration on that type (its count and layout in "
        "the bar's words), darker grey where it has none (the reason in its words); outlined: the answer's GPU; "
        "light grey behind it: the VRAM on the label; the line: memory per GPU at the answer's layout."
    )
    if page.meeting():
        st.stop()  # the meeting view: the answer and one chart
    if box := page.section("Budget by component, and by scope", "mem_parts", ":material/stacked_bar_chart:"):
        with box:
            st.plotly_chart(views.components_figure, key="mem_parts", config={"displaylogo": False})
            left, right = st.columns([3, 2])
            with left:
                st.markdown("**Budget by component (per GPU)**")
                page.table(views.components, "components", "gpuplan-memory-components.csv")
            with right:
                st.markdown("**Budgets by scope (per GPU)**")
                st.markdown(
                    "\n".join(f"- *{scope}*: {fmt.gb(v, 2)} ({fmt.gib(v, 2)})" for scope, v in mem.budgets.items())
                    + f"\n- *all {fmt.counted(mem.layout.gpus, 'GPU')} of the layout, whole runtime*: "
                    + fmt.gb(mem.total_bytes, 2)
                )
                if mem.notes:
                    st.caption("\n\n".join(fmt.md_escape(n) for n in mem.notes))
    if box := page.section(
        "Every GPU type: the layout search's count, fit, largest batch", "mem_gpus", ":material/table:"
    ):
        with box:
            page.table(views.gpus, "gpus", "gpuplan-memory-per-gpu.csv")

if sc.job.mode != "inference" and sc.training.precision == "mixed":
    with page.guard("Both training accountings"):
        if box := page.section("Both accountings: ZeRO's 16 and Hugging Face's 18 bytes per parameter", "mem_acc"):
            with box:
                st.caption(
                    "Two published rules for mixed-precision Adam. Neither is universal; the budget above uses "
                    f"**{'ZeRO (16 B/param)' if sc.training.accounting == 'zero' else 'Hugging Face (18 B/param)'}**."
                )
                cols = st.columns(2)
                for col, acc, label in (
                    (cols[0], "zero", "ZeRO paper: 16 bytes/param"),
                    (cols[1], "hf", "Hugging Face: 18 bytes/param"),
                ):
                    r = cached.memory_accounting(key, pkey, explore, acc)
                    col.metric(label, fmt.gb(r.model_states_bytes), help="model states per GPU, before activations")
                    col.caption(
                        ", ".join(
                            f"{k} {fmt.gb(v)}"
                            for k, v in r.components.items()
                            if k in ("weights", "gradients", "master weights", "optimizer states")
                            or k.startswith(("adapter", "frozen"))
                        )
                    )
