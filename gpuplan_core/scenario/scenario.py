"""The scenario: one plain validated object that the UI widgets, the CLI and the URL all build.

widgets / argv / query params -> Scenario (pydantic, validated) -> pure engine functions.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..hardware.catalog import GPU, get_gpu, load_gpus
from ..hardware.engines import Engine
from ..model.arch import ModelArch, model_from_param_count
from ..model.formats import FORMATS
from ..model.hf_config import model_from_hf_config
from ..model.presets import get_preset
from .fields import MAX_BATCH, MAX_CONTEXT_TOKENS, Accounting, Billing, Method, Mode, Offload, Optimizer, Recompute


class Scenario(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # the model: exactly one of preset / config_text / params (preset by default)
    preset: str | None = None
    config_text: str | None = Field(None, max_length=2_000_000)
    params: int | None = Field(None, ge=100_000_000, le=100_000_000_000_000)
    # the job
    mode: Mode = "inference"
    method: Method = "full"
    serving: Literal["interactive", "batch"] = "interactive"
    weights_format: str = "bf16"
    kv_format: str = "bf16"
    # the request shape (inference): a request's context is input + output
    input_tokens: int = Field(2000, ge=1, le=MAX_CONTEXT_TOKENS, description="prompt tokens per request")
    output_tokens: int = Field(300, ge=1, le=MAX_CONTEXT_TOKENS, description="generated tokens per request")
    # training and fine-tuning
    sequence_tokens: int = Field(4096, ge=1, le=MAX_CONTEXT_TOKENS, description="tokens per training sequence")
    batch: int | Literal["max"] = 1
    gpu: str | None = None
    gpus: int = Field(1, ge=1, le=100_000)
    tp: int = Field(1, ge=1, le=1024)
    pp: int = Field(1, ge=1, le=1024)
    # training
    zero_stage: int = Field(0, ge=0, le=3)
    accounting: Accounting = "zero"
    optimizer: Optimizer = "adamw"
    recompute: Recompute = "none"
    lora_rank: int = Field(16, ge=1, le=4096)
    offload: Offload = "none"
    training_tokens: float | None = Field(None, gt=0, le=1e16)
    mfu: float | None = Field(None, gt=0, le=1)
    # memory assumptions
    memory_utilization: float = Field(0.90, ge=0.5, le=1.0)
    engine: Engine = "vllm"
    # serving levers
    prefix_cache_fraction: float = Field(0.0, ge=0, le=0.99)
    spec_draft_params: int | None = Field(None, ge=1_000_000, le=1_000_000_000_000)
    spec_tokens: int = Field(4, ge=1, le=16)
    spec_acceptance: float = Field(0.7, ge=0, le=1)
    # traffic and money
    requests_per_day: float | None = Field(None, ge=0, le=1e12)
    peak_to_average: float = Field(3.0, ge=1, le=100)
    ttft_target_s: float | None = Field(None, gt=0, le=3600)
    tpot_target_s: float | None = Field(None, gt=0, le=60)
    deadline_hours: float | None = Field(None, gt=0, le=1e6)
    billing: Billing | None = None
    provider: str | None = None
    hours_per_month: float = Field(730.0, gt=0, le=744)
    utilization: float = Field(0.5, gt=0, le=1)
    overhead_factor: float = Field(0.3, ge=0, le=5, description="failed runs and sweeps on top of a training run")
    spot_restart_overhead: float = Field(0.1, ge=0, le=5)

    @model_validator(mode="before")
    @classmethod
    def _checkpoint_format(cls, data):
        """A Hugging Face config whose quantization_config names a format: the checkpoint is stored that way."""
        if isinstance(data, dict) and data.get("config_text"):
            try:
                fmt = _resolve_model(None, data["config_text"], None).checkpoint_format
            except ValueError:
                return data  # the config's own error is reported by model()
            if fmt:
                data = {**data, "weights_format": fmt}
        return data

    @field_validator("batch", mode="before")
    @classmethod
    def _parse_batch(cls, v):
        if isinstance(v, str):
            t = v.strip().lower()
            if t == "max":
                return "max"
            try:
                return int(t)
            except ValueError:
                raise ValueError(f"batch: {v!r} is not a whole number or 'max'") from None
        if isinstance(v, float):
            if not v.is_integer():
                raise ValueError(f"batch: {v} is not a whole number")
            return int(v)
        return v

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        given = [x for x in (self.preset, self.config_text, self.params) if x is not None]
        if len(given) > 1:
            raise ValueError("model: give only one of preset, config, params")
        for fld in ("weights_format", "kv_format"):
            if getattr(self, fld).lower() not in FORMATS:
                raise ValueError(f"{fld}: unknown format {getattr(self, fld)!r}; allowed: {', '.join(FORMATS)}")
        if self.input_tokens + self.output_tokens > MAX_CONTEXT_TOKENS:
            raise ValueError(
                f"input_tokens + output_tokens: {self.input_tokens + self.output_tokens:,} is more than "
                f"{MAX_CONTEXT_TOKENS:,} tokens"
            )
        if isinstance(self.batch, int) and not 1 <= self.batch <= MAX_BATCH:
            raise ValueError(f"batch: must be between 1 and {MAX_BATCH:,}, or 'max'")
        if self.gpus % (self.tp * self.pp):
            raise ValueError(f"gpus: {self.gpus} must be a multiple of tp x pp = {self.tp * self.pp}")
        if self.gpu is not None:
            get_gpu(self.gpu)
        return self

    # ---- derived objects ---------------------------------------------------------------------------
    def model(self) -> ModelArch:
        return _resolve_model(self.preset, self.config_text, self.params)

    def selected_gpus(self) -> tuple[GPU, ...]:
        return (get_gpu(self.gpu),) if self.gpu else load_gpus()

    @property
    def context_tokens(self) -> int:
        """Tokens a sequence holds at its longest: input + output for inference (the KV cache at the last
        token), the training sequence length otherwise."""
        return self.input_tokens + self.output_tokens if self.mode == "inference" else self.sequence_tokens

    def warnings(self) -> list[str]:
        """Allowed but worth saying: a context longer than the model was trained for."""
        m = self.model()
        out = [m.checkpoint_note] if m.checkpoint_note else []
        if self.mode != "inference" and self.offload == "optimizer+params" and self.zero_stage != 3:
            out.append(
                f"CPU offload of parameters needs ZeRO stage 3; at stage {self.zero_stage} only the optimizer "
                "(with gradients and master weights) is offloaded."
            )
        if self.context_tokens <= m.max_context_tokens:
            return out
        what = "input + output tokens" if self.mode == "inference" else "sequence length"
        return out + [
            f"{what} ({self.context_tokens:,}) is longer than {m.name}'s maximum context of "
            f"{m.max_context_tokens:,} tokens; the numbers assume the model is extended to it (e.g. RoPE scaling)."
        ]


@lru_cache(maxsize=64)
def _resolve_model(preset: str | None, config_text: str | None, params: int | None) -> ModelArch:
    if config_text is not None:
        return model_from_hf_config(config_text)
    if params is not None:
        return model_from_param_count(params)
    return get_preset(preset or "Llama-3.1-8B")
