"""memory/fit.py: the inverse answers checked against the forward budget (memory/budget.py). What one GPU may fill
(usable VRAM x memory utilization), the KV-cache tokens and sequences an engine holds, the largest context (it fits
and one token more does not), and the smallest layout (it fits and every smaller one does not)."""

import pytest

from gpuplan_core.common.units import GiB
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.engine_kv import startup_kv
from gpuplan_core.memory.fit import (
    GpuFit,
    Layout,
    budget_bytes,
    evaluate_catalog,
    fit_on_gpu,
    kv_capacity_tokens,
    layout_table,
    max_batch,
    max_context,
    min_gpus,
)
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.presets import get_preset
from gpuplan_core.scenario.deployment import RuntimeAssumptions
from gpuplan_core.scenario.scenario import Scenario

L8, L70 = get_preset("Llama-3.1-8B"), get_preset("Llama-3.1-70B")
H100 = get_gpu("H100-SXM")
KV_8B = 2 * 32 * 8 * 128 * 2  # 131,072 B per token
WIDTH = 3 * 14336 + 4 * 4096  # Llama-3.1-8B's widest intermediate per token (values)


def _req(**kw):
    return memory_request(Scenario(preset=kw.pop("preset", "Llama-3.1-8B"), **kw))


def _per_gpu(m, req, **update) -> float:
    return memory_budget(m, req.model_copy(update=update)).per_gpu_bytes


def test_a_job_may_fill_usable_vram_times_the_memory_utilization():
    assert H100.vram_usable_bytes == pytest.approx(79.19 * GiB, rel=1e-3)
    assert budget_bytes(H100, RuntimeAssumptions()) == H100.vram_usable_bytes * 0.9
    assert budget_bytes(H100, RuntimeAssumptions(memory_utilization=0.5)) == H100.vram_usable_bytes * 0.5


