"""Performance's "Calibrate to your deployment" (gpuplan_ui/profiles.py): the bundled synthetic `vllm bench serve`
file replayed and fitted in the app, "Use this profile" naming it in the link, the profile surviving a cold link
on another page, and a link whose profile this server lacks answering uncalibrated."""

import pytest

from gpuplan_core.pricing.store import DATA_DIR_ENV, DATABASE_URL_ENV
from gpuplan_ui import state
from tests.ui.apptest import open_page, texts

PARAMS = {"model": "Llama 3.1 8B", "gpu": "H100 SXM"}


@pytest.fixture(autouse=True)
def _data_dir(tmp_path, monkeypatch):
    """Each test keeps its profiles in a folder of its own (GPUPLAN_DATA_DIR), not in ./gpuplan-data."""
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)


def _calibrated():
    at = open_page("app_pages/Performance.py", PARAMS, sections=False)
    at.session_state["open_perf_calib"] = True
    at.run()
    next(b for b in at.button if b.label == "Try the bundled sample (synthetic)").click().run()
    return at


def test_the_sample_is_fitted_and_the_profile_survives_a_link():
    at = _calibrated()
    assert not at.exception
    shown = texts(at)
    # the sample was made with 15 ms per request and decode x 1.2 (+-3% noise): the fit recovers them within 10%
    assert "14.1 ms per request, decode steps x 1.183" in shown and r"TTFT 33% -\> 1%" in shown
    assert at.session_state[state.RUN].scenario.assumptions.request_in_s is None  # nothing changes until it is used
    next(b for b in at.button if b.label == "Use this profile").click().run()
    key = at.query_params["profile"][0] if isinstance(at.query_params["profile"], list) else at.query_params["profile"]
    assert len(key) == 16
    sc = at.session_state[state.RUN].scenario
    assert sc.assumptions.request_in_s == pytest.approx(0.014128, abs=1e-5)
    assert sc.assumptions.decode_time_factor == pytest.approx(1.1827, abs=1e-4)
    cold = open_page("app_pages/overview.py", {**PARAMS, "profile": key}, sections=False)  # a shared link
    assert cold.session_state[state.RUN].scenario.assumptions.request_in_s == pytest.approx(0.014128, abs=1e-5)
    assert "Calibrated to your deployment: vllm\\_bench\\_serve\\_synthetic.jsonl" in texts(cold)


def test_a_link_whose_profile_this_server_lacks_answers_uncalibrated():
    at = open_page("app_pages/overview.py", {**PARAMS, "profile": "0123456789abcdef"}, sections=False)
    assert not at.exception
    assert at.session_state[state.RUN].scenario.assumptions.request_in_s is None
    assert "which this server does not hold" in texts(at) and "uncalibrated" in texts(at)


def test_a_scenario_file_s_profile_is_kept_on_import_and_named_by_the_link():
    """The file saved on one server carries the profile; importing it on a server that lacks it keeps it there."""
    from gpuplan_core import find_profile, scenario_file
    from gpuplan_core.api.deployment import calibrate_deployment
    from gpuplan_core.interface.inputs import to_scenario
    from gpuplan_core.perf.bench_files import SAMPLE_BENCH_FILE
    from gpuplan_ui import profiles

    profile = calibrate_deployment(SAMPLE_BENCH_FILE.read_bytes(), SAMPLE_BENCH_FILE.name).profile
    sc, _ = to_scenario({})
    text = scenario_file({"profile": "0123456789abcdef"}, sc, profile=profile)
    notes: list[str] = []
    values = profiles.imported(text.encode(), {"profile": "0123456789abcdef"}, notes)
    assert values["profile"] == profile.sha256[:16] and find_profile(values["profile"]) == (profile, None)
    assert notes == [f"scenario file: calibrated with its deployment profile {profile.name} ({values['profile']})."]
