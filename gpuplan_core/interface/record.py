"""One user input: the ``Input`` record, what a widget and a link need of it.

A record names the Scenario field it sets and keeps only what a widget and a link need: its key (the widget key
and the link parameter), label, widget kind, group, options and their labels, the unit conversion (``scale``), the
widget value that means "none", and the jobs it applies to. Its default, range and help are read from the field
(``scenario/parts.py``, ``deployment.py``), converted to the widget's unit. An input that sets no field (the job,
the use case, the pages' own inputs) states its own.

No streamlit import here (a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from decimal import Decimal
from typing import Any, Literal

from ..scenario.parts import Job
from ..scenario.scenario import default_for, field_bounds, field_info, field_is_int

Widget = Literal["select", "radio", "select_slider", "slider", "number", "toggle", "text"]

JOBS = {
    "interactive": "Interactive inference (chat, APIs)",
    "batch": "Batch inference (offline jobs)",
    "pretrain": "Pre-training",
    "finetune": "Fine-tuning",
}
INFERENCE = frozenset({"interactive", "batch"})
TRAINING = frozenset({"pretrain", "finetune"})
ALL_JOBS = INFERENCE | TRAINING
DEFAULT_JOB = Job().key
DEFAULT_SOURCE = "preset"
MAIN = "Scenario"

_UNSET: Any = object()


def plain(v: Any) -> str:
    """A number as a plain decimal (no exponent, no trailing .0), anything else as str."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e16:
        return str(int(v))
    text = repr(float(v))
    return format(Decimal(text), "f") if "e" in text and math.isfinite(v) else text


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def _unscaled(v: float, scale: float) -> float:
    """A field value in the widget's unit (2.0 s -> 2000.0 ms), without the float noise of the division."""
    return float(f"{v / scale:.12g}")


