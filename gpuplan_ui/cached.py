"""Cache wrappers around gpuplan_core calls: the reports and the views (figures, tables) built from them, once per
scenario, shared by every page. Which prices a session uses is prices.py's job; what is fetched over the network,
fetches.py's.

Arguments are the scenario as JSON (hashable, exactly the inputs). Reports are the core's typed (frozen) models,
held with st.cache_resource (no serialised copy per rerun: pages only read them, never mutate them); anything a
page may change goes through st.cache_data, which returns a copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd
import pyarrow as pa
import streamlit as st

from gpuplan_core import (
    CalibrationReport,
    CompareReport,
    CostReport,
    GpuPerf,
    Lifetime,
    MemoryReport,
    PerfReport,
    Plan,
    Rejected,
    Scenario,
    ScenarioAnswer,
    ServingCurve,
    api,
    load_gpus,
)

from . import figures, figures_cost, figures_perf, prices, tables, tables_cost, tables_reference, widgets
from .page import column_config


def _sc(sc_json: str) -> Scenario:
    return Scenario.model_validate_json(sc_json)


@st.cache_resource(max_entries=256, show_spinner=False)
def memory_report(sc_json: str, pricing_key: str | None = None, explore: bool = False) -> MemoryReport:
    """The memory report at the layout the answer runs (its pick for these prices and format choice), with the
    layout search's count per GPU type; without ``pricing_key``, the memory engine's at the scenario's own layout."""
    if pricing_key is None:
        return api.memory_report(_sc(sc_json))
    ans = answer_at(sc_json, pricing_key, explore)
    cost = cost_report(sc_json, pricing_key)  # cached: the answer's own cost table (its rows per GPU type)
    return api.memory_report(_sc(sc_json), offers=prices.offers_for(pricing_key), answer=ans, cost=cost)


def memory(sc: Scenario) -> MemoryReport:
    """This run's scenario's memory report at the answer's layout (the Memory page's)."""
    return memory_report(sc.model_dump_json(), prices.pricing_key(), explore(sc))


@st.cache_resource(max_entries=64, show_spinner=False)
def memory_accounting(sc_json: str, pricing_key: str, explore: bool, accounting: str) -> MemoryReport:
    """The budget under another training accounting, at the answer's layout (no search)."""
    sc = _sc(sc_json)
    pick = answer_at(sc_json, pricing_key, explore).pick
    other = sc.with_(accounting=accounting)
    return api.memory_report(other) if pick is None else api.memory_at_pick(other, pick)


@st.cache_resource(max_entries=256, show_spinner=False)
def perf_report(sc_json: str, gpus: tuple[str, ...] | None = None) -> PerfReport:
    return api.perf_report(_sc(sc_json), gpus=list(gpus) if gpus is not None else None)


@st.cache_resource(max_entries=128, show_spinner=False)
def cost_report(sc_json: str, pricing_key: str, fixed_layout: bool = False) -> CostReport:
    """Every offer priced (the core's cost_table): the growth block needs the answer, so the page builds it from the
    cached answer (growth_view), not twice here; the offers were checked when the session's prices were read."""
    return api.cost_table(_sc(sc_json), prices.offers_for(pricing_key), fixed_layout)


@st.cache_resource(max_entries=128, show_spinner=False)
def answer_at(sc_json: str, pricing_key: str, explore_formats: bool) -> ScenarioAnswer:
    """The one answer for a scenario, prices and format choice given (the report, built outside the page run)."""
    cost = cost_report(sc_json, pricing_key)  # cached: the Cost page's own, computed once for both
    offers = prices.offers_for(pricing_key)
    return api.answer_report(_sc(sc_json), offers=offers, explore_formats=explore_formats, cost=cost)


def answer(sc: Scenario) -> ScenarioAnswer:
    """The one answer to this run's scenario (every page headlines it): computed once per scenario, prices and the
    Overview's "also consider FP8 and INT4" choice (a page input, in the link on every page)."""
    return answer_at(sc.model_dump_json(), prices.pricing_key(), explore(sc))


