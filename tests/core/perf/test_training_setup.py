"""What a step is computed from (perf/training_setup.py): the layout's data-parallel ranks and micro-batches by hand,
and the constants' bounds."""

import pytest
from pydantic import ValidationError

from gpuplan_core.perf.training_setup import StepLayout, TrainingEfficiency


def test_data_parallel_ranks_and_micro_batches_by_hand():
    """64 GPUs at TP 2 x PP 4 x CP 1: 8 data-parallel ranks; 4M tokens / (8 x micro-batch 2 x 4,096) = 64."""
    lay = StepLayout(gpus=64, tp=2, pp=4, micro_batch=2, seq_len=4096, global_batch_tokens=4 * 1024 * 1024)
    assert lay.dp == 8 and lay.micro_batches == 64
    assert StepLayout(gpus=8, global_batch_tokens=1.0).micro_batches == 1  # never fewer than one
    assert StepLayout(gpus=1, seq_len=8192, packed_example_tokens=512).attention_tokens == 512


def test_the_constants_are_bounded():
    with pytest.raises(ValidationError):
        TrainingEfficiency(overlap=1.5)
    with pytest.raises(ValidationError):
        TrainingEfficiency(network_efficiency=0.0)