@dataclass(frozen=True)
class Input:
    key: str  # widget key and link parameter: public, never renamed
    label: str
    widget: Widget
    group: str = MAIN
    field: str | None = None  # the Scenario field this input sets (None: see ``to_fields``)
    options: Sequence | Callable[[], Sequence] | None = None
    labels: Mapping | Callable[[Any], str] | None = None  # option -> label shown and written to links
    step: float | None = None
    fmt: str | None = None  # number display format
    # A number's slider stops (natural steps: powers of two, log-spaced sizes), drawn under its number box; the box
    # still takes any value in range and the slider gains the value it holds (a link's in=3000 stays 3000).
    steps: Sequence[float] | None = None
    suffix: str = ""  # a unit an older link form wrote after the number (size_b=70B): read and dropped
    resolve: Callable[[str], Any] | None = None  # a choice's other names -> its option (a GPU's aliases: TPU v6e)
    scale: float = 1.0  # Scenario value = widget value x scale (ms -> s, billions -> count)
    none_when: Any = _UNSET  # the widget value that means "not set" (the field gets None)
    jobs: frozenset[str] = ALL_JOBS  # the jobs it applies to
    source: str | None = None  # the model source it applies to (model, size, Hugging Face id)
    page: str | None = None  # a page's own input (url path), else a sidebar input
    variant_of: str | None = None  # Compare: the A-side input this B-side input overrides
    job_labels: Mapping[str, str] = dc_field(default_factory=dict)
    short: str = ""  # name in "changed in closed groups"
    max_chars: int = 200
    to_fields: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None
    sets: tuple[str, ...] = ()  # the Scenario fields ``to_fields`` sets, when not ``field``
    checked_alone: str | None = None  # a bad value leaves only this field at its default; the note adds this
    # Read from the field when it has one; an input without a field (or a field whose default is None where the
    # widget cannot show none) states them:
    help: str = _UNSET
    default: Any = _UNSET
    lo: float | None = _UNSET
    hi: float | None = _UNSET
    whole: bool = _UNSET  # a whole number (held by a float widget; see gpuplan_ui/widgets.py)
    # derived: the least value that is not "none" (the field's ge/gt, in the widget's unit; lo is the widget's
    # minimum, which may be the "none" value below it), and whether the field excludes it (gt)
    least: float | None = dc_field(default=None, init=False)
    lo_open: bool = dc_field(default=False, init=False)
    stated: frozenset[str] = dc_field(default=frozenset(), init=False)  # what the record states, not the field

    def __post_init__(self) -> None:
        derived = self._from_field() if self.field else {}
        own = ("help", "default", "lo", "hi", "whole")
        object.__setattr__(self, "stated", frozenset(n for n in own if getattr(self, n) is not _UNSET))
        for name, fallback in zip(own, ("", None, None, None, False), strict=True):
            if getattr(self, name) is _UNSET:
                object.__setattr__(self, name, derived.get(name, fallback))
        object.__setattr__(self, "least", derived.get("least", self.lo))
        object.__setattr__(self, "lo_open", derived.get("lo_open", False))

    def _from_field(self) -> dict[str, Any]:
        info = field_info(self.field)
        out: dict[str, Any] = {"help": info.description or ""}
        defaults = {repr(default_for(self.field, j)): default_for(self.field, j) for j in sorted(self.jobs)}
        if len(defaults) != 1:
            raise ValueError(f"{self.key}: the field's default differs between its jobs; give it one input per job")
        value = next(iter(defaults.values()))
        if value is not None:
            out["default"] = self.widget_value(value)
        elif self.none_when is not _UNSET:
            out["default"] = self.none_when
        elif self.widget == "text":
            out["default"] = ""
        if self.widget in ("number", "slider"):
            least, lo_open, hi, _ = field_bounds(self.field)
            least, hi = (None if b is None else _unscaled(b, self.scale) for b in (least, hi))
            lo = min(least, self.none_when) if self.none_when is not _UNSET else least  # the widget's minimum
            out |= {"lo": lo, "hi": hi, "least": least, "lo_open": lo_open}
        out["whole"] = field_is_int(self.field) and self.scale == 1
        return out

    def field_names(self) -> tuple[str, ...]:
        return self.sets or ((self.field,) if self.field else ())

    # -- options and labels
    def option_list(self) -> list:
        o = self.options() if callable(self.options) else self.options
        return list(o or [])

    def label_of(self, option: Any) -> str:
        if self.labels is None:
            return plain(option)
        if callable(self.labels):
            return str(self.labels(option))
        return str(self.labels.get(option, option))

    def label_for(self, job: str) -> str:
        return self.job_labels.get(job, self.label)

    @property
    def choice(self) -> bool:
        return self.widget in ("select", "radio", "select_slider")

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Does this input take part in the scenario these values describe?"""
        if self.page is not None:
            return True
        if values.get("workload", DEFAULT_JOB) not in self.jobs:
            return False
        return self.source is None or values.get("src", DEFAULT_SOURCE) == self.source

    def allowed(self) -> str:
        """What is allowed, in words (for messages)."""
        if self.choice:
            shown = [self.label_of(o) for o in self.option_list()]
            return ", ".join(shown[:10]) + (" ..." if len(shown) > 10 else "")
        if self.widget == "toggle":
            return "true or false"
        if self.widget == "text":
            return f"text up to {self.max_chars} characters"
        return ("whole numbers " if self.whole else "") + self._range()

    def _range(self) -> str:
        none = f" ({plain(self.none_when)} = none)" if self.none_when is not _UNSET else ""
        above = " (not included)" if self.lo_open and not (none and same_value(self.none_when, self.least)) else ""
        return f"{plain(self.least)}{above} to {plain(self.hi)}{none}"

    # -- one value: parse from text (a link or a file), write as text
    def parse(self, raw: Any) -> tuple[Any, str | None]:
        """(value, None) or (value to use, a note). The value to use is the default when raw is not allowed."""
        text = str(raw)[:2000]
        shown = f"{self.key}={text[:40]!r}"
        if self.choice:
            for o in self.option_list():
                if text == self.label_of(o) or text == str(o):
                    return o, None
            if (other := self._resolved(text)) is not None:
                return other, None
            return self.default, f"{shown} is not allowed (allowed: {self.allowed()}); the default is used."
        if self.widget == "toggle":
            if isinstance(raw, bool):
                return raw, None
            if text.lower() in ("true", "false"):
                return text.lower() == "true", None
            return self.default, f"{shown} must be true or false; the default is used."
        if self.widget == "text":
            if len(text) > self.max_chars:
                return self.default, f"{self.key} is longer than {self.max_chars} characters; the default is used."
            return text, None
        if self.suffix and text.endswith(self.suffix):
            text = text.removesuffix(self.suffix)
        try:
            v = float(text.replace(",", "")) if not isinstance(raw, bool) else math.nan
        except ValueError:
            return self.default, f"{shown} is not a number (allowed: {self.allowed()}); the default is used."
        if not self.in_range(v):  # also rejects nan
            return self.default, f"{shown} is outside {self._range()}; the default is used."
        if self.whole and not v.is_integer():
            return float(round(v)), f"{shown} is not a whole number; {round(v)} is used."
        return v, None

    def slider_stops(self, value: Any) -> list[float]:
        """The slider's stops for a number with ``steps``: those in range, and ``value`` (the exact value the number
        box holds, which a link or a typed number may set between two stops), in order."""
        stops = {float(s) for s in self.steps or () if self.in_range(float(s))}
        if isinstance(value, int | float) and not isinstance(value, bool):
            stops.add(float(value))
        return sorted(stops)

    def _resolved(self, text: str) -> Any:
        """The option another name stands for (``resolve``), or None."""
        try:
            got = self.resolve(text) if self.resolve is not None else None
        except (KeyError, ValueError):
            return None
        return got if got in self.option_list() else None

    def means_none(self, value: Any) -> bool:
        """Is this the widget value that means "not set" ("0 = none", "Any GPU", "same as A")?"""
        return self.none_when is not _UNSET and same_value(value, self.none_when)

    def in_range(self, v: float) -> bool:
        if self.means_none(v):
            return True
        return (self.least < v if self.lo_open else self.least <= v) and v <= self.hi

    def link_value(self, value: Any) -> str:
        if self.choice:
            return self.label_of(value)
        if self.widget == "toggle":
            return "true" if value else "false"
        return plain(value)

    def shown(self, value: Any) -> str:
        """A value as a person reads it (the "changed in closed groups" line)."""
        if self.widget == "slider" and self.hi is not None and self.hi <= 1:
            return f"{value:.0%}"
        if self.widget == "number":
            return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"
        return self.link_value(value)

    def is_default(self, value: Any) -> bool:
        return same_value(value, self.default)

    # -- the Scenario field(s) it sets, and back
    def fields(self, value: Any, values: Mapping[str, Any]) -> dict[str, Any]:
        if self.to_fields is not None:
            return self.to_fields(value, values)
        if self.field is None:
            return {}
        return {self.field: self.field_value(value)}

    def field_value(self, value: Any) -> Any:
        """A widget value in the field's unit."""
        if self.means_none(value):
            return None
        if self.widget in ("number", "slider") or (self.widget == "select_slider" and self.scale != 1):
            v = float(value) * self.scale
            return round(v) if self.field and field_is_int(self.field) else v
        return value

    def widget_value(self, value: Any) -> Any:
        """A field value in the widget's unit (the inverse of ``field_value``)."""
        if isinstance(value, Mapping):  # your prices: the text a person writes
            return ", ".join(f"{k}={plain(v)}" for k, v in value.items())
        if self.widget in ("number", "slider"):
            return _unscaled(float(value), self.scale)
        if self.widget == "select_slider" and self.scale != 1:
            return _unscaled(float(value), self.scale)
        return value

    # -- the CLI flag that sets the same field (cli.py derives the flags from the Scenario's fields)
    @property
    def flag(self) -> str | None:
        if self.page is not None or self.field is None or self.field in NO_FLAG:
            return None
        return "--" + self.field.replace("_", "-")


# Fields the CLI sets by other flags (--preset, --config PATH, --params) or not yet (the engine reads your prices
# and your pricing file's use from the app's session).
NO_FLAG = frozenset({"preset", "config_text", "params", "your_prices", "price_source"})


@dataclass(frozen=True)
class Group:
    """A sidebar group. A lazy group builds its inputs only while open or while one of them holds a
    value other than its default (so a link never loses a value, and a group left alone costs nothing)."""

    title: str
    lazy: bool = True
    expanded: bool = False