def explore(sc: Scenario) -> bool:
    """The Overview's "also consider FP8 and INT4" choice, for serving."""
    return bool(widgets.page_value("alt_formats")) and sc.job.mode == "inference"


@st.cache_resource(show_spinner=False)
def calibration_report() -> CalibrationReport:
    return api.calibration_report()


# --- Views: the figures and tables a page shows, built once per scenario and kept with its report.
# Like the reports they are shared between sessions and never mutated; a page only hands them to
# st.plotly_chart / st.dataframe. A rerun of a scenario already seen builds nothing (plotly figure
# validation and DataFrame construction were ~30% of a page's rerun).


class Table(NamedTuple):
    """A table a page shows: the full-precision DataFrame (what the CSV download writes) and what is shown
    (tables.for_people: rounded, "n/a" for missing values) in Arrow form, converted once here so that
    st.dataframe only serialises it (the conversion was ~20% of the Cost page's rerun), and its column config
    (every column's width measured from its text: ~1.4 ms for a 64-row table, once here, not on every rerun)."""

    frame: pd.DataFrame
    arrow: pa.Table | pd.DataFrame
    shown: pd.DataFrame
    config: dict


def _table(df: pd.DataFrame, columns: tuple[str, ...] | None = None) -> Table:
    """``columns``: the ones shown (of those the frame has; the download keeps all)."""
    shown = tables.for_people(df if columns is None else df[[c for c in columns if c in df.columns]])
    config = column_config(shown)
    try:
        return Table(df, pa.Table.from_pandas(shown, preserve_index=False), shown, config)
    except (pa.ArrowException, ValueError, TypeError):  # mixed column types: st.dataframe applies its own fixes
        return Table(df, shown, shown, config)


table = _table  # for a view built on the page (Cost's price tiers): the same shown columns and widths


@dataclass(frozen=True)
class MemoryViews:
    """The Memory page's views: the budget against each GPU type's VRAM, by component, and its two tables."""

    figure: Any  # a plotly Figure
    components_figure: Any  # a plotly Figure
    components: Table
    gpus: Table


@st.cache_resource(max_entries=256, show_spinner=False)
def memory_views(sc_json: str, pricing_key: str | None = None, explore: bool = False) -> MemoryViews:
    mem = memory_report(sc_json, pricing_key, explore)
    return MemoryViews(
        figure=figures.memory_figure(mem),
        components_figure=figures.components_figure(mem),
        components=_table(tables.memory_components(mem)),
        gpus=_table(tables.memory_gpus(mem)),
    )


@dataclass(frozen=True)
class PerfViews:
    """The chosen GPU's speed and its views: the roofline, the batch sweep (None with a batch of one) and the phase
    table (all None when the model does not fit)."""

    perf: GpuPerf
    roofline: Any | None = None  # a plotly Figure
    sweep: Any | None = None  # a plotly Figure
    phases: Table | None = None


@st.cache_resource(max_entries=256, show_spinner=False)
def perf_views(sc_json: str, gpu: str) -> PerfViews:
    p = perf_report(sc_json, (gpu,)).gpus[0]
    if not p.fits:
        return PerfViews(p)
    return PerfViews(
        perf=p,
        roofline=figures_perf.roofline_figure(p),
        sweep=figures_perf.sweep_figure(p) if p.max_batch > 1 else None,
        phases=_table(tables.perf_phases(p)),
    )


@dataclass(frozen=True)
class CatalogViews:
    """Every GPU type as the plan runs it at the scenario's load: the latency chart, its table, the GPU types that
    run it nowhere with why, and whether it is at a load (else a static batch)."""

    figure: Any  # a plotly Figure
    table: Table
    missing: dict[str, str]
    at_load: bool


