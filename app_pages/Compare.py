"""Compare: scenario A (the sidebar) against B (A with the changes picked here): a verdict, the differences, a chart."""

import streamlit as st

from gpuplan_core import Answer, Headline, page_inputs, variant
from gpuplan_ui import cached, fmt, page, prices, tables_cost, widgets

sc, values = page.setup("Compare A vs B")
b_inputs = page_inputs("Compare")
b_values = {inp.key: widgets.page_value(inp.key) for inp in b_inputs}
sc_b, b_notes = variant(sc, {**values, **b_values})

report = None
with page.guard("The comparison"):
    report = cached.compare_report(
        sc.model_dump_json(),
        sc_b.model_dump_json(),
        prices.pricing_key(),
        not widgets.page_value("b_gpus"),
        cached.explore(sc),
    )
    result = report.comparison
    heads = [
        Headline(label=f"{r.metric}, B", value=r.b, delta=None if r.change in ("0", "n/a") else r.change_pct)
        for r in result.rows
        if r.metric not in ("Fits", *report.a.settings, *report.b.settings)
    ]
    page.answer(Answer(sentence=result.verdict, headlines=heads[:4], tone="info" if result.identical else "good"))

st.caption(
    "A is the sidebar's answer (the Overview's pick: its GPUs, layout, speed and cost); B is the answer to B's "
    "scenario, which starts as a copy of A: change what B does differently here. A side pinned to a GPU (and "
    "count) is the layout search on that GPU. Both are in the link."
)
cols = st.columns(len(b_inputs))
for inp, col in zip(b_inputs, cols, strict=True):
    widgets.page_input(inp.key, col)
for n in b_notes + ([] if report is None else report.notes):
    st.warning(fmt.md_escape(n), icon=":material/info:")
if line := prices.prices_in_use():
    st.caption(fmt.md_escape(line))

if report is not None:
    a, b = report.a, report.b
    with page.guard("Differences"):
        left, right = st.columns(2)
        left.markdown(f"**A:** {fmt.md_escape(a.label)}  \n*{fmt.md_escape(a.how)}*")
        right.markdown(f"**B:** {fmt.md_escape(b.label)}  \n*{fmt.md_escape(b.how)}*")
        fig = cached.compare_figure(a.model_dump_json(), b.model_dump_json())
        st.plotly_chart(fig, key="compare", config={"displaylogo": False})
        if not page.meeting():
            page.show(tables_cost.differences(report.comparison), "differences")
            for s, name in ((a, "A"), (b, "B")):
                if not s.fits:
                    st.caption(f"{name} has no configuration. {fmt.md_escape(s.needs)} No price for what cannot run.")
