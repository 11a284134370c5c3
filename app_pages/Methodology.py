"""Methodology: every formula with its source, units, assumptions and their defaults (the text in
gpuplan_ui/methodology.py and methodology_sources.py, the tables in tables_reference.py)."""

import streamlit as st

from gpuplan_core import METHODOLOGY_ANSWER
from gpuplan_ui import cached, methodology, methodology_sources, page, tables_reference

sc, values = page.setup("Methodology", needs_model=False)
page.answer(METHODOLOGY_ANSWER)

st.markdown(methodology.formulas())
st.markdown(methodology.ENGINES)
page.show(tables_reference.engines(), "engines")
st.markdown(methodology.ENGINE_RELEASES)
page.show(tables_reference.engine_releases(), "engine_releases")

st.markdown(methodology.TRUST)
page.show(cached.calibration_regimes_table(), "regimes")
st.markdown(methodology.serving_trust(cached.calibration_report()))
page.show(cached.serving_calibration_table(), "serving_regimes")
st.markdown(methodology.EFFICIENCY)
page.show(tables_reference.efficiency(), "efficiency")

st.markdown("### Number formats")
page.show(tables_reference.formats(), "fmts")

st.markdown("### Adjustable assumptions and their defaults")
page.show(tables_reference.assumptions(), "assumptions")

st.markdown(methodology_sources.DEFAULTS_AND_INPUTS)
page.show(tables_reference.inputs(), "inputs")

st.markdown("### Use-case presets")
page.show(tables_reference.use_cases(), "use_cases")
st.markdown(methodology_sources.use_case_sources())

st.markdown("### Market context: analyst estimates, never averaged")
st.markdown(methodology_sources.market_estimates())

st.markdown(methodology_sources.SOURCES)
