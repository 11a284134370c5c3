"""Calibrate to your deployment in the app: the link's deployment profile applied to the scenario (the frame calls
``applied``), the scenario file's profile kept on import, and the Performance page's section that uploads a
benchmark file, shows predicted vs measured and sets the link's ``profile`` ("Use this profile").

Every number comes from gpuplan_core (api.calibrate_deployment, report/deployment.py); this module lays it out.
"""

from __future__ import annotations

import threading
import time

import pandas as pd
import streamlit as st

from gpuplan_core import (
    SAMPLE_BENCH_FILE,
    DeploymentCalibration,
    DeploymentProfile,
    Scenario,
    StoreError,
    api,
    apply_profile,
    describe,
    find_profile,
    keep_profile,
    scenario_profile,
)

from . import page, widgets
from .fmt import md_escape

LINK_KEY = "profile"  # the link key naming the stored deployment profile (gpuplan_core's registry)
UPLOAD = "calib_upload"
SAMPLE = "calib_sample"  # session key: the bundled sample is the file shown
HIT_TTL_S = 60.0
_HITS: dict[str, tuple[float, DeploymentProfile | None, str | None]] = {}
_LOCK = threading.Lock()


def lookup(key: str) -> tuple[DeploymentProfile | None, str | None]:
    """The profile a link's key names, or None and why (remembered a minute: one store read, not one a rerun)."""
    if not key:
        return None, None
    with _LOCK:
        hit = _HITS.get(key)
    if hit is not None and time.monotonic() - hit[0] < HIT_TTL_S:
        return hit[1], hit[2]
    profile, note = find_profile(key)
    with _LOCK:
        if len(_HITS) > 64:
            _HITS.clear()
        _HITS[key] = (time.monotonic(), profile, note)
    return profile, note


def applied(sc: Scenario) -> tuple[Scenario, list[str]]:
    """The scenario with the link's deployment profile, and the note every page shows (which profile, or that the
    link's is not on this server and the answers are uncalibrated)."""
    profile, note = lookup(str(widgets.page_value(LINK_KEY) or ""))
    if profile is None:
        return sc, [note] if note else []
    return apply_profile(sc, profile)


def for_scenario_file(values: dict) -> DeploymentProfile | None:
    """The profile these values' ``profile`` names, for the scenario file (None when this server has none)."""
    return lookup(str(values.get(LINK_KEY) or ""))[0]


def imported(text: bytes, values: dict, notes: list[str]) -> dict:
    """A scenario file's values with the profile it carries kept here and named by ``profile``."""
    profile, why = scenario_profile(text)
    notes += why
    if profile is None:
        return values
    try:
        kept = keep_profile(profile)
    except StoreError as exc:
        notes.append(f"scenario file: its deployment profile cannot be kept here ({exc}); answers are uncalibrated")
        return {**values, LINK_KEY: ""}
    notes.append(f"scenario file: calibrated with its deployment profile {profile.name} ({kept.key}).")
    return {**values, LINK_KEY: kept.key}


def _use(profile: DeploymentProfile) -> None:
    """on_click of "Use this profile": keep it on the server and name it in the link."""
    try:
        kept = keep_profile(profile)
    except StoreError as exc:
        st.session_state["calib_error"] = f"The profile cannot be kept on this server: {exc}"
        return
    with _LOCK:
        _HITS.pop(kept.key, None)
    widgets.set_inputs({LINK_KEY: kept.key})


def _clear() -> None:
    widgets.set_inputs({LINK_KEY: ""})


def _file() -> tuple[bytes, str] | None:
    up = st.session_state.get(UPLOAD)
    if up is not None:
        st.session_state.pop(SAMPLE, None)
        return up.getvalue(), up.name
    if st.session_state.get(SAMPLE):
        return SAMPLE_BENCH_FILE.read_bytes(), SAMPLE_BENCH_FILE.name
    return None


def _show(r: DeploymentCalibration) -> None:
    if r.issues:
        head = f"{r.name} ({r.file_format}): {len(r.issues)} bad run(s); nothing was fitted and nothing changes."
        st.error(md_escape(head + " Fix them and upload again:"), icon=":material/error:")
        st.markdown("\n".join(f"- {md_escape(i)}" for i in r.issues[:50]))
        return
    st.success(md_escape(r.summary()), icon=":material/tune:")
    for n in r.notes:
        st.caption(md_escape(n))
    st.markdown("**Median absolute error (%), each metric over the file's runs**")
    st.caption(
        "Engine defaults: gpuplan as everyone gets it. Fitted, in-sample: the constants fitted on every run, checked "
        "on the same runs (optimistic). Fitted, run held out: each run predicted with the constants fitted on the "
        "other runs (leave one run out): what to expect on a load you have not measured."
    )
    page.table(pd.DataFrame(r.error_rows()), "calib_errors", "gpuplan-calibration-errors.csv")
    st.markdown("**Each run: measured and predicted**")
    page.table(pd.DataFrame(r.run_rows()), "calib_runs", "gpuplan-calibration-runs.csv")
    current = str(widgets.page_value(LINK_KEY) or "")
    in_use = lookup(current)[0] == r.profile if current else False
    st.button(
        "In use: this profile" if in_use else "Use this profile",
        on_click=_use,
        args=(r.profile,),
        key="calib_use",
        disabled=in_use,
        icon=":material/check:",
        help="Keep the profile on this server and name it in the link (profile=...): every page then answers with "
        "your deployment's request cost and decode factor, and the scenario file carries it.",
    )


def section(sc: Scenario) -> None:
    """Performance's "Calibrate to your deployment": upload, replay, errors before/after, "Use this profile"."""
    st.caption(
        "Upload the result file of a benchmark you ran on your own servers: vLLM `vllm bench serve --save-result` "
        "JSON (or JSON Lines with `--append-result`), SGLang `bench_serving --output-file` JSON Lines, GenAI-Perf / "
        "AIPerf `profile_export_genai_perf.json`. Each run is replayed through gpuplan's serving engine as it was "
        "sent (its load, lengths and request count) on the sidebar's GPU, tensor parallel and engine (the model from "
        "the file's `model_id` where it names a bundled one, else the sidebar's), and two constants are fitted: the "
        "deployment's fixed cost per request before the first token, and its decode step time over the predicted."
    )
    st.file_uploader("Your benchmark result file", type=["json", "jsonl", "csv", "txt"], key=UPLOAD)
    st.button(
        "Try the bundled sample (synthetic)",
        on_click=lambda: st.session_state.__setitem__(SAMPLE, True),
        key="calib_try",
        help="data/samples/vllm_bench_serve_synthetic.jsonl: made by gpuplan's own simulation with known constants "
        "(15 ms per request, decode x 1.2) and 3% noise, so the fit can be checked against them. Not a measurement.",
    )
    if msg := st.session_state.pop("calib_error", None):
        st.error(md_escape(msg))
    current = str(widgets.page_value(LINK_KEY) or "")
    if current and (p := lookup(current)[0]) is not None:
        st.info(md_escape(f"In use ({current}): {p.summary()}."), icon=":material/tune:")
        st.button("Stop using the profile", on_click=_clear, key="calib_clear")
    got = _file()
    if got is None:
        return
    data, name = got
    base = sc.with_(request_in_s=None, decode_time_factor=1.0)  # the fit starts from the engine's defaults
    try:
        with st.spinner("Replaying each run through the serving engine..."):
            r = api.calibrate_deployment(data, name, base)
    except ValueError as exc:
        st.error(md_escape(f"{name}: {describe(exc)}"))
        return
    _show(r)
