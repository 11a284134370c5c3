"""The input records of the training run's parallel layout beyond TP x PP x CP (records_job.py): the pipeline
schedule (chunks per stage, and 1F1B or zero bubble), expert parallel and ZeRO-3's hybrid sharding (HSDP) group,
each searched unless set (``record.py`` says what a record holds)."""

from __future__ import annotations

from .options import PAR
from .record import ALL_JOBS, TRAINING, Input

PARALLEL_RECORDS: tuple[Input, ...] = (
    Input(
        "vpp",
        "Pipeline chunks per stage (1 = 1F1B)",
        "select",
        group=PAR,
        field="virtual_stages",
        options=("auto", 1, 2, 4, 8),
        none_when="auto",
        jobs=TRAINING,
        short="pipeline chunks per stage",
    ),
    Input(
        "pipe",
        "Pipeline schedule",
        "select",
        group=PAR,
        field="pipeline_schedule",
        options=("auto", "1f1b", "zb-h1"),
        labels={"1f1b": "1F1B", "zb-h1": "ZB-H1"},  # 1F1B: interleaved with chunks per stage above 1
        none_when="auto",
        jobs=TRAINING,
        short="pipeline schedule",
    ),
    Input(
        "ep",
        "Expert parallel",
        "select",
        group=PAR,
        field="ep",
        options=("auto", 1, 2, 4, 8, 16, 32, 64, 128, 256),
        none_when="auto",
        jobs=ALL_JOBS,  # serving: a fixed layout for an MoE model (Parallelism.serving_ep)
        short="expert parallel",
    ),
    Input(
        "hsdp",
        "HSDP shard group (data-parallel ranks)",
        "select",
        group=PAR,
        field="shard_gpus",
        options=("auto", 0, 2, 4, 8, 16, 32, 64),
        labels={0: "off"},
        none_when="auto",
        jobs=TRAINING,
        short="HSDP shard group",
    ),
)
