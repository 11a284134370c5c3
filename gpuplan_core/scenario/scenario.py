"""The scenario: one validated question that the UI widgets, the CLI and the link all build.

widgets / argv / query params -> Scenario (pydantic, validated) -> pure engine functions.

A Scenario is composed of small parts (parts.py: what is run; deployment.py: how it is served and billed):
``sc.job``, ``sc.model_source``, ``sc.formats``, ``sc.request``, ``sc.parallelism``, ``sc.training``,
``sc.traffic``, ``sc.pricing``, ``sc.assumptions``, ``sc.site`` (site.py: where it runs, what owning costs).
Field names are unique across the parts, so a flat name says where it goes:
``Scenario(requests_per_day=5e4, gpu="H100")`` and ``sc.with_(gpu=None)`` route each name to its part and
validate the whole again, and ``sc.flat()`` is the scenario as one flat dict. A few defaults depend on the job
(``JOB_DEFAULTS``); they fill a field that is not given, so the app with no link and the CLI with no flags ask
the same question.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo

from ..hardware.catalog import GPU, catalog_gpus, get_gpu
from ..model.arch import ModelArch, model_from_param_count
from ..model.hf_config import model_from_hf_config
from ..model.presets import get_preset
from .deployment import Pricing, RuntimeAssumptions, Traffic
from .layout import Parallelism, Training
from .parts import DEFAULT_PRESET, Formats, Job, ModelSource, Part, Request
from .site import Site

# Defaults that depend on the job (its key: interactive, batch, pretrain, finetune), used where the field is not
# given. A pre-training run is 100 billion tokens, a fine-tuning run 100 million; fine-tuning trains LoRA adapters;
# fine-tuning keeps BF16 weights and AdamW states (torchtune's and TRL's recipes); batch inference has no
# latency targets, and a training run neither traffic nor latency targets.
_NO_TARGETS = {"ttft_target_s": None, "tpot_target_s": None}
_NO_TRAFFIC = {"requests_per_day": None, **_NO_TARGETS}
JOB_DEFAULTS: dict[str, dict[str, Any]] = {
    "pretrain": {"training_tokens": 100e9, **_NO_TRAFFIC},
    "finetune": {"training_tokens": 100e6, "method": "lora", "precision": "bf16", **_NO_TRAFFIC},
    "batch": _NO_TARGETS,
}


class Scenario(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    job: Job = Field(default_factory=Job)
    model_source: ModelSource = Field(default_factory=ModelSource)
    formats: Formats = Field(default_factory=Formats)
    request: Request = Field(default_factory=Request)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    training: Training = Field(default_factory=Training)
    traffic: Traffic = Field(default_factory=Traffic)
    pricing: Pricing = Field(default_factory=Pricing)
    assumptions: RuntimeAssumptions = Field(default_factory=RuntimeAssumptions)
    site: Site = Field(default_factory=Site)

    @model_validator(mode="wrap")
    @classmethod
    def _flat_errors(cls, data, handler):
        """Errors name a field as the CLI flag and ``Scenario(**flat)`` spell it (``ttft_target_s``, not
        ``traffic.ttft_target_s``): the names are unique across the parts."""
        try:
            return handler(data)
        except ValidationError as exc:
            errors = []
            for e in exc.errors():
                loc = tuple(e["loc"])
                in_part = loc and loc[0] in PARTS and (len(loc) > 1 or e["type"] == "value_error")
                err = {"type": e["type"], "loc": loc[1:] if in_part else loc}
                err |= {"input": e.get("input")} | ({"ctx": e["ctx"]} if "ctx" in e else {})
                errors.append(err)
            raise ValidationError.from_exception_data(exc.title, errors) from None

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data):
        """Flat names go to their part; then the job's defaults fill what is not given; a Hugging Face config whose
        quantization_config names a format sets the weights format (the checkpoint is stored that way)."""
        if not isinstance(data, dict):
            return data
        out: dict[str, Any] = {}
        for k, v in data.items():
            if k in PARTS:
                part = v.model_dump() if isinstance(v, BaseModel) else v
                out[k] = {**out.get(k, {}), **part} if isinstance(part, dict) else part
            elif k in FIELDS:
                out.setdefault(FIELDS[k], {})[k] = v
            else:
                out[k] = v  # not a field: extra="forbid" names it
        if not all(isinstance(out.get(p, {}), dict) for p in PARTS):
            return out  # a part that is not a mapping: its own error
        key = _job_key(out.get("job", {}))
        for name, value in JOB_DEFAULTS.get(key, {}).items():
            out.setdefault(FIELDS[name], {}).setdefault(name, value)
        config_text = out.get("model_source", {}).get("config_text")
        if config_text:
            try:
                fmt = _resolve_model(None, config_text, None).checkpoint_format
            except ValueError:
                fmt = None  # the config's own error is reported by model()
            if fmt:
                out.setdefault("formats", {})["weights_format"] = fmt
        return out

    # ---- flat names ----------------------------------------------------------------------------------
    def with_(self, **update: Any) -> Scenario:
        """A copy with these fields changed (flat names or whole parts), validated again."""
        return type(self).model_validate({**self.model_dump(), **update})

    def flat(self, exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
        """Every field by its flat name (what ``Scenario(**flat)`` takes back)."""
        return {k: v for p in PARTS for k, v in getattr(self, p).model_dump().items() if k not in exclude}

    # ---- derived objects ---------------------------------------------------------------------------
    def model(self) -> ModelArch:
        src = self.model_source
        return _resolve_model(src.preset, src.config_text, src.params)

    def selected_gpus(self) -> tuple[GPU, ...]:
        """The GPU chosen, else the catalog: GPUs, and the other accelerators when the scenario allows them."""
        gpu = self.parallelism.gpu
        return (get_gpu(gpu),) if gpu else catalog_gpus(self.pricing.allow_accelerators)

    @property
    def context_tokens(self) -> int:
        """Tokens a sequence holds at its longest: input + output for inference (the KV cache at the last
        token), the training sequence length otherwise."""
        r = self.request
        return r.input_tokens + r.output_tokens if self.job.mode == "inference" else r.sequence_tokens

    def warnings(self) -> list[str]:
        """Allowed but worth saying: a context longer than the model was trained for."""
        m = self.model()
        out = [m.checkpoint_note] if m.checkpoint_note else []
        par = self.parallelism
        if self.job.mode != "inference" and par.offload == "optimizer+params" and par.zero_stage != 3:
            out.append(
                f"CPU offload of parameters needs ZeRO stage 3; at stage {par.zero_stage} only the optimizer "
                "(with gradients and master weights) is offloaded."
            )
        if self.job.mode != "inference" and self.training.paged_optimizer and par.offload != "none":
            out.append(
                "A paged optimizer pages states that are on the GPU; with CPU offload they are in host RAM already, "
                "so paging changes nothing."
            )
        if self.job.mode == "inference" and (why := par.serving_ep_problem(m)):
            out.append(why)
        if self.context_tokens <= m.max_context_tokens:
            return out
        what = "input + output tokens" if self.job.mode == "inference" else "sequence length"
        return out + [
            f"{what} ({self.context_tokens:,}) is longer than {m.name}'s maximum context of "
            f"{m.max_context_tokens:,} tokens; the numbers assume the model is extended to it (e.g. RoPE scaling)."
        ]


PARTS: dict[str, type[Part]] = {name: f.annotation for name, f in Scenario.model_fields.items()}
FIELDS: dict[str, str] = {f: p for p, cls in PARTS.items() for f in cls.model_fields}  # flat name -> its part
assert len(FIELDS) == sum(len(c.model_fields) for c in PARTS.values()), "a field name is used by two parts"


def field_info(name: str) -> FieldInfo:
    """The declaration of a field by its flat name: default, bounds, description."""
    return PARTS[FIELDS[name]].model_fields[name]


def default_for(name: str, job: str | None = None) -> Any:
    """A field's default, for this job (interactive, batch, pretrain, finetune) where it depends on the job."""
    if job is not None and name in JOB_DEFAULTS.get(job, {}):
        return JOB_DEFAULTS[job][name]
    return field_info(name).get_default(call_default_factory=True)


