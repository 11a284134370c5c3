"""The "Share and save" box: the link that reproduces the scenario on this page, a copy control, and the
scenario file (every input) to download and import."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

import streamlit as st

from gpuplan_core import Scenario, link_query, read_scenario_file, scenario_file

from . import prices, pricing_file, profiles
from .state import SHARE_OPEN
from .widgets import PAGE_INPUTS, set_inputs

IMPORT_NOTES = "import_notes"
MAX_SCENARIO_BYTES = 12_000_000  # the inputs, and the pricing file it may carry (at most 5 MB, JSON-escaped)


def all_values(values: dict[str, Any]) -> dict[str, Any]:
    """The sidebar's values and the pages' own inputs (as held now, on whichever page they live)."""
    return {**values, **st.session_state.get(PAGE_INPUTS, {})}


BASE_URL_ENV = "GPUPLAN_BASE_URL"  # a hosted deployment's public address, where the request's own is not it


def page_url(values: dict[str, Any]) -> str:
    """This page's address with the query string of every input not at its default (st.context.url has none):
    absolute, from the request (or GPUPLAN_BASE_URL and the page's path, for a deployment behind a proxy)."""
    try:
        base = (st.context.url or "").split("?")[0]
    except Exception:  # noqa: BLE001 - no request context (AppTest)
        base = ""
    if base and not urlsplit(base).path:  # the root page: "http://host:port" -> "http://host:port/"
        base += "/"
    if host := os.environ.get(BASE_URL_ENV, "").rstrip("/"):
        path = urlsplit(base).path if base else "/"
        base = host + (path if path.startswith("/") else "/" + path)
    query = link_query(values)
    return f"{base or '/'}{'?' + query if query else ''}"


def panel(values: dict[str, Any], sc: Scenario, page: str) -> None:
    # Rendered only while open (a lazy expander): its elements are not rebuilt on every rerun.
    box = st.expander("Share and save", key=SHARE_OPEN, on_change="rerun", icon=":material/share:")
    if not box.open:
        return
    everything = all_values(values)  # read now: the download below runs outside this script run
    with box:
        st.caption(
            "Copy this link (the copy button is at the box's right edge): it opens this page with this "
            "scenario. A pricing file loaded on Data & pricing is in it (kept on this server); an uploaded "
            "config stays in this session. The scenario file carries the pricing file itself."
        )
        st.code(page_url(everything), language=None, wrap_lines=True)
        st.download_button(
            "Download scenario (JSON)",
            lambda: scenario_file(  # on click
                everything,
                sc,
                page,
                pricing_file.for_scenario_file(everything),
                profiles.for_scenario_file(everything),
            ),
            "gpuplan-scenario.json",
            "application/json",
            on_click="ignore",
            key="dl_scenario",
            icon=":material/download:",
        )
        st.file_uploader("Import a scenario JSON", type=["json"], key="scenario_upload", on_change=_apply_import)


def _apply_import() -> None:
    """on_change of the scenario upload: set every input before the widgets render on the rerun."""
    f = st.session_state.get("scenario_upload")
    if f is None:
        return
    values, notes = read_scenario_file(f.getvalue()[:MAX_SCENARIO_BYTES])
    values = pricing_file.imported(f.getvalue()[:MAX_SCENARIO_BYTES], values, notes)
    values = profiles.imported(f.getvalue()[:MAX_SCENARIO_BYTES], values, notes)
    set_inputs(values)
    st.session_state[IMPORT_NOTES] = notes or [f"Scenario imported ({len(values)} inputs)."]


def report_button(sc: Scenario, values: dict[str, Any], page: str) -> None:
    """'Download report': one HTML file to attach to a decision email (built on click, from the cached reports)."""

    everything = all_values(values)
    pkey = prices.pricing_key()
    explore = bool(everything.get("alt_formats")) and sc.job.mode == "inference"
    link = page_url(everything)  # now, while the request is known: the file is built on click, outside this run
    st.download_button(
        "Download report (HTML)",
        lambda: report_html(sc, everything, pkey, explore, link),
        f"gpuplan-report-{sc.model().name.replace('/', '-')}.html",
        "text/html",
        on_click="ignore",
        key=f"dl_report_{page}",
        icon=":material/summarize:",
        help="One file that opens offline: the scenario and its link, each page's answer and numbers, the "
        "why-chain, the main charts and the prices' sources and dates.",
    )


def report_html(sc: Scenario, values: dict[str, Any], pkey: str, explore: bool, link: str | None = None) -> str:
    from gpuplan_core import RECORDS, cost_answer, memory_answer, perf_answer, plan_answer, site_answer

    from . import cached, figures_cost, figures_site, report

    key = sc.model_dump_json()
    inference = sc.job.mode == "inference"
    mem = cached.memory_report(key, pkey, explore and inference)
    ans = cached.answer_at(key, pkey, explore and inference)
    views = cached.plan_views(key, pkey, explore and inference, not inference)
    plan = ans.plan
    answers = [("Recommendation", plan_answer(ans, sc)), ("Memory", memory_answer(mem, sc))]
    mem_fig = cached.memory_views(key, pkey, explore and inference).figure
    figs = [(t, f) for t, f in (("Recommendation", views.pareto), ("Memory", mem_fig)) if f is not None]
    if inference:  # as the Performance page: the recommended layout unless the user picked another
        shown = ans.detail_scenario(sc)
        skey, gpu = shown.model_dump_json(), shown.parallelism.gpu or "H100-SXM"
        pv = cached.perf_views(skey, gpu)
        sv = cached.serving_views(skey, gpu) if pv.perf.fits else None
        curve = None if sv is None else sv.curve
        pick = ans if ans.shows_pick(sc.parallelism) else None
        answers.append(("Performance", perf_answer(pv.perf, curve, shown, pick)))
        if sv is not None:
            figs.append(("Performance", sv.ttft))
    cost = cached.cost_views(key, pkey).cost
    answers.append(("Cost", cost_answer(ans, sc, len(cost.offers))))
    if cost.offers:
        figs.append(("Cost", figures_cost.cheapest_figure(cost.offers, inference)))
    if (site := site_answer(ans)) is not None:
        answers.append(("Energy, carbon and owning", site))
    if ans.own is not None:
        figs.append(("Energy, carbon and owning", figures_site.own_vs_rent_figure(ans.own)))
    used = {p.offer_id for p in plan.picks}
    sources = [o for o in prices.offers_for(pkey) if o.offer_id in used]
    job = next(inp for inp in RECORDS if inp.key == "workload")
    lines = [f"Model: {sc.model().name}", f"Job: {job.shown(values.get('workload', job.default))}"]
    for inp in RECORDS:  # the model's source ("Model: Published model") and preset are in its name above
        if inp.key in values and inp.key not in ("workload", "src", "model") and not inp.is_default(values[inp.key]):
            lines.append(f"{inp.label}: {inp.shown(values[inp.key])}")
    why = [f"{w.label}: {w.value}" + (f" ({w.detail})" if w.detail else "") for w in ans.why]
    return report.build(
        model=sc.model().name,
        link=link or page_url(values),
        scenario_lines=lines,
        answers=answers,
        why=why,
        figures=figs,
        prices=sources,
    )
