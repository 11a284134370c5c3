"""gpuplan's public API: what the app (gpuplan_ui, app_pages) and notebooks import, and nothing else.

The core is layered by job, each sub-package importing only those below it (tests/core/test_layering.py holds it):

    common    units, errors, text formatting, where the data lives
    model     ModelArch and exact counts, number formats, presets, the Hugging Face config parser
    hardware  the GPU catalog and the serving engines' profiles
    pricing   offers, CSV validation, your prices, billing arithmetic, fetches
    scenario  the question: one validated Scenario
    memory    budgets, fit, max batch/context, the smallest layout
    perf      roofline phases, the serving model, calibration and error bands
    plan      the layout search, training plans, the recommendation, deployment export
    report    typed results and the one-sentence answers
    api       scenario in, report out (gpuplan_core/api/: memory, perf, cost, the answer, serving, Compare)
    interface the input registry, links and scenario files, the CLI

The streamlit app never imports a sub-package directly: every name it needs is re-exported here.
"""

from . import api
from .common.errors import describe
from .common.text import count, counted, gb, gib, ms, pct, rate, usd
from .common.units import GB
from .hardware.catalog import GPU, get_gpu, load_efficiency, load_gpus
from .hardware.engines import ENGINES
from .hardware.engines import RELEASES as ENGINE_RELEASES
from .interface.inputs import (
    DEFAULTS,
    GROUPS,
    INPUTS,
    JOBS,
    MAIN,
    RECORDS,
    SIDEBAR,
    USE_CASE_SOURCES,
    USE_CASES,
    Input,
    group_inputs,
    page_inputs,
    same_value,
    to_scenario,
    variant,
)
from .interface.links import (
    apply_use_case,
    link_query,
    read_link,
    read_scenario_file,
    scenario_file,
    scenario_pricing_file,
    scenario_profile,
    upgrade_link,
)
from .memory.components import Assumptions
from .memory.engine_kv import METHODOLOGY_TEXT as KV_STARTUP_TEXT
from .model.formats import FORMATS
from .perf.bench_files import SAMPLE_BENCH_FILE
from .perf.clients import BENCH_CLIENTS
from .perf.efficiency import PerfAssumptions
from .perf.replica import DEFAULT_GPU
from .perf.schedulers import LOOPS as ENGINE_LOOPS
from .plan.deploy import engine_name, serve_command, skypilot_yaml, vllm_command
from .plan.growth import growth_problem
from .plan.rent import COLD_START_FIXED_S, WEIGHT_LOAD_BYTES_PER_S, cold_start_rule
from .pricing.billing import MARKET_ESTIMATES, lifetime, market_projection
from .pricing.csv_file import load_pricing, load_pricing_text, offers_to_csv
from .pricing.energy import EnergyReport, OwnReport, PriceTier, power_draw, region_ids, site_figures
from .pricing.fetch import FetchError, fetch_hf_config, fetch_pricing, fetch_skypilot_catalogs
from .pricing.offers import FAST_NETWORK_GBIT_S, STALE_AFTER_DAYS, Offer, merge_offers, price_age_days, staleness
from .pricing.overrides import apply_price_overrides, parse_price_overrides
from .pricing.store import EXPIRY_DAYS as STORE_EXPIRY_DAYS
from .pricing.store import StoredFile, StoreError, content_hash, missing_note, open_store, server_store, valid_key
from .report.answers import (
    METHODOLOGY_ANSWER,
    Answer,
    Headline,
    cost_answer,
    data_answer,
    perf_answer,
    plan_answer,
    site_answer,
    training_compute_line,
    training_speed_line,
)
from .report.calibration import CalibrationReport
from .report.compare import CompareReport, Side, compare
from .report.cost import Lifetime, MarketEstimate, MarketProjection
from .report.deployment import DeploymentCalibration
from .report.memory_answer import memory_answer
from .report.training import TrainingAccuracy, training_accuracy
from .results.answer import Option, ScenarioAnswer, TargetCheck
from .results.cost import CostReport
from .results.growth import Growth, GrowthMonth
from .results.memory import MemoryReport
from .results.perf import GpuAtLoad, GpuPerf, NoFit, PerfReport, StaticPerf
from .results.plan import InferenceCostRow, Pick, Plan, Rejected, TrainingCostRow, replica_split
from .results.serving import ServeReport, ServingCurve, ServingResult
from .scenario.profile import DeploymentProfile, apply_profile, find_profile, keep_profile
from .scenario.scenario import Scenario
from .scenario.site import Site

__all__ = [n for n in dir() if not n.startswith("_")]
