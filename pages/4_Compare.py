"""Compare: scenario A (the sidebar) against scenario B (a few overrides) side by side."""

import streamlit as st

from gpuplan_core.catalog import get_gpu
from gpuplan_core.errors import describe
from gpuplan_core.formats import FORMATS, KV_FORMATS, WEIGHT_FORMATS
from gpuplan_ui import cached, fmt, page
from gpuplan_ui.state import gpu_ids

sc, values = page.setup("Compare A vs B", ":material/compare_arrows:")
st.caption("A is the sidebar scenario. B changes only what you pick here; both are in the link.")

ids = gpu_ids()


def first(key, **kw):
    """Initial value only on a widget's first render (later the session state holds it)."""
    return {} if key in st.session_state else kw


c = st.columns(5)
b_gpu = c[0].selectbox(
    "B: GPU",
    ids,
    key="b_gpu",
    format_func=lambda g: get_gpu(g).label,
    bind="query-params",
    **first("b_gpu", index=ids.index("L40S")),
)
b_w = c[1].selectbox(
    "B: weights",
    WEIGHT_FORMATS,
    key="b_weights",
    format_func=lambda f: FORMATS[f].label,
    bind="query-params",
    **first("b_weights", index=WEIGHT_FORMATS.index("fp8")),
)
b_kv = c[2].selectbox(
    "B: KV cache",
    KV_FORMATS,
    key="b_kv",
    format_func=lambda f: FORMATS[f].label,
    bind="query-params",
    **first("b_kv", index=KV_FORMATS.index("fp8")),
)
# float inputs shown as whole numbers: an integer input crashes on a link value such as INF (sidebar._number)
b_gpus = round(
    c[3].number_input(
        "B: GPUs", 1.0, 4096.0, step=1.0, format="%.0f", key="b_gpus", bind="query-params", **first("b_gpus", value=1.0)
    )
)
b_batch = round(
    c[4].number_input(
        "B: batch",
        1.0,
        4096.0,
        step=1.0,
        format="%.0f",
        key="b_batch",
        bind="query-params",
        **first("b_batch", value=8.0),
    )
)

try:
    sc_b = type(sc)(
        **{
            **sc.model_dump(),
            "gpu": b_gpu,
            "weights_format": b_w,
            "kv_format": b_kv,
            "gpus": b_gpus,
            "tp": 1,
            "pp": 1,
            "batch": b_batch,
        }
    )
except ValueError as exc:
    st.error(f"Scenario B: {describe(exc)}")
    st.stop()


def summary(s):
    k = s.model_dump_json()
    mem = cached.memory_report(k)
    g = next(x for x in mem["gpus"] if x["gpu"] == get_gpu(s.gpu).gpu)
    out = {"label": f"{g['label']} x{s.gpus}, {FORMATS[s.weights_format].label} weights", "mem": mem, "gpu": g}
    if s.mode == "inference":
        out["perf"] = cached.perf_report(k, (get_gpu(s.gpu).gpu,))["gpus"][0]
    cost = cached.cost_report(k, cached.pricing_key())
    mine = [r for r in cost["offers"] if r["gpu"] == g["gpu"]]
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
        m1.metric("Memory per GPU", fmt.gb(r["mem"]["per_gpu_bytes"]), help="whole runtime, decimal GB")
        m2.metric("Fits?", "yes" if g["fits"] else "no", help=f"needs {g['min_gpus']} GPU(s) at minimum")
        m3.metric("Max batch", f"{g['max_batch']:,}")
        p = r.get("perf")
        if p and "ttft_s" in p:
            m4, m5, m6 = st.columns(3)
            m4.metric("TTFT", fmt.ms(p["ttft_s"]))
            m5.metric("TPOT", fmt.ms(p["tpot_s"]))
            m6.metric("Tokens/s (batch)", f"{p['decode_tokens_per_s']:,.0f}")
            if p["notes"]:
                st.caption(" ".join(p["notes"]))
        cst = r["cost"]
        if cst is None:
            st.caption("No offer for this GPU matches the pricing filters.")
        elif s.mode == "inference":
            m7, m8 = st.columns(2)
            m7.metric("Cheapest always-on", f"{fmt.usd(cst['monthly_always_on_usd'])}/mo", help=cst["offer_id"])
            m8.metric(
                "$ per 1M output tokens",
                fmt.usd(cst["output_cost_per_million_usd"]),
                help=f"at {s.utilization:.0%} utilization",
            )
        else:
            st.metric("Cheapest training run", fmt.usd(cst["run_cost_usd"]), help=cst["offer_id"])
