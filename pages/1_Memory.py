"""Memory: the budget by component against each GPU's VRAM, and what fits where."""

import pandas as pd
import streamlit as st

from gpuplan_ui import cached, figures, fmt, page

sc, values = page.setup("Memory", ":material/memory:")
key = sc.model_dump_json()

with page.guard("Memory budget"):
    mem = cached.memory_report(key)
    sel = next((g for g in mem["gpus"] if g["selected"]), mem["gpus"][0])
    fits = [g["gpu"] for g in mem["gpus"] if g["fits"]]
    if fits:
        st.success(
            f"At {mem['layout']['gpus']} GPU(s) the job needs **{fmt.gb(mem['per_gpu_bytes'])} per GPU** "
            f"({fmt.gib(mem['per_gpu_bytes'])}, scope: {mem['scope']}). It fits: {', '.join(fits)}.",
            icon=":material/check_circle:",
        )
    else:
        need = ", ".join(f"{g['gpu']} x{g['min_gpus']}" for g in mem["gpus"] if g["min_gpus"])
        st.warning(
            f"At {mem['layout']['gpus']} GPU(s) the job needs {fmt.gb(mem['per_gpu_bytes'])} per GPU: no "
            f"catalog GPU holds it. Smallest layouts that do: {need or 'none up to 4,096 GPUs'}.",
            icon=":material/warning:",
        )
    st.plotly_chart(figures.memory_figure(mem), key="mem_chart", config={"displaylogo": False})
    left, right = st.columns([3, 2])
    with left:
        st.markdown("**Budget by component (per GPU)**")
        comp = pd.DataFrame(
            [
                {"component": k, "GB (10^9 B)": round(v / 1e9, 3), "GiB (2^30 B)": round(v / 2**30, 3), "bytes": v}
                for k, v in mem["components"].items()
            ]
        )
        page.table(comp, "components", "gpuplan-memory-components.csv")
    with right:
        st.markdown("**Budgets by scope (per GPU)**")
        for scope, v in mem["budgets"].items():
            st.markdown(f"- *{scope}*: {fmt.gb(v, 2)} ({fmt.gib(v, 2)})")
        st.markdown(f"- *all {mem['layout']['gpus']} GPU(s), whole runtime*: {fmt.gb(mem['total_bytes'], 2)}")
        for n in mem["notes"]:
            st.caption(n)
    st.markdown("**Every catalog GPU**")
    rows = [
        {
            "GPU": g["gpu"],
            "fits": "yes" if g["fits"] else "no",
            "usable VRAM (GiB)": round(g["vram_usable_bytes"] / 2**30, 2),
            "budget (GB)": round(g["budget_bytes"] / 1e9, 1),
            "min GPUs": g["min_gpus"],
            "min layout": "-"
            if not g["min_layout"]
            else f"tp {g['min_layout']['tp']} x pp {g['min_layout']['pp']} x dp {g['min_layout']['dp']}",
            "max batch at this context": g["max_batch"],
            "max context at this batch": g["max_context"],
            "KV capacity (tokens)": g["kv_capacity_tokens"],
        }
        for g in mem["gpus"]
    ]
    page.table(pd.DataFrame(rows), "gpus", "gpuplan-memory-per-gpu.csv")

if sc.mode != "inference":
    with page.guard("Both training accountings"):
        st.subheader("Both accountings")
        st.caption(
            "Two published rules for mixed-precision Adam. Neither is universal; the budget above uses "
            f"**{'ZeRO (16 B/param)' if sc.accounting == 'zero' else 'Hugging Face (18 B/param)'}**."
        )
        cols = st.columns(2)
        for col, acc, label in (
            (cols[0], "zero", "ZeRO paper: 16 bytes/param"),
            (cols[1], "hf", "Hugging Face: 18 bytes/param"),
        ):
            r = cached.memory_report(sc.model_copy(update={"accounting": acc}).model_dump_json())
            col.metric(label, fmt.gb(r["budgets"]["model states"]), help="model states per GPU, before activations")
            col.caption(
                ", ".join(
                    f"{k} {fmt.gb(v)}"
                    for k, v in r["components"].items()
                    if k not in ("activations", "logits (fp32)", "CUDA context", "communication buffers")
                )
            )
