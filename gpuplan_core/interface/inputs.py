"""Input values -> the Scenario: ``to_scenario`` (the sidebar's scenario A) and ``variant`` (Compare's B).

The records are in ``registry.py``, what a record is in ``record.py``; both are re-exported here, the names the
app and the tests import. No streamlit import here (a test checks it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..common.errors import describe
from ..common.text import counted
from ..pricing.offers import MAX_PRICE_USD_PER_HOUR
from ..pricing.overrides import parse_price_overrides
from ..scenario.scenario import FIELDS, PARTS, Scenario
from .record import ALL_JOBS, INFERENCE, JOBS, MAIN, TRAINING, Group, Input, plain, same_value
from .registry import (
    DEFAULTS,
    GROUPS,
    INPUTS,
    PAGE_COMPARE,
    PAGE_COST,
    PAGE_OVERVIEW,
    RECORDS,
    SAME,
    SIDEBAR,
    USE_CASE_SOURCES,
    USE_CASES,
    group_inputs,
    page_inputs,
    tokens_label,
)

__all__ = [
    "ALL_JOBS",
    "DEFAULTS",
    "GROUPS",
    "INFERENCE",
    "INPUTS",
    "JOBS",
    "MAIN",
    "PAGE_COMPARE",
    "PAGE_COST",
    "PAGE_OVERVIEW",
    "RECORDS",
    "SAME",
    "SIDEBAR",
    "TRAINING",
    "USE_CASES",
    "USE_CASE_SOURCES",
    "Group",
    "Input",
    "group_inputs",
    "page_inputs",
    "plain",
    "same_value",
    "scenario_fields",
    "to_scenario",
    "tokens_label",
    "variant",
]


def _checked(inp: Input, fields: dict[str, Any]) -> str | None:
    """Why these fields of an input checked on its own cannot be used (None: they can)."""
    try:
        for name, value in fields.items():
            PARTS[FIELDS[name]].model_validate({name: value})
    except ValueError as exc:
        return f"{describe(exc)}; {inp.checked_alone}."
    return None


def scenario_fields(
    values: Mapping[str, Any], config_text: str | None = None, notes: list[str] | None = None
) -> dict[str, Any]:
    """Input values -> Scenario fields by their flat names (not validated yet). An input that does not apply to
    the job leaves its field at the Scenario's default; so does an input checked on its own whose value is not
    allowed (with a note)."""
    v = {**DEFAULTS, **values}
    fields: dict[str, Any] = {}
    for inp in SIDEBAR:
        if not inp.applies(v):
            continue
        if inp.key == "hf":
            if config_text is not None:
                fields["config_text"] = config_text
            continue
        mine = inp.fields(v[inp.key], v)
        if inp.field == "your_prices":
            mine = {"your_prices": _your_prices(mine.get("your_prices"), notes)}
        if inp.checked_alone and (why := _checked(inp, mine)):
            if notes is not None:
                notes.append(why)
            continue
        fields.update(mine)
    if v["src"] == "config" and config_text is None:  # no config loaded yet: the default model
        fields["preset"] = INPUTS["model"].default
    return fields


def _your_prices(raw: Any, notes: list[str] | None) -> dict[str, float]:
    """The link's "Your prices": each price above 0 (and at most the cap) is kept; each other one is refused by name,
    the others still apply, and text that is not 'offer-id=price' leaves the catalog prices (with a note)."""
    if not raw:
        return {}
    try:
        parsed = parse_price_overrides(raw) if isinstance(raw, str) else dict(raw)
    except ValueError as exc:
        if notes is not None:
            notes.append(f"{str(exc).rstrip('.')}; the catalog prices are used.")
        return {}
    kept = {k: float(x) for k, x in parsed.items() if 0 < float(x) <= MAX_PRICE_USD_PER_HOUR}
    for oid, usd in parsed.items():
        if oid not in kept and notes is not None:
            notes.append(
                f"Your prices: {oid}={float(usd):g} is refused (allowed: above 0 USD per GPU-hour, at most "
                f"{MAX_PRICE_USD_PER_HOUR:,}); the catalog price of {oid} stands."
            )
    return kept


def to_scenario(values: Mapping[str, Any], config_text: str | None = None) -> tuple[Scenario, list[str]]:
    """A validated Scenario and notes: what is wrong (then the closest valid scenario is used) or worth saying."""
    notes: list[str] = []
    try:
        sc = Scenario(**scenario_fields(values, config_text, notes))
    except ValueError as exc:
        msg = describe(exc)
        v = {**DEFAULTS, **values}
        if config_text is not None:
            try:
                sc = Scenario(**scenario_fields({**v, "src": "preset"}, notes=notes))
                return sc, [*notes, f"The config could not be used: {msg}. Showing {sc.model().name}."]
            except ValueError:
                pass
        return Scenario(**scenario_fields(DEFAULTS)), [f"{msg}. Showing the default scenario instead."]
    return sc, notes + sc.warnings()


def variant(sc: Scenario, values: Mapping[str, Any], prefix: str = "b_") -> tuple[Scenario, list[str]]:
    """Scenario B: A with the overrides of the ``b_*`` inputs (each "same as A" by default)."""
    v = {**DEFAULTS, **values}
    update: dict[str, Any] = {}
    notes: list[str] = []
    for inp in RECORDS:
        if not inp.key.startswith(prefix) or inp.variant_of is None:
            continue
        val = v[inp.key]
        if same_value(val, SAME) or inp.means_none(val):
            continue
        a = INPUTS[inp.variant_of]
        if a.applies(v):
            update.update(a.fields(val, v))
    tp, pp = sc.parallelism.tp, sc.parallelism.pp
    if "gpus" in update and update["gpus"] % (tp * pp):
        update |= {"tp": 1, "pp": 1}
        notes.append(
            f"B: {counted(update['gpus'], 'GPU')} is not a multiple of A's tp x pp = {tp * pp}: B runs tp 1, pp 1."
        )
    try:
        return sc.with_(**update), notes
    except ValueError as exc:
        return sc, [f"B: {describe(exc)}. B is shown as A."]
