"""The training step model against published runs (perf/training_calibration.py): each run laid out as its
publisher stated it, the held-out third, the sources, the regimes and the error summary, by hand."""

import zlib
from types import SimpleNamespace

import pytest

from gpuplan_core.perf.training_calibration import (
    SHARDING_ZERO,
    RunError,
    error_summary,
    held_out,
    measured_runs,
    packed_example_tokens,
    run_layout,
    source_key,
)

LLMFOUNDRY_70B = "llmfoundry-h100ls-70b-s2048-g512"  # 512 x H100, FSDP, micro-batch 8, global batch 4,096 x 2,048


def _row(run_id: str):
    runs = measured_runs()
    return next(r for r in runs.itertuples() if r.id == run_id)


def test_a_run_as_its_publisher_laid_it_out():
    """llm-foundry's 70B: 512 GPUs, FSDP (ZeRO-3), micro-batch 8, 4,096 sequences of 2,048 tokens a step, full
    activation checkpointing, BF16 (the mixed recipe); Hopper's 400 Gbit/s per GPU between machines."""
    m, gpu, lay = run_layout(_row(LLMFOUNDRY_70B))
    assert (gpu.gpu, lay.gpus, lay.tp, lay.pp, lay.cp, lay.zero_stage) == ("H100-SXM", 512, 1, 1, 1, 3)
    assert (lay.micro_batch, lay.seq_len, lay.recompute, lay.precision) == (8, 2048, "full", "mixed")
    assert lay.global_batch_tokens == 4096 * 2048 == 8_388_608  # the notes' "global batch 8388608 tokens"
    assert (lay.gpus_per_node, lay.inter_node_gbit_s_per_gpu, lay.frozen_base) == (8, 400.0, False)


def test_an_unstated_micro_batch_and_global_batch_come_from_the_layout():
    """Megatron's 7.1B: 96 GPUs at TP 2 (48 data-parallel ranks), global batch 192, micro-batch not stated (1)."""
    _, _, lay = run_layout(_row("megatron-h100-7.1b"))
    assert (lay.tp, lay.zero_stage, lay.micro_batch, lay.recompute) == (2, 1, 1, "none")
    assert lay.global_batch_tokens == 192 * 4096


def test_every_kth_layer_checkpointing_reads_as_full_every_k():
    row = _row(LLMFOUNDRY_70B)._replace(recompute="every_k:4")
    _, _, lay = run_layout(row)
    assert (lay.recompute, lay.recompute_every) == ("full", 4)


def test_the_sharding_names_map_to_zero_stages():
    assert {k: SHARDING_ZERO[k] for k in ("ddp", "distributed_optimizer", "zero2", "fsdp", "fsdp2")} == {
        "ddp": 0,
        "distributed_optimizer": 1,
        "zero2": 2,
        "fsdp": 3,
        "fsdp2": 3,
    }
    assert set(measured_runs().sharding.dropna()) <= set(SHARDING_ZERO)  # unstated: ZeRO-1, the default


def test_a_third_is_held_out_by_the_ids_crc32():
    assert held_out("a") == (zlib.crc32(b"a") % 3 == 0)
    ids = list(measured_runs().id)
    share = sum(map(held_out, ids)) / len(ids)
    assert len(ids) > 100 and 0.2 < share < 0.45  # about a third of the published runs


def test_the_source_is_the_repository_or_paper():
    assert source_key("mosaicml/llm-foundry scripts/train/benchmarking/README.md @8c8d, table 'H100'") == (
        "mosaicml/llm-foundry"
    )
    assert source_key("arXiv:2407.21783, Table 4") == "arXiv:2407.21783"


def test_the_error_and_its_summary_by_hand():
    """error = predicted / measured - 1; the summary's median |error|, share within 15% and 80th percentile per
    regime, and 'all dense' pooling every regime but MoE."""
    errs = [
        RunError("a", "p", "pre-training, BF16", True, 100.0, 112.0),  # +12%
        RunError("b", "p", "pre-training, BF16", True, 100.0, 80.0),  # -20%
        RunError("c", "p", "fine-tuning", True, 100.0, 105.0),  # +5%
        RunError("d", "p", "mixture of experts", True, 100.0, 150.0),  # +50%, not dense
        RunError("e", "p", "fine-tuning", False, 100.0, 300.0),  # fitted on: not in the held-out summary
    ]
    assert errs[0].error == pytest.approx(0.12) and errs[1].error == pytest.approx(-0.2)
    s = error_summary(errs)
    assert s["pre-training, BF16"]["points"] == 2 and s["pre-training, BF16"]["median_abs_error"] == 0.16
    assert s["fine-tuning"] == {"points": 1, "median_abs_error": 0.05, "within_15pct": 1.0, "p80_abs_error": 0.05}
    dense = s["all dense"]  # 0.12, 0.20, 0.05: median 0.12, two of three within 15%
    assert (dense["points"], dense["median_abs_error"], dense["within_15pct"]) == (3, 0.12, round(2 / 3, 4))
    assert error_summary(errs, held=False)["fine-tuning"]["median_abs_error"] == 2.0


def test_a_stand_in_row_reads_defaults_for_what_is_not_stated():
    row = SimpleNamespace(
        model="Llama-3.1-8B",
        gpu="A100-80GB-SXM",
        tp=float("nan"),
        pp=None,
        cp=None,
        vp=None,
        ep=None,
        seq_len=8192,
        micro_batch=None,
        gpu_count=16,
        global_batch=None,
        grad_accum=4,
        recompute=None,
        notes="LoRA r=16",
        interconnect=None,
        precision="bf16",
        sharding="unknown-name",
    )
    _, gpu, lay = run_layout(row)
    assert (lay.tp, lay.pp, lay.micro_batch, lay.zero_stage, lay.frozen_base) == (1, 1, 1, 1, True)
    assert lay.global_batch_tokens == 1 * 16 * 4 * 8192  # micro x dp x grad accumulation x sequence
    assert lay.inter_node_gbit_s_per_gpu == 200.0  # Ampere


def test_a_packed_fine_tuning_run_attends_within_its_examples():
    """NeMo's SQuAD runs pack examples into 4,096-token sequences: the run's layout carries the dataset's example
    length (data/training_packed_samples.json); a pre-training run packs nothing."""
    _, _, lora = run_layout(_row("nemo2407-h100-lora-llama2-7b-g8"))
    assert (lora.seq_len, lora.packed_example_tokens, lora.attention_tokens) == (4096, 210, 210)
    _, _, pre = run_layout(_row(LLMFOUNDRY_70B))
    assert pre.packed_example_tokens is None and pre.attention_tokens == pre.seq_len == 2048
    assert packed_example_tokens("SFT fine-tuning: SQuAD v1.1 packed to 4096 tokens; dp derived") == 210
    assert packed_example_tokens("SQuAD v1.1 at 4096 tokens, not packed") is None
