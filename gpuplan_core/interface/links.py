"""Links and scenario files: the inputs (``inputs.py``) as text and back.

The link format: ``?key=value`` for every input whose value differs from its default; a choice is written as
the label the widget shows (``workload=Pre-training``, ``weights=FP8+(E4M3)``, ``gpu=H100+SXM``), a number as a
plain decimal (``in=2000``), a switch as ``true``/``false``. Defaults are left out, so a link stays short. A
scenario file holds every input in the same form, defaults included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from ..common.errors import describe
from ..pricing.store import content_hash
from ..scenario.profile import DeploymentProfile, read_profile
from ..scenario.scenario import Scenario
from .record import INFERENCE, plain, same_value
from .registry import DEFAULTS, INPUTS, USE_CASES, tokens_label

# ---- links -----------------------------------------------------------------------------------------


def read_link(params: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Known link parameters -> input values, with a note for each value that is not allowed (that input
    keeps its default). Unknown parameters are ignored (``embed`` and friends belong to Streamlit)."""
    items = tuple(sorted((str(k), str(v)) for k, v in params.items() if k in INPUTS))
    values, notes = _read_link(items)
    return dict(values), list(notes)


@lru_cache(maxsize=1024)
def _read_link(items: tuple[tuple[str, str], ...]) -> tuple[tuple[tuple[str, Any], ...], tuple[str, ...]]:
    values, notes = [], []
    for key, raw in items:
        v, note = INPUTS[key].parse(raw)
        if note:
            notes.append("Link value " + note)
        if note is None or not same_value(v, INPUTS[key].default):
            values.append((key, v))
    return tuple(values), tuple(notes)


def upgrade_link(params: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Links made before input and output tokens were inputs said ``ctx`` (context = prompt + output, output
    256 by default) for inference too. Read such a link as the same request: input = ctx - output."""
    p = dict(params)
    job, _ = INPUTS["workload"].parse(p.get("workload", INPUTS["workload"].link_value("interactive")))
    if "ctx" not in p or "in" in p or job not in INFERENCE:
        return p, []
    ctx, note = INPUTS["ctx"].parse(p.pop("ctx"))
    if note:
        return p, ["Link value " + note]
    out, _ = INPUTS["out"].parse(p.get("out", "256"))
    out = min(round(out), ctx - 1) if ctx > 1 else 1
    p["out"] = plain(out)
    p["in"] = plain(max(1, ctx - out))
    return p, [
        f"This link gives a context of {tokens_label(ctx)} tokens (an older link form): read as {ctx - out:,} input "
        f"+ {out:,} output tokens."
    ]


def apply_use_case(params: Mapping[str, str]) -> dict[str, str]:
    """A link that names a use case but not every value it sets gets the use case's values for the rest (a link
    someone wrote by hand, ``?usecase=RAG...``)."""
    p = dict(params)
    if "usecase" not in p:
        return p
    key, note = INPUTS["usecase"].parse(p["usecase"])
    if note:
        return p
    for k, v in USE_CASES[key].items():
        if k != "label" and k not in p:
            p[k] = INPUTS[k].link_value(v)
    return p


def link_query(values: Mapping[str, Any], keys: Sequence[str] | None = None) -> str:
    """The query string of a link that reproduces these values: every input whose value differs from its
    default, written as the widget shows it. Inputs that do not apply to the job are kept when set, so
    that a link never drops a value the user gave."""
    pairs = []
    for key in keys if keys is not None else INPUTS:
        inp = INPUTS[key]
        if key in values and not inp.is_default(values[key]):
            pairs.append((key, inp.link_value(values[key])))
    return urlencode(pairs)


# ---- the scenario file ---------------------------------------------------------------------------

FILE_KIND = "gpuplan-scenario"


def scenario_file(
    values: Mapping[str, Any],
    sc: Scenario,
    page: str = "",
    pricing_file: tuple[str, str] | None = None,
    profile: DeploymentProfile | None = None,
) -> str:
    """Every input (link form, defaults included), the page, and the resulting Scenario for reference. With
    ``pricing_file`` (its name and CSV text: the file ``pricefile`` names), the file itself too, so that the
    scenario file prices with the same offers on a server that does not hold it; with ``profile`` (the deployment
    profile ``profile`` names), the profile itself, so that it answers calibrated there too."""
    v = {**DEFAULTS, **values}
    doc = {
        "kind": FILE_KIND,
        "version": 2,
        "page": page,
        "inputs": {k: INPUTS[k].link_value(v[k]) for k in INPUTS},
        "scenario": sc.flat(exclude={"config_text"}),  # flat: one key per Scenario field, as in version 2
    }
    if pricing_file is not None:
        name, text = pricing_file
        doc["pricing_file"] = {"name": name, "sha256": content_hash(text), "csv": text}
    if profile is not None:
        doc["deployment_profile"] = profile.model_dump()
    return json.dumps(doc, indent=2)


def scenario_profile(text: str | bytes) -> tuple[DeploymentProfile | None, list[str]]:
    """The deployment profile a scenario file carries, or None; and a note when it is there but is not one (then
    the scenario's ``profile`` is used as it is)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None, []  # read_scenario_file says so
    got = data.get("deployment_profile") if isinstance(data, dict) else None
    if got is None:
        return None, []
    try:
        return read_profile(json.dumps(got)), []
    except (ValueError, TypeError) as exc:
        why = describe(exc)
        return None, [f"scenario file: 'deployment_profile' is not a deployment profile ({why}); it is not used"]


def scenario_pricing_file(text: str | bytes) -> tuple[tuple[str, str] | None, list[str]]:
    """The pricing file a scenario file carries, as (name, CSV text), or None; and a note when it is there but
    cannot be read (then the scenario's ``pricefile`` is used as it is)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None, []  # read_scenario_file says so
    got = data.get("pricing_file") if isinstance(data, dict) else None
    if got is None:
        return None, []
    if not isinstance(got, dict) or not isinstance(got.get("csv"), str):
        return None, ["scenario file: 'pricing_file' must be an object with its 'csv' text; its prices are not used"]
    return (str(got.get("name") or "pricing file")[:200], got["csv"]), []


def read_scenario_file(text: str | bytes) -> tuple[dict[str, Any], list[str]]:
    """A scenario file -> input values (only known keys, each validated like a link value) and notes.
    Version 1 files (``widgets``, raw values) are read too."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return {}, [f"scenario file: not valid JSON ({exc})"]
    if not isinstance(data, dict) or data.get("kind") != FILE_KIND:
        return {}, [f'scenario file: not a gpuplan scenario (missing "kind": "{FILE_KIND}")']
    raw = data.get("inputs", data.get("widgets", {}))
    if not isinstance(raw, dict):
        return {}, ["scenario file: 'inputs' must be an object"]
    values, notes = {}, []
    for k, r in raw.items():
        if k not in INPUTS:
            notes.append(f"scenario file: unknown input {str(k)[:40]!r} ignored")
            continue
        if isinstance(r, dict | list) or r is None:
            notes.append(f"scenario file: {k} must be a single value; kept the current value")
            continue
        v, note = INPUTS[k].parse(r)
        if note:
            notes.append(f"scenario file: {note.removesuffix('; the default is used.')}; kept the current value")
            continue
        values[k] = v
    return values, notes
