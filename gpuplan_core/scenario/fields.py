"""The question's vocabulary: the kinds of job, method and setting a scenario names, and the limits beyond reason."""

from __future__ import annotations

from typing import Literal

Mode = Literal["inference", "training", "finetune"]
Serving = Literal["interactive", "batch"]
Method = Literal["full", "lora", "qlora"]
Accounting = Literal["zero", "hf"]
Optimizer = Literal["adamw", "adam8bit", "sgd"]
Recompute = Literal["none", "selective", "full"]
Precision = Literal["mixed", "bf16", "fp8", "mxfp8", "nvfp4", "fp32"]
CrossEntropy = Literal["full", "chunked"]
QloraLibrary = Literal["peft", "bitsandbytes", "torchao"]
Offload = Literal["none", "optimizer", "optimizer+params"]
PipelineSchedule = Literal["1f1b", "zb-h1"]
LoraTargets = Literal["qv", "attention", "all-linear", "all-linear+head"]
Billing = Literal["on_demand", "spot", "reserved", "serverless"]
PriceSource = Literal["add", "only"]

MAX_CONTEXT_TOKENS = 10_000_000  # "beyond reason": no model in 2026 serves more
MAX_BATCH = 1_000_000
MAX_GPUS = 100_000  # a memory budget's largest layout
MAX_LAYOUT_GPUS = 4096  # the most GPUs one job asks for and the layout search tries
