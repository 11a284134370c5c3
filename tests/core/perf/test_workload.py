"""perf/workload.py: a scenario's formats and serving levers as the Workload of one replica at a layout."""

from gpuplan_core.model.arch import params_total
from gpuplan_core.perf.roofline import Workload
from gpuplan_core.perf.workload import workload_for
from gpuplan_core.scenario.deployment import RuntimeAssumptions
from gpuplan_core.scenario.parts import Formats


def test_the_defaults_are_a_bf16_replica_on_one_gpu():
    assert workload_for(Formats(), RuntimeAssumptions()) == Workload(
        weights_format="bf16",
        kv_format="bf16",
        tp=1,
        pp=1,
        prefix_cache_fraction=0.0,
        spec_draft=None,
        spec_tokens=4,
        spec_acceptance=0.7,
        eager=False,
    )


def test_the_layout_formats_and_levers_carry_over():
    wl = workload_for(
        Formats(weights_format="fp8", kv_format="fp8"),
        RuntimeAssumptions(prefix_cache_fraction=0.5, spec_tokens=6, spec_acceptance=0.8),
        tp=4,
        pp=2,
    )
    assert (wl.weights_format, wl.kv_format, wl.tp, wl.pp) == ("fp8", "fp8", 4, 2)
    assert (wl.prefix_cache_fraction, wl.spec_tokens, wl.spec_acceptance) == (0.5, 6, 0.8)


def test_another_weights_format_replaces_the_scenario_s():
    wl = workload_for(Formats(weights_format="bf16", kv_format="fp8"), RuntimeAssumptions(), weights_format="INT4-G128")
    assert (wl.weights_format, wl.kv_format) == ("int4-g128", "fp8")  # stored by the format's name


def test_an_engine_without_cuda_graphs_runs_eager():
    engines = ("vllm", "sglang", "trtllm", "transformers")
    assert [workload_for(Formats(), RuntimeAssumptions(engine=e)).eager for e in engines] == [False] * 3 + [True]


def test_the_draft_model_is_a_model_of_its_size_and_at_least_half_a_billion():
    draft = workload_for(Formats(), RuntimeAssumptions(spec_draft_params=1_500_000_000)).spec_draft
    assert params_total(draft) == 1_500_000_000 and draft.approximate  # a bare count: exact, the shape derived
    small = workload_for(Formats(), RuntimeAssumptions(spec_draft_params=100_000_000)).spec_draft
    assert params_total(small) == 500_000_000  # max(100M, 500M)
