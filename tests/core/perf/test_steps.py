"""perf/steps.py: engine-step times for the serving simulation: exact per-op roofline steps on a grid of sequence
counts (every count to 16, then ~10% apart) and mean contexts (1% apart), interpolated between, memoised."""

import math
from dataclasses import replace

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.arch import model_from_param_count
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.replica import Replica, engine_limits
from gpuplan_core.perf.roofline import Part, StepCost, Workload, step_phase
from gpuplan_core.perf.steps import (
    CTX_RATIO,
    NO_POINT,
    SEQ_GRID,
    StepModel,
    StepTimes,
    ctx_cell,
    nearest_ctx,
    step_model,
)

L8, H100, PA = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM"), PerfAssumptions()


@pytest.fixture
def times() -> StepTimes:
    """Llama-3.1-8B in BF16 on one H100, requests of 2,000 + 300 tokens, 100 of them in the KV cache."""
    return StepTimes(Replica(L8, H100, Workload(), 2000, 300, 100, engine_limits(H100)))


def _exact(parts: list[Part], overhead_s: float) -> float:
    """One step exactly, as the replica's engine (vLLM: measured kernels on H100, steps.StepModel) times it."""
    return StepCost(L8, H100, Workload(), PA, "vllm").phase("step", parts, overhead_s).time_s


def test_the_exact_step_of_an_engine_without_tables_is_the_roofline_step():
    parts = [Part(8, 2000, 1, 8)]
    roofline = step_phase("step", L8, H100, Workload(), PA, parts, overhead_s=PA.decode_step_overhead_s)
    got = StepCost(L8, H100, Workload(), PA, "transformers").phase("step", parts, PA.decode_step_overhead_s)
    assert got.time_s == roofline.time_s
    assert got.kernel_source == "roofline (no kernel tables for engine transformers)"


def test_the_sequence_grid():
    assert SEQ_GRID[:16] == [float(n) for n in range(1, 17)]  # every count to 16
    assert SEQ_GRID[16:19] == [18.0, 19.0, 21.0]  # round(16 x 1.1^i): 17.6, 19.4, 21.3
    assert SEQ_GRID[-1] == round(16 * 1.1**89) == 77_280 and len(SEQ_GRID) == len(set(SEQ_GRID)) == 105
    assert sorted(SEQ_GRID) == SEQ_GRID
    steps = [b / a for a, b in zip(SEQ_GRID[15:], SEQ_GRID[16:], strict=False)]
    assert max(steps) < 1.14 and min(steps) > 1.05  # ~10% apart, whole numbers


@pytest.mark.parametrize("ctx", [2, 100, 2100, 8192, 131_072])
def test_the_nearest_context_point_is_within_half_a_grid_step(ctx):
    c = nearest_ctx(ctx)
    assert abs(math.log(c / ctx)) <= math.log(CTX_RATIO) / 2 + 1 / ctx  # half of 1%, plus the point's rounding
    assert c == max(1, round(CTX_RATIO ** round(math.log(ctx) / math.log(CTX_RATIO))))


def test_the_nearest_context_of_nothing_is_one_token():
    assert nearest_ctx(0) == nearest_ctx(1) == nearest_ctx(0.3) == 1
    assert CTX_RATIO == 1.01


def test_a_decode_step_at_grid_points_is_the_roofline_step(times):
    c = nearest_ctx(2000)
    assert times.decode(8, c) == pytest.approx(_exact([Part(8, c, 1, 8)], PA.decode_step_overhead_s), rel=1e-9)


def test_between_grid_counts_the_step_is_interpolated(times):
    c = nearest_ctx(2000)
    t16, t18 = times.decode(16, c), times.decode(18, c)
    assert times.decode(17, c) == pytest.approx(t16 + (t18 - t16) * (17 - 16) / (18 - 16), rel=1e-12)
    # and the line is close to the exact step: the step time is smooth in the count
    assert times.decode(17, c) == pytest.approx(_exact([Part(17, c, 1, 17)], PA.decode_step_overhead_s), rel=5e-3)


def test_between_context_points_the_step_is_interpolated_and_close(times):
    exact = _exact([Part(8, 2050, 1, 8)], PA.decode_step_overhead_s)  # 2,050 lies between two grid points
    assert times.decode(8, 2050) == pytest.approx(exact, rel=1e-3)


