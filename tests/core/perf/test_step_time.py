"""perf/step_time.py: the compiled step model gives the Python model's step times (roofline.StepCost.seconds, the
kernel tables' look-ups) exactly, float for float, on thousands of random steps of random replicas: GPUs with and
without kernel tables, the three engines' tables and an engine without, every weights and KV format, tensor and
pipeline parallel over NVLink and PCIe, MoE, MLA and sliding-window models, eager mode, ranks of expert-parallel
replicas (their all-to-alls over NVLink and PCIe); and the decode grid's cells (steps.cell_of) are StepTimes.cell's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from gpuplan_core.common.jit import NUMBA
from gpuplan_core.hardware.catalog import get_gpu, load_gpus
from gpuplan_core.model.formats import KV_FORMATS, WEIGHT_FORMATS
from gpuplan_core.model.presets import get_preset, load_presets
from gpuplan_core.perf import kernel_steps, step_pack, step_time
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.replica import Replica, engine_limits
from gpuplan_core.perf.roofline import Workload
from gpuplan_core.perf.steps import StepModel, StepTimes, cell_of

pytestmark = pytest.mark.skipif(not NUMBA, reason="the compiled step model needs numba")

TABLE_GPUS, ENGINES = ("H100-SXM", "H200", "B200"), ("vllm", "sglang", "trtllm")


def _replica(rng: random.Random):
    """A random model, GPU, engine, formats and layout; half of them where the kernel tables may cover it."""
    presets = load_presets()
    name = rng.choice(sorted(presets))
    if rng.random() < 0.5:
        gpu, engine = rng.choice(TABLE_GPUS), rng.choice(ENGINES)
        wf, kf = rng.choice(("bf16", "fp16", "fp8")), rng.choice(("bf16", "fp16", "fp8"))
    else:
        gpu, engine = rng.choice([g.gpu for g in load_gpus()]), rng.choice((*ENGINES, "transformers"))
        wf, kf = rng.choice(WEIGHT_FORMATS), rng.choice(KV_FORMATS)
    wl = Workload(
        weights_format=wf,
        kv_format=kf,
        tp=rng.choice((1, 1, 2, 4, 8)),
        pp=rng.choice((1, 1, 1, 2, 4)),
        eager=rng.random() < 0.2,
    )
    return StepModel(presets[name], get_gpu(gpu), wl, PerfAssumptions(), engine)


def _step(rng: random.Random):
    """(decodes, context, chunks): decodes alone, chunks alone or both; chunks of 1 to 40,000 tokens."""
    decodes = float(rng.choice((0, rng.randint(1, 16), rng.randint(1, 2000))))
    ctx = rng.choice((1, rng.randint(1, 300), rng.randint(1, 200_000)))
    chunks = tuple(
        (rng.choice((0, rng.randint(0, 100_000))), rng.choice((1, rng.randint(1, 512), rng.randint(1, 40_000))), last)
        for last in (rng.randint(0, 1) for _ in range(rng.choice((0, 1, 1, 2, 5)) if decodes else rng.randint(1, 5)))
    )
    return decodes, ctx, chunks


def test_random_steps_of_random_replicas_are_the_python_models_times_exactly():
    rng = random.Random(30)
    steps = kinds = 0
    covered = set()
    for _ in range(120):
        model = _replica(rng)
        packed = step_pack.pack(model.cost)
        if len(packed[0]) == 0:  # MoE or MLA layers from the kernel tables: the Python model answers
            assert model.cost.kernels is not None and (model.m.is_moe or model.m.is_mla)
            continue
        covered.add((model.cost.kernels is not None, model.m.is_moe, model.m.is_mla, model.wl.tp > 1))
        kinds += 1
        for _ in range(40):
            decodes, ctx, chunks = _step(rng)
            spec = np.array([v for c in chunks for v in c], np.int64)
            want = model.python_step_s(decodes, ctx, chunks)
            assert model.step_s(decodes, ctx, chunks) == want
            assert step_time.step_s(packed, step_pack.EMPTY, decodes, ctx, spec, len(chunks)) == want, (
                model.m.name,
                decodes,
                chunks,
            )
            steps += 1
    assert kinds >= 100 and steps >= 4000
    # measured kernels and the roofline alone, dense, MoE and MLA, one GPU and tensor parallel: all were drawn
    assert {(True, False, False, False), (True, False, False, True), (False, True, False, True)} <= covered
    assert {(False, True, True, False), (False, False, False, False)} <= covered


def test_random_steps_of_random_expert_parallel_ranks_are_the_python_models_times_exactly():
    """A rank of an EP replica (expert_parallel.token_terms: the dense part whole, 1 / ep of the experts all ranks'
    tokens touch, two all-to-alls per MoE layer) on every GPU, EP 2, 4 and 8, every weights and KV format, any
    engine (EP is timed on the roofline), eager or not: the compiled time is the Python model's, float for float."""
    from gpuplan_core.perf.expert_parallel import EP_DEGREES

    rng = random.Random(31)
    presets, gpus = load_presets(), [g.gpu for g in load_gpus()]
    links, steps = set(), 0
    for _ in range(60):
        m, gpu = presets[rng.choice(("Mixtral-8x7B-v0.1", "DeepSeek-V3"))], get_gpu(rng.choice(gpus))
        ep = rng.choice(EP_DEGREES)
        wl = Workload(rng.choice(WEIGHT_FORMATS), rng.choice(KV_FORMATS), ep=ep, eager=rng.random() < 0.2)
        model = StepModel(m, gpu, wl, PerfAssumptions(), rng.choice((*ENGINES, "transformers")))
        packed = step_pack.pack(model.cost)
        assert model.cost.ep == ep and packed[0][step_pack.EP] == ep
        links.add(gpu.peer_link(ep)[0])
        for _ in range(40):
            decodes, ctx, chunks = _step(rng)
            spec = np.array([v for c in chunks for v in c], np.int64)
            want = model.python_step_s(decodes, ctx, chunks)
            assert model.step_s(decodes, ctx, chunks) == want
            assert step_time.step_s(packed, step_pack.EMPTY, decodes, ctx, spec, len(chunks)) == want, (
                m.name,
                gpu.gpu,
                ep,
                chunks,
            )
            steps += 1
    assert links == {"nvlink", "pcie"} and steps == 2400


