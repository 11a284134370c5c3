"""api/deployment.py: a benchmark file calibrated on the scenario's (or the given) setup."""

import json

import pytest

from gpuplan_core.api.deployment import calibrate_deployment, preset_of
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.perf.bench_files import SAMPLE_BENCH_FILE
from gpuplan_core.plan.search import ServingAsk, replica_question
from gpuplan_core.scenario.scenario import Scenario


def test_a_hugging_face_id_names_its_preset():
    assert preset_of("meta-llama/Llama-3.1-8B-Instruct") == "Llama-3.1-8B"
    assert preset_of("Qwen/Qwen3-14B") == "Qwen3-14B"
    assert preset_of("my-org/house-model") is None


def test_the_sample_on_the_scenario_s_setup_and_what_was_assumed():
    r = calibrate_deployment(SAMPLE_BENCH_FILE.read_bytes(), SAMPLE_BENCH_FILE.name)
    assert r.ok and r.profile.model == "Llama-3.1-8B" and r.profile.gpu == "H100-SXM" and r.profile.runs == 7
    assert r.notes == [
        "Model Llama-3.1-8B, from the file's model_id 'meta-llama/Llama-3.1-8B-Instruct'.",
        "The file does not say the GPU: H100-SXM assumed (give the GPU you ran on).",
    ]
    assert len(r.run_rows()) == 21 and [x["metric"] for x in r.error_rows()][0] == "TTFT (ms)"
    given = calibrate_deployment(SAMPLE_BENCH_FILE.read_bytes(), "s", Scenario(gpu="H100-SXM"), model="Llama-3.1-8B")
    assert given.notes == [] and given.profile.request_in_s == r.profile.request_in_s


def test_a_bad_file_fits_nothing():
    r = calibrate_deployment(json.dumps({"completed": "many"}), "bad.json")
    assert r.fit is None and r.profile is None and r.issues == ["run 1, completed: 'many' is not a number"]
    assert r.summary() == "bad.json: 1 bad run(s); nothing fitted."


def test_a_profile_s_constants_reach_the_layout_search_s_replicas():
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", request_in_s=0.014, decode_time_factor=1.18)
    ask = ServingAsk.of(sc)
    q = replica_question(sc.model(), ask, get_gpu("H100-SXM"), "bf16", 1, 1, 100)
    assert (q.request_in_s, q.decode_time_factor) == pytest.approx((0.014, 1.18))