def test_beyond_the_grid_the_count_is_evaluated_as_it_is(times):
    n = int(SEQ_GRID[-1]) + 1000
    assert times.decode(n, 16) == pytest.approx(_exact([Part(n, 16, 1, n)], PA.decode_step_overhead_s), rel=1e-9)


def test_a_step_with_prompt_chunks_is_exact_and_pays_the_prefill_overhead(times):
    prompt_only = times.mixed(0, 0, ((0, 512, 1),))  # one 512-token prompt, ending in this step
    assert prompt_only == pytest.approx(_exact([Part(1, 0, 512, 1)], PA.prefill_overhead_s), rel=1e-12)
    c = nearest_ctx(2100)
    both = times.mixed(8, 2100, ((1024, 512, 0),))  # 8 decodes + a chunk after 1,024 cached tokens, no logits
    assert both == pytest.approx(_exact([Part(8, c, 1, 8), Part(1, 1024, 512, 0)], PA.prefill_overhead_s), rel=1e-12)
    assert times.mixed(8, 2100, ()) == times.decode(8, 2100)  # no chunks: a decode step


def test_steps_are_memoised(times):
    times.decode(8, 2050)
    assert len(times.cells) == 1  # one cell: the two context points around 2,050 at a grid count
    times.decode(8, 2050)
    times.decode(8, 2051)  # between the same two points
    assert len(times.cells) == 1
    lo, hi, c_lo, c_hi = times.cells[8, ctx_cell(2050)][:4]
    assert lo == NO_POINT and hi == 8.0 and c_lo < 2050 < 2051 < c_hi and c_hi / c_lo == pytest.approx(CTX_RATIO, 1e-3)


@pytest.mark.parametrize("preset", ["Llama-3.1-8B", "Gemma-2-9B", "Mixtral-8x7B-v0.1", "DeepSeek-V3"])
def test_the_step_loops_time_alone_is_the_reported_steps_time_bit_for_bit(preset):
    """``StepModel.step_s`` (what the step loop asks, no report built) is ``step(...).time_s`` exactly: one formula
    (roofline.StepCost), for dense, sliding-window, MoE and MLA models, eager and pipelined layouts."""
    import random

    from gpuplan_core.perf.steps import StepModel

    rng = random.Random(7)
    m = get_preset(preset)
    layouts = (Workload(), Workload(weights_format="fp8", tp=2, eager=True), Workload(tp=8, pp=2))
    for wl, engine in [(wl, engine) for wl in layouts for engine in (None, "vllm")]:
        model = StepModel(m, H100, wl, PA, engine)
        for _ in range(30):
            decodes = rng.choice([0, 1, 2.5, 40, 300])
            chunks = tuple((rng.randint(0, 9000), rng.randint(1, 8192), rng.randint(0, 1)) for _ in range(3))
            chunks = chunks[: rng.randint(0 if decodes else 1, 3)]
            ctx = rng.randint(1, 30_000)
            assert model.step_s(decodes, ctx, chunks) == model.step(decodes, ctx, chunks).time_s


def _reference_decode(model, n: int, ctx_mean: float) -> float:
    """The decode step as the grids define it, computed afresh: bilinear between the exact steps at the sequence
    grid's points around ``n`` and the context grid's points around ``ctx_mean`` (the formula in steps.py)."""
    j = math.floor(math.log(max(1.0, ctx_mean)) / math.log(CTX_RATIO))
    c_lo, c_hi = max(1, round(CTX_RATIO**j)), max(1, round(CTX_RATIO ** (j + 1)))

    def at(seqs: float) -> float:
        t_lo, t_hi = model.step_s(seqs, c_lo, ()), model.step_s(seqs, c_hi, ())
        return t_lo if c_hi == c_lo else t_lo + (t_hi - t_lo) * (ctx_mean - c_lo) / (c_hi - c_lo)

    above = [g for g in SEQ_GRID if g >= n]
    if not above:
        return at(float(n))
    hi = above[0]
    if hi == n or hi == SEQ_GRID[0]:
        return at(hi)
    lo = SEQ_GRID[SEQ_GRID.index(hi) - 1]
    return at(lo) + (at(hi) - at(lo)) * (n - lo) / (hi - lo)