@st.cache_resource(max_entries=128, show_spinner=False)
def perf_catalog_views(sc_json: str, pricing_key: str, explore_formats: bool) -> CatalogViews:
    """From the answer's own search (api.gpus_at_load)."""
    sc, ans = _sc(sc_json), answer_at(sc_json, pricing_key, explore_formats)
    rows, missing = api.gpus_at_load(sc, prices.offers_for(pricing_key), explore_formats, answer=ans)
    at_load = bool(sc.traffic.requests_per_day)
    return CatalogViews(
        figure=figures_perf.latency_figure(rows, at_load),
        table=_table(tables.perf_gpus(rows, at_load)),
        missing=missing,
        at_load=at_load,
    )


def perf_catalog(sc: Scenario) -> CatalogViews:
    """``perf_catalog_views`` for this run's scenario, prices and format choice (those of the answer)."""
    return perf_catalog_views(sc.model_dump_json(), prices.pricing_key(), explore(sc))


@dataclass(frozen=True)
class ServingViews:
    """One replica under traffic on the chosen GPU: its curve (capacity, replicas) and the two load charts."""

    curve: ServingCurve
    ttft: Any  # a plotly Figure
    tpot: Any  # a plotly Figure


@st.cache_resource(max_entries=128, show_spinner=False)
def serving_views(sc_json: str, gpu: str) -> ServingViews:
    curve = api.serving_curve_report(_sc(sc_json), gpu)
    ttft, tpot = (figures_perf.load_figure(curve, which) for which in ("ttft", "tpot"))
    return ServingViews(curve=curve, ttft=ttft, tpot=tpot)


@st.cache_resource(show_spinner=False)
def serving_calibration_table():
    return _table(tables_reference.serving_calibration(calibration_report()))


@st.cache_resource(show_spinner=False)
def calibration_regimes_table():
    return _table(tables_reference.calibration_regimes(calibration_report()))


@st.cache_resource(show_spinner=False)
def calibration_table():
    return _table(tables_reference.calibration(calibration_report()))


@dataclass(frozen=True)
class PlanViews:
    """The Overview's views of the answer's plan: its five cheapest, what cannot run, the cost-latency front."""

    plan: Plan
    picks: Table | None
    rejected: Table | None
    pareto: Any | None  # a plotly Figure, drawn only with two or more points on the front


@st.cache_resource(max_entries=128, show_spinner=False)
def plan_views(sc_json: str, pricing_key: str, explore_formats: bool, training: bool) -> PlanViews:
    plan = answer_at(sc_json, pricing_key, explore_formats).plan  # the answer's own plan: not searched again
    picks = tables_cost.picks(plan, training) if plan.picks else None
    return PlanViews(
        plan=plan,
        picks=None if picks is None else _table(picks, tables_cost.picks_shown(plan, picks.columns)),
        rejected=_table(tables_cost.rejected([Rejected(**r) for r in plan.rejected])) if plan.rejected else None,
        pareto=figures_cost.pareto_figure(plan) if len(plan.pareto) > 1 else None,
    )


@dataclass(frozen=True)
class Deployment:
    """One pick's deployment texts: the serving engine's launch command (``engine`` names it) and the SkyPilot
    task."""

    engine: str
    command: str
    skypilot: str


@st.cache_data(max_entries=64, show_spinner=False)
def deployment(sc_json: str, pick_json: str, hf_id: str | None) -> Deployment:
    """The serving engine's command and SkyPilot task for one pick (the answer's) of this scenario."""
    from gpuplan_core import Pick, engine_name, serve_command, skypilot_yaml

    sc, pick = _sc(sc_json), Pick.model_validate_json(pick_json)
    return Deployment(engine_name(sc), serve_command(sc, pick, hf_id), skypilot_yaml(sc, pick, hf_id))


@dataclass(frozen=True)
class CostViews:
    """The Cost page's views: the report, and its tables and chart (None where the scenario has none: no offers,
    the other job's tables, no serverless offer, nothing rejected)."""

    cost: CostReport
    rejected: Table | None = None
    serverless: Table | None = None
    cheapest: Any | None = None  # a plotly Figure
    always_on: Table | None = None  # inference
    per_run: Table | None = None
    detail: Table | None = None
    runs: Table | None = None  # training
    monthly: Table | None = None