def test_an_ep_ranks_all_to_alls_are_the_comm_models():
    """Mixtral at EP 8 on H200: a 512-token step's two all-to-alls per MoE layer (32 layers) move 512 x 2 experts x
    4,096 hidden x 2 bytes = 8 MiB per rank, 7/8 of it over NVLink: 64 x comm.all_to_all_time, what the compiled
    ``_ep_terms`` returns; the rank reads the dense part and 1/8 of the experts 4,096 routed tokens touch."""
    from gpuplan_core.perf.comm import all_to_all_time
    from gpuplan_core.perf.moe_weights import expert_weight_bytes

    m, gpu, pa = get_preset("Mixtral-8x7B-v0.1"), get_gpu("H200"), PerfAssumptions()
    model = StepModel(m, gpu, Workload(ep=8), pa)
    c = step_pack.pack(model.cost)[0]
    w_bytes, ex_bytes, ex_tokens, comm_s = step_time._ep_terms(c, 512.0)
    assert 512 * 2 * 4096 * 2 == 8 * 2**20
    assert comm_s == 64 * all_to_all_time(8, 8 * 2**20, gpu, pa) and comm_s > 64 * pa.allreduce_latency_s
    assert ex_bytes == expert_weight_bytes(m, model.cost.fmt, 4096.0) / 8
    assert ex_tokens == 4096 * 2 / 8  # every expert touched: 4,096 x 2 / 8 tokens each
    terms = model.cost._token_terms(512.0)  # expert_parallel.token_terms
    assert (terms[0], terms[2], terms[4], terms[5]) == (w_bytes, comm_s, ex_bytes, ex_tokens)


def test_a_measured_step_reads_the_tables_and_past_them_splits_or_falls_back():
    """Llama-3.1-8B on H100 with vLLM's tables: a 40,000-token prompt (GEMMs split into 16,384-token pieces, the
    all-reduce past its table on the roofline) and a decode step; each equal to the Python model's."""
    model = StepModel(get_preset("Llama-3.1-8B"), get_gpu("H100-SXM"), Workload(tp=2), PerfAssumptions(), "vllm")
    packed = step_pack.pack(model.cost)
    assert model.cost.kernels is not None and packed[0][step_pack.KERNELS] == 1.0
    for decodes, ctx, chunks in ((0.0, 0, ((0, 40_000, 1),)), (64.0, 3000, ()), (7.0, 900, ((512, 2048, 0),))):
        spec = np.array([v for c in chunks for v in c], np.int64)
        assert step_time.step_s(packed, step_pack.EMPTY, decodes, ctx, spec, len(chunks)) == model.python_step_s(
            decodes, ctx, chunks
        )