def test_remembered_decode_steps_are_the_grids_interpolation_bit_for_bit(times):
    """The step loop's decode steps (one remembered cell of four exact corners each) equal the bilinear
    interpolation computed afresh, on random counts (on, between and past the grid) and contexts."""
    import random

    from gpuplan_core.perf.steps import StepModel

    rng = random.Random(3)
    fresh = StepModel(L8, H100, Workload(), PA, "vllm")
    for _ in range(300):
        n = rng.choice([1, 2, 16, 17, 20, 100, 1000, 80_000, rng.randint(1, 3000)])
        ctx = rng.choice([0.0, 1.0, 1.5, 99.0, rng.uniform(1, 40_000)])
        assert times.decode(n, ctx) == _reference_decode(fresh, n, ctx)


def test_a_step_is_the_same_whatever_steps_were_timed_before():
    """The step model remembers each part's attention FLOPs and KV bytes and each token count's terms: a step
    timed after thousands of others equals the same step on a fresh model, bit for bit."""
    import random

    from gpuplan_core.perf.steps import StepModel

    rng = random.Random(11)
    warm = StepModel(L8, H100, Workload(tp=2), PA, "vllm")
    steps = [
        (rng.choice([0, 1, 8, 40.0, 255]), rng.randint(1, 9000), ((rng.randint(0, 4000), rng.randint(1, 8192), 1),))
        for _ in range(2000)
    ]
    for decodes, ctx, chunks in steps:
        warm.step_s(decodes, ctx, chunks)
    for decodes, ctx, chunks in steps[::50]:
        assert warm.step_s(decodes, ctx, chunks) == StepModel(L8, H100, Workload(tp=2), PA, "vllm").step_s(
            decodes, ctx, chunks
        )


@pytest.mark.parametrize(
    "preset, gpu, wl, engine",
    [
        ("Llama-3.1-8B", "H100-SXM", Workload(), "vllm"),  # measured kernels
        ("Llama-3.1-70B", "A100-80GB", Workload(tp=4, weights_format="fp8"), None),  # roofline
        ("Mixtral-8x7B-v0.1", "H100-SXM", Workload(tp=2), "sglang"),  # MoE
        ("Gemma-2-9B", "L40", Workload(eager=True), "vllm"),  # sliding window, host-bound launches
    ],
)
def test_a_decode_steps_time_alone_is_its_reports_float_for_float(preset, gpu, wl, engine):
    """``StepModel.decode_s`` (the static views' sampled steps) is ``decode(...).time_s`` exactly, at batches and
    contexts from a request alone to a full cache; speculating with a 1B draft of 4 tokens, the verify step's
    report (5 tokens a sequence) and 4 of the draft's decode steps."""
    sm = StepModel(get_preset(preset), get_gpu(gpu), wl, PerfAssumptions(), engine)
    for batch, ctx in ((1, 1), (1, 4000), (37, 900), (256, 8191), (8, 2048)):
        assert sm.decode_s(batch, ctx) == sm.decode(batch, ctx).time_s
    spec = StepModel(sm.m, sm.gpu, replace(wl, spec_draft=model_from_param_count(10**9)), PerfAssumptions(), engine)
    assert (spec.width, spec.draft_steps, spec.draft.width) == (5, 4, 1)
    for batch, ctx in ((1, 4000), (8, 2048)):
        verify = spec.decode(batch, ctx).time_s
        assert spec.decode_s(batch, ctx) == pytest.approx(verify + 4 * spec.draft.decode_s(batch, ctx), rel=1e-12)


def test_the_step_model_is_shared_by_what_it_reads():
    """``step_model`` builds one StepModel per model, GPU, workload, assumptions and engine: the same workload
    written again gives the same object, another layout another."""
    m, g = get_preset("Llama-3.1-8B"), get_gpu("H100-SXM")
    one = step_model(m, g, Workload(tp=2), PerfAssumptions(), "vllm")
    assert step_model(m, g, Workload(tp=2), PerfAssumptions(), "vllm") is one
    assert step_model(m, g, Workload(tp=4), PerfAssumptions(), "vllm") is not one
    assert step_model(m, g, Workload(tp=2), PerfAssumptions(), None) is not one
