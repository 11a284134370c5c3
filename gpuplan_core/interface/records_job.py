"""The input records of the job, the model, the request, the GPU count and parallelism, then training's
(records_training.py) in the sidebar's order (one per input; ``record.py`` says what a record holds)."""

from __future__ import annotations

from ..model.formats import FORMATS, KV_FORMATS, WEIGHT_FORMATS
from .options import (
    BATCH_STEPS,
    INPUT_TOKEN_STEPS,
    METHODS,
    MODEL_SOURCES,
    OUTPUT_TOKEN_STEPS,
    PAR,
    PP_CHOICES,
    SEQUENCE_LENGTHS,
    SIZES_B,
    TP_CHOICES,
    USE_CASES,
    _batch_fields,
    _gpu_ids,
    _gpu_label,
    _gpu_named,
    _job_fields,
    _presets,
    short_number,
    tokens_label,
)
from .record import DEFAULT_JOB, DEFAULT_SOURCE, INFERENCE, JOBS, TRAINING, Input
from .records_training import TRAINING_RECORDS

JOB_RECORDS: tuple[Input, ...] = (
    # the job and the model
    Input(
        "workload",
        "Job",
        "select",
        options=tuple(JOBS),
        labels=JOBS,
        to_fields=_job_fields,
        sets=("mode", "serving"),
        default=DEFAULT_JOB,
        help="What the GPUs will do. Inference is judged by "
        "latency and tokens per dollar; training by completion time and cost per run.",
    ),
    Input(
        "usecase",
        "Use case",
        "select",
        options=tuple(USE_CASES),
        labels=lambda k: USE_CASES[k]["label"],
        jobs=INFERENCE,
        default="chat",
        help="Sets input and output tokens and the latency targets to typical "
        "values for the use case (Methodology says where they come from); change any of them afterwards.",
    ),
    Input(
        "src",
        "Model",
        "radio",
        options=tuple(MODEL_SOURCES),
        labels=MODEL_SOURCES,
        default=DEFAULT_SOURCE,
        help="A published model with its exact architecture, a bare size (an approximate Llama-style shape is "
        "derived), or any Hugging Face config.json.",
    ),
    Input("model", "Published model", "select", field="preset", options=_presets, source="preset", short="model"),
    Input(
        "size_b",
        "Model size (billions of parameters)",
        "number",
        field="params",
        steps=SIZES_B,
        labels=lambda v: f"{v:g}B",
        suffix="B",  # links before the number box wrote the slider's label (size_b=70B)
        step=1,
        fmt="%g",
        scale=1e9,
        source="size",
        default=7,
    ),  # the field's default: a preset
    Input(
        "hf",
        "Hugging Face model id",
        "text",
        sets=("config_text",),
        source="config",
        default="",
        help="Fetched from huggingface.co when the server is online; otherwise upload the config.json below.",
    ),
    Input(
        "method",
        "Fine-tuning method",
        "select",
        field="method",
        options=tuple(METHODS),
        labels=METHODS,
        jobs=frozenset({"finetune"}),
        short="method",
    ),
    Input(
        "weights",
        "Weights format",
        "select_slider",  # the formats in order, from 32 bits per weight down to 4
        field="weights_format",
        options=tuple(WEIGHT_FORMATS),
        labels=lambda f: FORMATS[f].label,
    ),
    Input(
        "kv",
        "KV-cache format",
        "select",
        field="kv_format",
        options=tuple(KV_FORMATS),
        labels=lambda f: FORMATS[f].label,
        jobs=INFERENCE,
    ),
    # the request shape
    Input(
        "in",
        "Input tokens per request",
        "number",
        field="input_tokens",
        step=100,
        steps=INPUT_TOKEN_STEPS,
        labels=short_number,
        jobs=INFERENCE,
        short="input tokens",
    ),
    Input(
        "out",
        "Output tokens per request",
        "number",
        field="output_tokens",
        step=50,
        steps=OUTPUT_TOKEN_STEPS,
        labels=short_number,
        jobs=INFERENCE,
        short="output tokens",
    ),
    Input(
        "ctx",
        "Sequence length (tokens)",
        "select_slider",
        field="sequence_tokens",
        options=SEQUENCE_LENGTHS,
        labels=tokens_label,
        jobs=TRAINING,
    ),
    Input(
        "batch_max",
        "Use the largest batch that fits",
        "toggle",
        jobs=INFERENCE,
        default=False,
        help="Throughput at the most concurrent sequences the memory allows.",
    ),
    Input(
        "batch",
        "Batch (concurrent sequences)",
        "number",
        field="batch",
        step=1,
        steps=BATCH_STEPS,
        to_fields=_batch_fields,
        job_labels={"pretrain": "Micro-batch per GPU", "finetune": "Micro-batch per GPU"},
    ),
    Input(
        "gpu",
        "GPU",
        "select",
        field="gpu",
        options=lambda: ["any", *_gpu_ids()],
        labels=lambda g: "Any GPU" if g == "any" else _gpu_label(g),
        none_when="any",
        resolve=_gpu_named,  # gpu=TPU v6e, gpu=H100 in a link: the catalog's aliases
    ),
    Input(
        "meeting",
        "Meeting view",
        "toggle",
        default=False,
        help="For a projector: hides this sidebar and the "
        "detail tables and enlarges the type, leaving each page's answer, headline numbers and one chart. In the "
        "link; 'Leave meeting view' at the top of each page turns it off.",
    ),
    # GPU count and parallelism
    Input("gpus", "GPUs", "number", group=PAR, field="gpus", step=1, short="GPUs"),
    Input("tp", "Tensor parallel", "select", group=PAR, field="tp", options=TP_CHOICES, short="tensor parallel"),
    Input("pp", "Pipeline stages", "select", group=PAR, field="pp", options=PP_CHOICES, short="pipeline stages"),
    *TRAINING_RECORDS,  # training (records_training.py)
)