def test_a_moe_replica_timed_from_the_kernel_tables_is_left_to_the_python_model(monkeypatch):
    monkeypatch.setattr(kernel_steps, "MEASURED_MOE", True)
    model = StepModel(get_preset("Mixtral-8x7B-v0.1"), get_gpu("H100-SXM"), Workload(tp=2), PerfAssumptions(), "vllm")
    assert model.cost.kernels is not None
    assert step_pack.pack(model.cost) is step_pack.EMPTY


@pytest.mark.parametrize(
    "preset, gpu, factor, ep",
    [("Llama-3.1-8B", "H100-SXM", 1.0, 1), ("Gemma-2-9B", "L40", 1.1, 1), ("Mixtral-8x7B-v0.1", "H200", 1.0, 8)],
)
def test_the_decode_grids_cells_are_step_times_cells(preset, gpu, factor, ep):
    g = get_gpu(gpu)
    r = Replica(get_preset(preset), g, Workload(ep=ep), 2000, 300, 100, engine_limits(g), decode_time_factor=factor)
    times, python = StepTimes(r), StepTimes(r)
    assert len(times.compiled[0]) and times.compiled[0][step_pack.DECODE_FACTOR] == factor
    python.compiled = python.model.compiled = step_pack.EMPTY  # the Python model's cells
    rng = random.Random(1)
    for _ in range(300):
        n, j = rng.choice((1, 16, 17, 77_280, 80_000, rng.randint(1, 3000))), rng.randint(0, 1200)
        want, got = python.cell(n, j), cell_of(times.compiled, times.draft, n, j)
        assert np.array_equal(np.array(times.cell(n, j)), np.array(got), equal_nan=True)
        assert np.array_equal(np.array(got), np.array(want), equal_nan=True), (n, j)


def test_every_module_with_compiled_code_names_the_cache_it_reads():
    """common/jit.py keys numba's cache on these modules' sources (a compiled caller of an edited callee would read
    stale machine code otherwise): every module that compiles code is among them."""
    from pathlib import Path

    from gpuplan_core.common import jit

    root = Path(jit.__file__).resolve().parents[1]
    compiling = {str(p.relative_to(root)) for p in root.rglob("*.py") if "@njit" in p.read_text()}
    assert compiling <= set(jit._COMPILED_SOURCES)
    assert {"perf/step_loop.py", "perf/steps.py", "perf/step_time.py"} <= compiling


def test_a_replicas_table_look_ups_are_remembered_by_count_and_stay_the_python_models():
    """The dense GEMMs read only the step's token count, the LM head its logits count and a chunk's attention its
    new tokens (step_pack.MEMO_*): a 2,048-token prompt alone and 1,024 decodes beside a 1,024-token chunk share the
    memo's entry for 2,048 tokens, and every step is still the Python model's time; past the memo's counts a step
    is looked up as before."""
    model = StepModel(get_preset("Llama-3.1-8B"), get_gpu("H100-SXM"), Workload(tp=2), PerfAssumptions(), "vllm")
    packed = step_pack.pack(model.cost)
    memo = packed[6]
    assert len(memo) == 2 * step_pack.MEMO_TOKENS + step_pack.MEMO_LOGITS + 3 and (memo == step_pack.UNSET).all()
    steps = (
        (0.0, 0, ((0, 2048, 1),)),  # 2,048 tokens, 1 logit
        (1024.0, 700, ((300, 1024, 1),)),  # 2,048 tokens again, 1,025 logits
        (0.0, 0, ((0, 2048, 1),)),  # read back from the memo
        (0.0, 0, ((0, 12_000, 1),)),  # past MEMO_TOKENS: looked up, not kept
    )
    for decodes, ctx, chunks in steps:
        spec = np.array([v for c in chunks for v in c], np.int64)
        assert step_time.step_s(packed, step_pack.EMPTY, decodes, ctx, spec, len(chunks)) == model.python_step_s(
            decodes, ctx, chunks
        )
    logits_at, chunks_at = step_pack.MEMO_AT_LOGITS, step_pack.MEMO_AT_CHUNKS
    kept = set(np.flatnonzero(memo != step_pack.UNSET).tolist())
    # the GEMMs at 2,048 tokens, the LM head at 1 and 1,025 logits, the chunks' attention at 2,048 and 1,024 new
    assert kept == {2048, logits_at + 1, logits_at + 1025, chunks_at + 2048, chunks_at + 1024}
    assert step_pack.pack(model.cost)[6] is not memo  # each packed replica has its own memo