@st.cache_resource(max_entries=128, show_spinner=False)
def cost_views(sc_json: str, pricing_key: str) -> CostViews:
    """The Cost page's tables for this scenario (inference or training set, by the scenario's mode)."""
    cost = cost_report(sc_json, pricing_key)
    rows = cost.offers
    rejected = _table(tables_cost.rejected(cost.rejected)) if cost.rejected else None
    serverless = _table(tables_cost.serverless(cost.serverless)) if cost.serverless else None
    if not rows:
        return CostViews(cost, rejected, serverless)
    cheapest = figures_cost.cheapest_figure(rows, not cost.training)
    if not cost.training:
        return CostViews(
            cost,
            rejected,
            serverless,
            cheapest,
            always_on=_table(tables_cost.cost_always_on(rows)),
            per_run=_table(tables_cost.cost_per_run(rows)),
            detail=_table(tables_cost.cost_detail(rows)),
        )
    runs = tables_cost.training_runs(rows)
    return CostViews(
        cost, rejected, serverless, cheapest, runs=_table(runs), monthly=_table(tables_cost.training_monthly(runs))
    )


@st.cache_resource(max_entries=128, show_spinner=False)
def lifetime_figure(training_usd: float, monthly_usd: float, months: int, title: str):
    """The Cost page's lifetime chart (built once per bill, monthly cost and title)."""
    return figures_cost.lifetime_figure(Lifetime.of(training_usd, monthly_usd, months), title)


@st.cache_resource(max_entries=64, show_spinner=False)
def growth_view(sc_json: str, pricing_key: str, explore: bool, training_usd: float, months: int, today: str):
    """The Cost page's lifetime with growing traffic: the answer's pick re-planned month by month (None when it
    cannot be: no pick, no traffic), its figure, dated from ``today`` (ISO)."""
    from datetime import date

    ans = answer_at(sc_json, pricing_key, explore)
    g = api.growth_report(_sc(sc_json), ans, prices.offers_for(pricing_key), training_usd, months)
    if g is None:
        return None
    title = f"The answer as traffic grows: {g.pick_monthly_usd or 0:,.0f} USD a month today" + (
        f", after a {training_usd:,.0f} USD training bill" if training_usd else ""
    )
    return g, figures_cost.growth_figure(g, title, date.fromisoformat(today))


@st.cache_resource(max_entries=128, show_spinner=False)
def compare_report(
    a_json: str, b_json: str, pricing_key: str, b_count_from_a: bool, explore: bool = False
) -> CompareReport:
    """A (the sidebar's answer: the Overview's, cached) against B (the answer to B's scenario)."""
    ans = answer_at(a_json, pricing_key, explore)
    offers = prices.offers_for(pricing_key)
    return api.compare_report(_sc(a_json), _sc(b_json), offers, b_count_from_a, answer_a=ans)


@st.cache_resource(max_entries=128, show_spinner=False)
def compare_figure(a_json: str, b_json: str):
    from gpuplan_core import Side

    return figures_cost.compare_figure(Side.model_validate_json(a_json), Side.model_validate_json(b_json))


@dataclass(frozen=True)
class GpuViews:
    """The Data page's catalog tables: every GPU type's figures, and where each comes from."""

    catalog: Table
    sources: Table


@st.cache_resource(show_spinner=False)
def gpu_views() -> GpuViews:
    """Built once per server."""
    gpus = list(load_gpus())
    return GpuViews(
        catalog=_table(tables_reference.gpu_catalog(gpus)), sources=_table(tables_reference.gpu_sources(gpus))
    )


@st.cache_resource(max_entries=32, show_spinner=False)
def pricing_view(pricing_key: str) -> Table:
    """Every offer in use as the Data page shows it."""
    return _table(tables_reference.pricing_offers(prices.offers_for(pricing_key)))


@st.cache_data(show_spinner=False)
def gpu_table() -> list[dict]:
    return [g.model_dump() | {"aliases": "; ".join(g.aliases)} for g in load_gpus()]