def test_without_a_start_up_pool_the_kv_tokens_are_what_fits_beside_the_rest():
    """transformers on an H100, one sequence of 2,300 tokens: the rest is BF16 weights 2 x 8,030,261,248, the
    whole prompt's activations 2,300 x 59,392 x 2 B plus one sequence's fp32 logits 128,256 x 4 B, and the CUDA
    context 0.25 GiB (no CUDA graphs); the KV pool is the budget less that, at 131,072 B per token."""
    req = _req(engine="transformers")
    fixed = 2 * 8_030_261_248 + 2000 * WIDTH * 2 + 128_256 * 4 + 0.25 * GiB
    assert kv_capacity_tokens(L8, req, H100) == int((H100.vram_usable_bytes * 0.9 - fixed) // KV_8B)


def test_without_a_start_up_pool_the_largest_batch_adds_whole_sequences_to_the_budget():
    """Each sequence more adds its KV cache (2,300 tokens), its prompt's activations (2,000 tokens) and logits."""
    req = _req(engine="transformers")
    one = _per_gpu(L8, req, batch=1)
    per_seq = KV_8B * 2300 + 2000 * WIDTH * 2 + 128_256 * 4
    b = max_batch(L8, req, H100)
    assert b == int((H100.vram_usable_bytes * 0.9 - (one - per_seq)) // per_seq)
    assert _per_gpu(L8, req, batch=b) <= budget_bytes(H100, req.runtime) < _per_gpu(L8, req, batch=b + 1)


def test_a_serving_engine_s_largest_batch_is_its_start_up_pool_over_one_sequence():
    """vLLM: the pool vLLM allocates at start-up (memory/engine_kv.py), in sequences of 2,304 tokens (2,300 in
    16-token blocks) x 131,072 B; its token capacity is the same pool in whole 16-token blocks."""
    req = _req()
    pool = startup_kv(L8, req, H100).pool_bytes
    assert max_batch(L8, req, H100) == int(pool // (2304 * KV_8B)) > 100
    tokens = kv_capacity_tokens(L8, req, H100)
    assert tokens % 16 == 0 and tokens <= pool / KV_8B < tokens + 16


def test_a_model_larger_than_the_gpu_has_no_batch_and_no_context():
    req = _req(preset="Llama-3.1-70B")
    assert (max_batch(L70, req, H100), max_context(L70, req, H100)) == (0, 0)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_the_largest_context_fits_and_one_token_more_does_not(mode):
    req = _req(engine="transformers") if mode == "inference" else _req(mode="training", gpus=8, zero_stage=3)
    c = max_context(L8, req, H100)
    cap = budget_bytes(H100, req.runtime)
    assert 1000 < c < 131_072
    assert _per_gpu(L8, req, context_tokens=c) <= cap < _per_gpu(L8, req, context_tokens=c + 1)


def test_a_context_that_fits_at_the_limit_is_the_limit():
    req = _req(engine="transformers", batch=1, input_tokens=100, output_tokens=28)
    assert max_context(L8, req, H100, limit=4096) == 4096


def test_inference_layouts_are_valid_tp_degrees_by_pipeline_stages_fewest_gpus_first_tp_before_stages():
    """Llama-3.1-8B: 32 heads and 8 KV heads allow tp 1, 2, 4, 8; at equal count tensor parallel comes first."""
    rows = layout_table(L8, _req())
    assert [r[:3] for r in rows[:6]] == [(1, 1, 1), (2, 2, 1), (2, 1, 2), (3, 1, 3), (4, 4, 1), (4, 2, 2)]
    assert {r[1] for r in rows} == {1, 2, 4, 8} and all(r[3] == 0.0 for r in rows)  # nothing sharded over dp


def test_the_smallest_inference_layout_fits_and_no_smaller_one_does():
    """Llama-3.1-70B in BF16 is 141.1 GB of weights; an H100 may fill 76.5 GB: one GPU cannot hold it, two (tp 2
    or two stages) cannot hold it with the KV cache and runtime, three stages of 27 layers can."""
    req = _req(preset="Llama-3.1-70B")
    cap = budget_bytes(H100, req.runtime)
    assert min_gpus(L70, req, H100) == Layout(gpus=3, tp=1, pp=3, dp=1)
    assert _per_gpu(L70, req, tp=1, pp=3, gpus=3) <= cap
    for tp, pp in ((1, 1), (2, 1), (1, 2)):
        assert _per_gpu(L70, req, tp=tp, pp=pp, gpus=tp * pp) > cap


def test_the_smallest_zero_3_layout_shards_over_just_enough_data_parallel_gpus():
    """Training Llama-3.1-8B at ZeRO-3: the per-GPU budget = sharded / dp + unsharded; the layout found fits, one
    data-parallel rank fewer does not, and no layout of fewer GPUs fits."""
    req = _req(mode="training", gpus=8, zero_stage=3)
    cap = budget_bytes(H100, req.runtime)
    lay = min_gpus(L8, req, H100)
    assert lay.gpus == lay.tp * lay.pp * lay.dp
    assert _per_gpu(L8, req, tp=lay.tp, pp=lay.pp, gpus=lay.gpus) <= cap
    for n0, tp, pp, sharded, unsharded in layout_table(L8, req):
        dp = (lay.gpus - 1) // n0  # the most data-parallel ranks of this tp x pp below the count found
        if dp >= 1:
            assert _per_gpu(L8, req, tp=tp, pp=pp, gpus=n0 * dp) > cap
            assert sharded / dp + unsharded == pytest.approx(_per_gpu(L8, req, tp=tp, pp=pp, gpus=n0 * dp))


def test_nothing_fits_within_the_count_given():
    assert min_gpus(L70, _req(preset="Llama-3.1-70B"), get_gpu("L4"), max_count=4) is None


def test_fit_on_gpu_and_the_catalog_answer_each_question_once():
    req = _req()
    l4 = get_gpu("L4")
    fit = fit_on_gpu(L8, req, H100)
    assert isinstance(fit, GpuFit) and (fit.gpu, fit.fits, fit.min_gpus) == (H100, True, 1)
    assert fit.per_gpu_bytes == memory_budget(L8, req).per_gpu_bytes
    assert (fit.max_batch, fit.kv_capacity_tokens) == (max_batch(L8, req, H100), kv_capacity_tokens(L8, req, H100))
    both = evaluate_catalog(L8, req, (H100, l4))
    assert [f.gpu.gpu for f in both] == ["H100-SXM", "L4"]
    assert both[1].fits is False and both[1].min_gpus == min_gpus(L8, req, l4).gpus > 1  # 16 GB weights, 21.3 GB room
    assert fit_on_gpu(L8, _req(mode="training"), H100).kv_capacity_tokens is None


def test_a_gpu_fit_without_a_layout_has_no_count():
    fit = GpuFit(H100, 1.0, 2.0, False, None, 0, 0, None)
    assert fit.min_gpus is None
    assert GpuFit(H100, 1.0, 2.0, False, Layout(6, 2, 3, 1), 0, 0, None).min_gpus == 6
