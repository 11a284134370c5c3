"""Every user input, one record each (``record.py`` says what a record holds).

The records (``records_job.py`` with ``records_training.py``, ``records_parallel.py``, ``records_traffic.py``,
``records_site.py``; their option lists and labels in ``options.py``) drive the sidebar and Compare's B-side inputs
(``gpuplan_ui/widgets.py`` renders a record as a widget), links and the scenario file (``links.py``) and the
Scenario (``inputs.to_scenario``).
A record that sets a Scenario field reads its default, range and help from the field (``scenario/parts.py``,
``deployment.py``); the CLI's flags are derived from the same fields (``cli.py``).
"""

from __future__ import annotations

from typing import Any

from .options import (
    PAGE_COMPARE,
    PAGE_COST,
    PAGE_DATA,
    PAGE_OVERVIEW,
    SAME,
    SEQUENCE_LENGTHS,
    USE_CASE_SOURCES,
    USE_CASES,
    tokens_label,
)
from .record import ALL_JOBS, JOBS, MAIN, Group, Input
from .records_job import JOB_RECORDS
from .records_parallel import PARALLEL_RECORDS
from .records_site import SITE_RECORDS
from .records_traffic import TRAFFIC_RECORDS

# re-exported: the names inputs.py and links.py import from here
__all__ = [
    "PAGE_COMPARE",
    "PAGE_COST",
    "PAGE_DATA",
    "PAGE_OVERVIEW",
    "SAME",
    "SEQUENCE_LENGTHS",
    "USE_CASE_SOURCES",
    "USE_CASES",
    "tokens_label",
]

GROUPS = {
    g.title: g
    for g in (
        Group(MAIN, lazy=False, expanded=True),
        Group("GPU count and parallelism"),
        Group("Training", lazy=False, expanded=True),
        Group("Traffic and latency targets"),
        Group("Pricing"),
        Group("Site and owning"),
        Group("Assumptions"),
    )
}

RECORDS: tuple[Input, ...] = (*JOB_RECORDS, *PARALLEL_RECORDS, *TRAFFIC_RECORDS, *SITE_RECORDS)
INPUTS: dict[str, Input] = {i.key: i for i in RECORDS}
DEFAULTS: dict[str, Any] = {i.key: i.default for i in RECORDS}
SIDEBAR = tuple(i for i in RECORDS if i.page is None)
assert set(JOBS) == ALL_JOBS


def page_inputs(page: str) -> tuple[Input, ...]:
    return tuple(i for i in RECORDS if i.page == page)


def group_inputs(title: str) -> tuple[Input, ...]:
    return tuple(i for i in SIDEBAR if i.group == title)
