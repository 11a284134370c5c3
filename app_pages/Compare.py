"""Compare: scenario A (the sidebar) against B (A with the changes picked here): a verdict, the differences, a chart."""

import streamlit as st

from gpuplan_core import DEFAULT_GPU, FORMATS, Answer, Headline, Side, compare, get_gpu, page_inputs, variant
from gpuplan_ui import cached, fmt, page, tables_cost, widgets

sc, values = page.setup("Compare A vs B")
if not sc.gpu:  # A compares one GPU type: the reference one when the sidebar says "any"
    sc = sc.model_copy(update={"gpu": DEFAULT_GPU})
b_inputs = page_inputs("Compare")
sc_b, b_notes = variant(sc, {**values, **{inp.key: widgets.page_value(inp.key) for inp in b_inputs}})


def side(s) -> Side:
    """What the page compares of one scenario: memory and fit, and only where it fits, speed and price (priced
    at the layout the page says fits)."""
    k = s.model_dump_json()
    mem = cached.memory_report(k)
    g = mem.gpu_fit(get_gpu(s.gpu).gpu)
    label = f"{g.label} x{s.gpus}, {FORMATS[s.weights_format].label} weights" + (
        f", batch {s.batch}" if s.mode == "inference" else ""
    )
    out = Side(label=label, fits=g.fits, per_gpu_bytes=mem.per_gpu_bytes)
    if not g.fits:
        out.needs = f"{g.min_gpus:,} x {g.label}" if g.min_gpus else "more GPUs than any layout tried"
        return out
    if s.mode == "inference":
        p = cached.perf_report(k, (g.gpu,)).gpus[0]
        if p.fits:
            out.ttft_s, out.tpot_s = p.ttft_s, p.tpot_s
    cost = cached.cost_report(k, cached.pricing_key(), fixed_layout=True)
    mine = [r for r in cost.offers if r.gpu == g.gpu]
    if mine and s.mode == "inference":
        best = min(mine, key=lambda r: r.monthly_always_on_usd)
        out.monthly_usd, out.per_million_usd = best.monthly_always_on_usd, best.output_cost_per_million_usd
    elif mine:
        out.run_usd = min(r.run_cost_usd for r in mine)
    return out


result = None
with page.guard("The comparison"):
    a, b = side(sc), side(sc_b)
    result = compare(a, b)
    heads = [
        Headline(label=f"{r.metric}, B", value=r.b, delta=None if r.change in ("0", "n/a") else r.change_pct)
        for r in result.rows
        if r.metric != "Fits"
    ]
    page.answer(
        Answer(
            sentence=result.verdict,
            headlines=heads[:4],
            tone="info" if result.identical else "good",
        )
    )

st.caption(
    "A is the sidebar's scenario"
    + (
        f" (its GPU is 'any': A uses the {get_gpu(DEFAULT_GPU).label})"
        if not values.get("gpu") or values["gpu"] == "any"
        else ""
    )
    + ". B starts as a copy of A; change what B does differently here. Both are in the link."
)
cols = st.columns(len(b_inputs))
for inp, col in zip(b_inputs, cols, strict=True):
    widgets.page_input(inp.key, col)
for n in b_notes:
    st.warning(fmt.md_escape(n), icon=":material/info:")
if line := cached.prices_in_use():
    st.caption(fmt.md_escape(line))

if result is not None:
    with page.guard("Differences"):
        left, right = st.columns(2)
        left.markdown(f"**A:** {fmt.md_escape(a.label)}")
        right.markdown(f"**B:** {fmt.md_escape(b.label)}")
        fig = cached.compare_figure(a.model_dump_json(), b.model_dump_json())
        st.plotly_chart(fig, key="compare", config={"displaylogo": False})
        if not page.meeting():
            page.show(tables_cost.differences(result), "differences")
            for s, name in ((a, "A"), (b, "B")):
                if not s.fits:
                    st.caption(f"{name} does not fit: it needs {s.needs}. No price for what cannot run.")
