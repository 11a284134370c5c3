"""Compare: scenario A (the sidebar) against scenario B (A with the overrides picked here)."""

import streamlit as st

from gpuplan_core.catalog import get_gpu
from gpuplan_core.formats import FORMATS
from gpuplan_core.inputs import page_inputs, variant
from gpuplan_core.serving import DEFAULT_GPU
from gpuplan_ui import cached, fmt, page, widgets

sc, values = page.setup("Compare A vs B")
st.caption("A is the sidebar scenario. B is A with what you change here; both are in the link.")
if not sc.gpu:  # A compares one GPU type: the reference one when the sidebar says "any"
    sc = sc.model_copy(update={"gpu": DEFAULT_GPU})
    st.caption(f"The sidebar's GPU is 'any': A uses the {get_gpu(DEFAULT_GPU).label}. Pick a GPU to compare another.")
if line := cached.prices_in_use():
    st.caption(line)

b_inputs = page_inputs("Compare")
cols = st.columns(len(b_inputs))
b_values = {inp.key: widgets.page_input(inp.key, col) for inp, col in zip(b_inputs, cols, strict=True)}
sc_b, b_notes = variant(sc, {**values, **b_values})
for n in b_notes:
    st.warning(fmt.md_escape(n), icon=":material/info:")


def summary(s):
    k = s.model_dump_json()
    mem = cached.memory_report(k)
    g = mem.gpu_fit(get_gpu(s.gpu).gpu)
    out = {"label": f"{g.label} x{s.gpus}, {FORMATS[s.weights_format].label} weights", "mem": mem, "gpu": g}
    if s.mode == "inference":
        out["perf"] = cached.perf_report(k, (get_gpu(s.gpu).gpu,)).gpus[0]
    out["cost"] = None
    if g.fits:  # one notion of fits: a price only for the layout the page says fits, priced at that layout
        cost = cached.cost_report(k, cached.pricing_key(), fixed_layout=True)
        mine = [r for r in cost["offers"] if r["gpu"] == g.gpu]
        out["cost"] = min(
            mine, key=lambda r: r["monthly_always_on_usd"] if s.mode == "inference" else r["run_cost_usd"], default=None
        )
    return out


cols = st.columns(2)
for col, name, s in ((cols[0], "A", sc), (cols[1], "B", sc_b)):
    with col, page.guard(f"Scenario {name}"):
        r = summary(s)
        st.subheader(f"{name}: {r['label']}")
        g = r["gpu"]
        m1, m2, m3 = st.columns(3)
        m1.metric("Memory per GPU", fmt.gb(r["mem"].per_gpu_bytes), help="whole runtime, decimal GB")
        m2.metric("Fits?", "yes" if g.fits else "no", help=f"needs {g.min_gpus} GPU(s) at minimum")
        m3.metric("Max batch", f"{g.max_batch:,}")
        p = r.get("perf")
        if p is not None and p.fits:
            m4, m5, m6 = st.columns(3)
            m4.metric("TTFT", fmt.ms(p.ttft_s))
            m5.metric("TPOT", fmt.ms(p.tpot_s))
            m6.metric("Tokens/s (batch)", f"{p.decode_tokens_per_s:,.0f}")
            band = p.error_band
            for col, k in ((m4, "ttft_s"), (m5, "tpot_s"), (m6, "decode_tokens_per_s")):
                col.caption(band[k].short, help=band[k].text)
            if p.notes:
                st.caption(" ".join(p.notes))
        cst = r["cost"]
        if not g.fits:
            need = f"{g.min_gpus:,} GPUs" if g.min_gpus else "more GPUs than any layout tried"
            st.caption(f"Does not fit {g.label} x{s.gpus}: it needs {need}. No price for what cannot run.")
        elif cst is None:
            st.caption("No offer for this GPU matches the pricing filters.")
        elif s.mode == "inference":
            m7, m8 = st.columns(2)
            m7.metric(
                "Cheapest always-on",
                f"{fmt.usd(cst['monthly_always_on_usd'])}/mo",
                help=f"{cst['offer_id']}: {cst['layout']} x {cst['replicas']} replica(s)",
            )
            m8.metric(
                "$ per 1M output tokens",
                fmt.usd(cst["output_cost_per_million_usd"]),
                help=f"at {s.utilization:.0%} utilization",
            )
        else:
            st.metric("Cheapest training run", fmt.usd(cst["run_cost_usd"]), help=cst["offer_id"])