def field_bounds(name: str) -> tuple[float | None, bool, float | None, bool]:
    """(low, low excluded, high, high excluded) of a numeric field, from its ge/gt/le/lt (the int of a union
    such as ``int | "max"`` included)."""
    info = field_info(name)
    metadata = list(info.metadata)
    for arg in get_args(info.annotation):
        metadata += [m for a in get_args(arg)[1:] for m in getattr(a, "metadata", [a])]
    lo = hi = None
    lo_open = hi_open = False
    for m in metadata:
        if isinstance(m, at.Ge | at.Gt):
            lo, lo_open = (m.ge, False) if isinstance(m, at.Ge) else (m.gt, True)
        elif isinstance(m, at.Le | at.Lt):
            hi, hi_open = (m.le, False) if isinstance(m, at.Le) else (m.lt, True)
    return lo, lo_open, hi, hi_open


def field_is_int(name: str) -> bool:
    """A count (int, int | None, int | 'max'), as opposed to a real number or a name."""
    ann = field_info(name).annotation
    args = get_args(ann)
    return ann is int or any(a is int or get_args(a)[:1] == (int,) for a in args)


def field_optional(name: str) -> bool:
    """May the field be None (no target, no traffic, any GPU)?"""
    return type(None) in get_args(field_info(name).annotation)


def field_choices(name: str) -> tuple | None:
    """The values a Literal field allows (None: not a choice)."""
    ann = field_info(name).annotation
    members = [ann] if get_origin(ann) is Literal else [a for a in get_args(ann) if a is not type(None)]
    if not members or any(get_origin(a) is not Literal for a in members):
        return None
    return tuple(v for a in members for v in get_args(a))


def _job_key(job: dict) -> str | None:
    try:
        return Job.model_validate({k: job[k] for k in ("mode", "serving") if k in job}).key
    except ValidationError:
        return None  # the job's own error is reported by its validation


@lru_cache(maxsize=64)
def _resolve_model(preset: str | None, config_text: str | None, params: int | None) -> ModelArch:
    if config_text is not None:
        return model_from_hf_config(config_text)
    if params is not None:
        return model_from_param_count(params)
    return get_preset(preset or DEFAULT_PRESET)
