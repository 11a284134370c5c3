"""What the training search tries (training_layout.py builds the shapes of them): the ZeRO stages, recompute
policies, micro-batches, pipeline schedules, expert- and context-parallel degrees and ZeRO-3 shard groups, each
searched unless the user set it, and the tokens of one optimizer step.
"""

from __future__ import annotations

from ..model.arch import ModelArch
from .training_ask import TrainingAsk

PIPELINE_DEPTHS_TRIED = 2  # per tensor-parallel degree, ZeRO stage and micro-batch: the fewest stages that fit
VIRTUAL_STAGES_TRIED = (1, 2, 4)  # model chunks per pipeline stage searched (1: plain 1F1B)
EXPERT_PARALLEL_TRIED = (1, 2, 4, 8)  # expert parallel searched: within one machine's NVLink domain
HSDP_MACHINE_GPUS = 8  # HSDP searched with one 8-GPU machine's data-parallel ranks as its shard group
CONTEXT_PARALLEL_TRIED = (1, 2, 4)  # context parallel searched for long sequences
LONG_SEQUENCE_TOKENS = 32_768  # from this sequence length on, context parallel is searched (none set)
PRE_TRAINING_GLOBAL_BATCH_TOKENS = 4 * 1024 * 1024  # Llama 2 and 3's 4M-token batches; fine-tuning: one micro-batch


def zero_stages(ask: TrainingAsk) -> list[int]:
    """The ZeRO stages tried: all four when searched, else the stage set and those above it (used only where the
    set stage fits nowhere)."""
    return [0, 1, 2, 3] if ask.parallelism.zero_auto else list(range(ask.parallelism.zero_stage, 4))


RECOMPUTES = ("none", "selective", "full")  # fastest first: each keeps fewer activations and recomputes more


def recomputes(ask: TrainingAsk) -> list[str]:
    """The recompute policies tried: all three when searched (``recompute_auto``), else the one set."""
    return list(RECOMPUTES) if ask.training.recompute_auto else [ask.training.recompute]


def virtual_stage_options(m: ModelArch, ask: TrainingAsk) -> tuple[int, ...]:
    """The interleaved schedules tried beside 1F1B: 2 and 4 chunks when searched, else the one set (none: 1F1B, or
    the zero-bubble schedule set, which runs one chunk per stage)."""
    v = ask.parallelism.virtual_stages
    if ask.parallelism.pipeline_schedule == "zb-h1":
        return ()
    return tuple(k for k in (VIRTUAL_STAGES_TRIED if v is None else (v,)) if k > 1)


PIPELINE_SCHEDULES = ("1f1b", "zb-h1")  # in order of preference on a tie


def schedule_options(ask: TrainingAsk, virtual_stages: int) -> tuple[str, ...]:
    """The schedules a pipelined shape of ``virtual_stages`` chunks per stage is tried at: interleaved shapes are
    1F1B's; one chunk per stage, the one set, else zero bubble (ZB-H1) alone: plain 1F1B on the same layout holds
    the same memory and the same step but a bubble larger by 2 W (pp - 1) / m, so it is never the cheaper and is
    left out of the search (the why-chain says so; ``pipe=1f1b`` keeps it)."""
    if virtual_stages > 1:
        return ("1f1b",)
    s = ask.parallelism.pipeline_schedule
    return ("zb-h1",) if s is None else (s,)


def ep_options(m: ModelArch, ask: TrainingAsk) -> tuple[int, ...]:
    """The expert-parallel degrees tried: for a mixture of experts, 1, 2, 4, 8 dividing its experts when searched,
    else the one set; a dense model has none (1)."""
    if not m.is_moe:
        return (1,)
    e = ask.parallelism.ep
    return tuple(k for k in EXPERT_PARALLEL_TRIED if m.num_experts % k == 0) if e is None else (e,)


def cp_options(ask: TrainingAsk) -> tuple[int, ...]:
    """The context-parallel degrees tried: the user's where above 1; 1, 2, 4 for sequences from 32,768 tokens."""
    cp = ask.parallelism.cp
    if cp > 1:
        return (cp,)
    return CONTEXT_PARALLEL_TRIED if ask.context_tokens >= LONG_SEQUENCE_TOKENS else (1,)


def global_batch_tokens(ask: TrainingAsk, micro: int, pp: int, dp: int) -> float:
    """Tokens per optimizer step: pre-training's 4M-token batch; fine-tuning one micro-batch per rank, 4 x the
    stages with a pipeline (never less than one micro-batch per data-parallel rank)."""
    seq = ask.context_tokens
    pipe = 4 * pp if pp > 1 else 1
    glob = PRE_TRAINING_GLOBAL_BATCH_TOKENS if ask.job.mode == "training" else micro * seq * dp * pipe
    return max(glob, micro * seq * dp)


def micro_batches(ask: TrainingAsk) -> list[int]:
    """The micro-batches tried: the one given, then each half of it down to 1 (8, 4, 2, 1)."""
    b, out = ask.request.batch_or_one, []
    while b >= 1:
        out.append(b)
        b //= 2
    return out


def shard_options(ask: TrainingAsk, zero: int, tp: int, cp: int) -> tuple[int, ...]:
    """The ZeRO-3 shard groups tried (0: over all the data-parallel ranks): the user's where set, else plain ZeRO-3
    and HSDP over one machine's data-parallel ranks (HSDP_MACHINE_GPUS / (tp x cp), where that is 2 or more)."""
    if zero != 3:
        return (0,)
    if (s := ask.parallelism.shard_gpus) is not None:
        return (s,)
    group = HSDP_MACHINE_GPUS // (tp * cp)
    return (0, group) if group >= 2 else (0,)
