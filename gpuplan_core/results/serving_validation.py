"""Typed results of validation by source (perf/serving_loso.py): each published serving source left out in turn."""

from __future__ import annotations

from pydantic import Field

from .base import _Report


class LeftOutSourceError(_Report):
    """Error on the runs of sources left out of every fit (each source predicted with its benchmark client's cost
    fitted on the other sources that client sent, else none), for one grouping, group and metric."""

    by: str = Field(
        description="'all', 'regime' (online dense, MoE, offline burst), 'source', 'engine', 'gpu' or "
        "'model_class' (dense / MoE / MLA)"
    )
    group: str = Field(description="the source's row-id prefix, engine profile, GPU or model class; 'all'")
    metric: str = Field(description="ttft, itl (time per output token) or output_tokens_per_s")
    points: int
    median_abs_error: float
    median_error: float = Field(description="median signed error: + where the prediction is above the measurement")
