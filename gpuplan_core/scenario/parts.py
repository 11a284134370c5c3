"""The parts of a scenario that say what is run, one small frozen model each: the job, the model, number formats
and request shape (layout.py holds the parallelism and the training run; deployment.py how it is served and
billed: traffic, pricing and the engine's runtime). Every field's default, bounds and help is written once, here or
there.

The input registry (interface/registry.py) reads its widgets' defaults, ranges and help from these fields, the CLI
names its flags after them, and the engine reads the part it needs (``sc.traffic``, ``sc.formats``). A field's
name is unique across the parts, so ``Scenario(requests_per_day=...)`` and ``sc.with_(gpu=None)`` know where it
goes. Checks across the fields of one part are the part's validators; derived values are properties.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..model.formats import FORMATS
from .fields import (
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    Method,
    Mode,
    Serving,
)

DEFAULT_PRESET = "Llama-3.1-8B"


class Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Job(Part):
    """What the GPUs will do."""

    mode: Mode = Field("inference", description="inference, training (pre-training) or finetune.")
    serving: Serving = Field(
        "interactive", description="Inference: interactive (latency targets apply) or batch (offline jobs)."
    )
    method: Method = Field(
        "full",
        description="Fine-tuning: LoRA trains small adapters on a frozen base; QLoRA also stores the base in 4-bit "
        "NF4 (LoRA unless given).",
    )

    @property
    def key(self) -> str:
        """The job as the app names it: interactive, batch, pretrain or finetune."""
        return {"inference": self.serving, "training": "pretrain"}.get(self.mode, self.mode)

    @property
    def training_method(self) -> Method:
        """The method the run uses: the fine-tuning method, else full (pre-training trains every weight)."""
        return self.method if self.mode == "finetune" else "full"


class ModelSource(Part):
    """The model: exactly one of a published preset, a Hugging Face config or a bare parameter count."""

    preset: str | None = Field(
        DEFAULT_PRESET, description="Architectures from the models' published configs (sources on Methodology)."
    )
    config_text: str | None = Field(None, max_length=2_000_000, description="A Hugging Face config.json's text.")
    params: int | None = Field(
        None,
        ge=100_000_000,
        le=100_000_000_000_000,
        description="Parameters. The memory of weights is exact; KV cache and activations use a derived "
        "Llama-style shape and are approximate.",
    )

    @model_validator(mode="before")
    @classmethod
    def _preset_only_by_default(cls, data):
        """A config or a parameter count replaces the default preset (a preset given with them is an error)."""
        if isinstance(data, dict) and "preset" not in data and (data.get("config_text") or data.get("params")):
            return {**data, "preset": None}
        return data

    @model_validator(mode="after")
    def _one_source(self) -> ModelSource:
        if sum(x is not None for x in (self.preset, self.config_text, self.params)) > 1:
            raise ValueError("model: give only one of preset, config, params")
        return self


class Formats(Part):
    """Number formats of the weights and the KV cache."""

    weights_format: str = Field(
        "bf16",
        description="Bytes per weight including scale metadata (4-bit formats store scales too). Training uses "
        "mixed precision whatever is chosen here.",
    )
    kv_format: str = Field("bf16", description="The attention cache per token; FP8 halves it.")

    @field_validator("weights_format", "kv_format", mode="before")
    @classmethod
    def _name(cls, v):
        """'FP8' and ' fp8' are the format fp8: one question, one cache key."""
        return v.strip().lower() if isinstance(v, str) else v

    @model_validator(mode="after")
    def _known(self) -> Formats:
        for fld in ("weights_format", "kv_format"):
            if getattr(self, fld).lower() not in FORMATS:
                raise ValueError(f"{fld}: unknown format {getattr(self, fld)!r}; allowed: {', '.join(FORMATS)}")
        return self


Batch = Annotated[int, Field(ge=1, le=MAX_BATCH)] | Literal["max"]


class Request(Part):
    """One request's shape (inference) or one training sequence, and how many run together."""

    input_tokens: int = Field(
        2000,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description="The prompt: system prompt, history, documents and the question. Prefill time and KV cache "
        "grow with it.",
    )
    output_tokens: int = Field(
        300,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description="The answer's length. Decode time grows with it; each sequence's KV cache holds input + output "
        "tokens at its end.",
    )
    sequence_tokens: int = Field(
        4096, ge=1, le=MAX_CONTEXT_TOKENS, description="Tokens in each training sequence. Activations grow with it."
    )
    batch: Batch = Field(
        8,
        description="Sequences processed together; each keeps its own KV cache (training: the micro-batch per GPU). "
        "'max': the largest batch that fits (inference).",
    )

    @field_validator("batch", mode="before")
    @classmethod
    def _parse_batch(cls, v):
        if isinstance(v, str):
            t = v.strip().lower()
            if t == "max":
                return "max"
            try:
                v = int(t)
            except ValueError:
                raise ValueError(f"batch: {v!r} is not a whole number or 'max'") from None
        if isinstance(v, float):
            if not v.is_integer():
                raise ValueError(f"batch: {v} is not a whole number")
            return int(v)
        if isinstance(v, int) and not isinstance(v, bool) and not 1 <= v <= MAX_BATCH:
            raise ValueError(f"batch: must be between 1 and {MAX_BATCH:,}, or 'max'")
        return v

    @model_validator(mode="after")
    def _context(self) -> Request:
        if self.input_tokens + self.output_tokens > MAX_CONTEXT_TOKENS:
            raise ValueError(
                f"input_tokens + output_tokens: {self.input_tokens + self.output_tokens:,} is more than "
                f"{MAX_CONTEXT_TOKENS:,} tokens"
            )
        return self

    @property
    def batch_or_one(self) -> int:
        """The batch, with 'max' read as 1 (where the largest batch is found later)."""
        return 1 if self.batch == "max" else self.batch
