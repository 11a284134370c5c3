"""A benchmark result file a team ran on its own servers, read as one record per run, never a crash.

Formats read (``read_bench_file`` tells them apart by their content, not their name):

- **vLLM** ``vllm bench serve --save-result`` (vllm/benchmarks/serve.py) and the older
  ``benchmarks/benchmark_serving.py --save-result``: one JSON object per run (``request_rate`` a number or
  ``"inf"``, ``max_concurrency``, ``burstiness``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
  ``mean_ttft_ms``, ``mean_tpot_ms``, ``output_throughput``, and with details ``input_lens`` / ``output_lens``),
  or a JSON list of them.
- **SGLang** ``python -m sglang.bench_serving --output-file`` (python/sglang/bench_serving.py): JSON Lines, one
  run a line appended per run, the same keys as vLLM's plus ``random_input_len``, ``random_output_len``,
  ``random_range_ratio`` and ``dataset_name``; vLLM's ``--append-result`` writes the same form.
- **GenAI-Perf / AIPerf** ``profile_export_genai_perf.json`` (metrics as ``{"unit", "avg", "p50", ...}`` and the
  run's ``input_config``) or its ``.csv`` (``Metric,avg,...`` rows, then ``Metric,Value`` rows). The CSV does not
  say the load: it is given (``load_kind`` and ``load``).

A run is how its load was sent (a closed loop of N clients, Poisson or bursty arrivals at a rate, everything at
once), its lengths (fixed, uniform in a range, or long-tailed dataset lengths) and what was measured: mean time to
first token, mean time per output token, output tokens per second. Every bad run is reported (its line, the field,
what is allowed) and left out; the file does not say the model, GPU or layout, which the caller gives.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..common.data import DATA_DIR

SAMPLE_BENCH_FILE = DATA_DIR / "samples" / "vllm_bench_serve_synthetic.jsonl"  # SYNTHETIC (bench/make_calib_sample.py)
MAX_BENCH_BYTES = 20_000_000  # a vLLM file with per-request details of 10,000 requests is ~2 MB
FIXED_WITHIN = 0.02  # lengths whose shortest is within 2% of the longest are fixed
UNIFORM_FROM = 0.25  # a shortest-over-longest of at least this is a uniform range; below: dataset lengths
TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, "sec": 1e3}  # -> ms


class BenchRun(BaseModel):
    """One benchmark run as the client sent it and what it measured (times in ms as the tools print them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int = Field(ge=0, description="the run's line (JSON Lines, CSV) or position (1-based) in the file")
    label: str = Field(description="what the run is called in tables: its load")
    load_kind: Literal["concurrency", "request_rate", "burst"]
    load: float = Field(gt=0, description="clients (concurrency), requests per second, or inf (burst)")
    arrival: Literal["closed", "poisson", "bursty", "all_at_once"]
    requests: int = Field(ge=1, description="requests completed")
    input_tokens: int = Field(ge=1, description="the set prompt length (the longest of a uniform range)")
    output_tokens: int = Field(ge=1, description="the set output length (the longest of a uniform range)")
    lengths: Literal["fixed", "uniform", "chat"] = "fixed"
    length_spread: float = Field(0.0, ge=0, le=0.9)
    ttft_mean_ms: float | None = Field(None, ge=0)
    tpot_mean_ms: float | None = Field(None, ge=0)
    output_tokens_per_s: float | None = Field(None, ge=0)
    model_id: str | None = None  # as the file names it (vLLM's model_id), if it does
    engine: str | None = None  # the backend the file names, if it does


@dataclass
class BenchIssue:
    line: int  # the run's line or position in the file (0: the file as a whole)
    field: str
    message: str

    def __str__(self) -> str:
        where = f"run {self.line}" if self.line else "file"
        return f"{where}, {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


@dataclass
class BenchReport:
    """The good runs of a file and every bad run's issue; ``kind`` is the format it was read as."""

    kind: str
    runs: list[BenchRun]
    errors: list[BenchIssue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.runs) and not self.errors


class _Bad(ValueError):
    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field, self.message = field_name, message


def _number(d: dict, key: str, *, required: bool = False, lo: float = 0.0, allow_inf: bool = False) -> float | None:
    v = d.get(key)
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            raise _Bad(key, "missing; a number is required")
        return None
    if isinstance(v, str) and v.strip().lower() in ("inf", "infinity") and allow_inf:
        return math.inf
    if isinstance(v, bool):
        raise _Bad(key, f"{v!r} is not a number")
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise _Bad(key, f"{str(v)[:40]!r} is not a number") from None
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise _Bad(key, f"{v!r} is not a finite number")
    if x < lo:
        raise _Bad(key, f"{x:g} is below {lo:g}; allowed: {lo:g} or more")
    return x


def _shape_from_lens(ins: list, outs: list) -> tuple[str, float, int, int]:
    """(lengths, spread, set input, set output) from per-request lengths: fixed when all equal (within 2%),
    uniform in [(1 - spread) x longest, longest] when the shortest is at least a quarter of the longest, else
    dataset lengths around their means."""
    lo = min(min(ins) / max(ins), min(outs) / max(outs))
    if lo >= 1 - FIXED_WITHIN:
        return "fixed", 0.0, round(statistics.mean(ins)), round(statistics.mean(outs))
    if lo >= UNIFORM_FROM:
        return "uniform", min(0.9, round(1 - lo, 3)), int(max(ins)), int(max(outs))
    return "chat", 0.0, round(statistics.mean(ins)), round(statistics.mean(outs))


def _lengths(d: dict, completed: int) -> tuple[str, float, int, int]:
    ins, outs = d.get("input_lens"), d.get("output_lens")
    if isinstance(ins, list) and isinstance(outs, list) and ins and outs:
        if not all(isinstance(x, int | float) and x >= 1 for x in ins + outs):
            raise _Bad("input_lens", "every length must be a number of at least 1 token")
        return _shape_from_lens(ins, outs)
    dataset = str(d.get("dataset_name") or "").lower()
    if dataset == "random" and d.get("random_input_len") and d.get("random_output_len"):
        ratio = _number(d, "random_range_ratio") or 0.0
        if not 0 <= ratio <= 1:
            raise _Bad("random_range_ratio", f"{ratio:g} is not between 0 and 1")
        i, o = int(_number(d, "random_input_len", lo=1)), int(_number(d, "random_output_len", lo=1))
        return ("fixed", 0.0, i, o) if ratio >= 1 - FIXED_WITHIN else ("uniform", min(0.9, 1 - ratio), i, o)
    total_in = _number(d, "total_input_tokens", required=True, lo=1)
    total_out = _number(d, "total_output_tokens", required=True, lo=1)
    kind = "chat" if dataset in ("sharegpt", "sonnet", "burstgpt") else "fixed"
    return kind, 0.0, max(1, round(total_in / completed)), max(1, round(total_out / completed))


def _load(rate: float | None, conc: float | None, burstiness: float | None) -> dict[str, Any]:
    """The run's load, as BenchRun's keys (load_kind, load, arrival, label): a rate is an open loop (Poisson, or
    bursty for a gamma burstiness below 1); no rate (inf) with a concurrency cap is a closed loop of that many
    clients; neither is a burst."""
    if rate is not None and not math.isinf(rate):
        arrival = "bursty" if burstiness is not None and burstiness < 1 else "poisson"
        return {"load_kind": "request_rate", "load": rate, "arrival": arrival, "label": f"{rate:g} req/s"}
    if conc:
        label = f"{conc:g} client{'s' if conc != 1 else ''}"
        return {"load_kind": "concurrency", "load": conc, "arrival": "closed", "label": label}
    return {"load_kind": "burst", "load": math.inf, "arrival": "all_at_once", "label": "all at once"}


def _server_run(d: dict, line: int) -> BenchRun:
    """One vLLM or SGLang result object."""
    if not isinstance(d, dict):
        raise _Bad("", "a run must be a JSON object")
    completed = _number(d, "completed", required=True, lo=1)
    if completed != int(completed):
        raise _Bad("completed", f"{completed:g} is not a whole number of requests")
    rate = _number(d, "request_rate", allow_inf=True, lo=-math.inf)
    if rate is not None and rate <= 0:
        raise _Bad("request_rate", f"{rate:g}; allowed: above 0, or inf (every request at once)")
    conc = _number(d, "max_concurrency", lo=1)
    load = _load(rate, conc, _number(d, "burstiness"))
    lengths, spread, i, o = _lengths(d, int(completed))
    tpot = _number(d, "mean_tpot_ms")
    run = {
        "ttft_mean_ms": _number(d, "mean_ttft_ms"),
        "tpot_mean_ms": tpot if tpot is not None else _number(d, "mean_itl_ms"),
        "output_tokens_per_s": _number(d, "output_throughput"),
    }
    if all(v is None for v in run.values()):
        raise _Bad("mean_ttft_ms", "none of mean_ttft_ms, mean_tpot_ms, mean_itl_ms, output_throughput is given")
    model = d.get("model_id") or d.get("model")
    backend = d.get("backend") or d.get("endpoint_type")
    return BenchRun(
        line=line,
        **load,
        requests=int(completed),
        input_tokens=i,
        output_tokens=o,
        lengths=lengths,
        length_spread=spread,
        model_id=str(model) if model else None,
        engine=str(backend) if backend else None,
        **run,
    )


def _metric(d: dict, key: str, stat: str = "avg") -> float | None:
    """A GenAI-Perf metric ``{"unit": "ms", "avg": 12.3}`` in ms (times) or as it is (counts, rates)."""
    m = d.get(key)
    if m is None:
        return None
    if not isinstance(m, dict):
        raise _Bad(key, 'must be an object such as {"unit": "ms", "avg": 12.3}')
    v = _number(m, stat, lo=0)
    unit = str(m.get("unit") or "").lower()
    return v * TIME_UNITS[unit] if v is not None and unit in TIME_UNITS else v


def _genai_config(d: dict) -> tuple[float | None, float | None]:
    """(request rate, concurrency) from GenAI-Perf's ``input_config`` (flat in 0.0.x; under perf_analyzer's
    stimulus in later ones) or AIPerf's ``loadgen``."""
    cfg = d.get("input_config") or {}
    found: dict[str, Any] = {}

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("concurrency", "request_rate") and not isinstance(v, dict | list) and k not in found:
                    found[k] = v
                walk(v)

    walk(cfg)
    return _number(found, "request_rate"), _number(found, "concurrency", lo=1)


def _genai_run(d: dict, line: int, given: tuple[str, float] | None) -> BenchRun:
    rate, conc = _genai_config(d)
    if given is not None:
        rate, conc = (given[1], None) if given[0] == "request_rate" else (None, given[1])
    if rate is None and conc is None:
        raise _Bad("input_config", "the file does not say the load: give a concurrency or a request rate")
    load = _load(rate, conc, None)
    isl, osl = _metric(d, "input_sequence_length"), _metric(d, "output_sequence_length")
    if not isl or not osl:
        raise _Bad("input_sequence_length" if not isl else "output_sequence_length", "missing or 0; tokens needed")
    count = _metric(d, "request_count") or 1.0
    return BenchRun(
        line=line,
        **load,
        requests=max(1, int(count)),
        input_tokens=max(1, round(isl)),
        output_tokens=max(1, round(osl)),
        ttft_mean_ms=_metric(d, "time_to_first_token"),
        tpot_mean_ms=_metric(d, "inter_token_latency"),
        output_tokens_per_s=_metric(d, "output_token_throughput"),
        engine="genai-perf",
    )


_CSV_METRICS = {  # GenAI-Perf CSV row label (before its unit) -> the JSON export's key
    "time to first token": "time_to_first_token",
    "inter token latency": "inter_token_latency",
    "output sequence length": "output_sequence_length",
    "input sequence length": "input_sequence_length",
    "output token throughput": "output_token_throughput",
    "request count": "request_count",
}


def _genai_csv(text: str) -> dict:
    """The GenAI-Perf CSV as its JSON export's metrics (``avg`` from the stats block, ``Value`` from the rest)."""
    out: dict = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 2 or row[0].strip().lower() == "metric":
            continue
        label, _, unit = row[0].strip().partition("(")
        key = _CSV_METRICS.get(label.strip().lower())
        if key:
            out[key] = {"unit": unit.rstrip(")").strip().lower(), "avg": row[1].strip().replace(",", "")}
    return out


def _records(text: str) -> tuple[str, list[tuple[int, Any]]]:
    """(format, [(line, object)]) of a JSON, JSON Lines or CSV text."""
    stripped = text.strip()
    try:
        doc = json.loads(stripped)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict):
        if "time_to_first_token" in doc or "input_config" in doc:
            return "genai-perf json", [(1, doc)]
        return "vllm json", [(1, doc)]
    if isinstance(doc, list):
        return "vllm json", list(enumerate(doc, 1))
    if stripped.startswith(("{", "[")):
        rows: list[tuple[int, Any]] = []
        for n, raw in enumerate(text.splitlines(), 1):
            if raw.strip():
                try:
                    rows.append((n, json.loads(raw)))
                except json.JSONDecodeError as exc:
                    rows.append((n, _Bad("", f"not valid JSON ({exc.msg} at column {exc.colno})")))
        return "json lines", rows
    if "," in stripped.split("\n", 1)[0]:
        return "genai-perf csv", [(1, _genai_csv(text))]
    return "unknown", []


def read_bench_file(data: bytes | str, load: tuple[str, float] | None = None) -> BenchReport:
    """Every run of a benchmark result file, and every bad run's issue (line, field, what is allowed). ``load``:
    (``"concurrency"`` or ``"request_rate"``, value) for a file that does not say it (GenAI-Perf's CSV)."""
    if isinstance(data, bytes):
        if len(data) > MAX_BENCH_BYTES:
            return BenchReport("unknown", [], [BenchIssue(0, "", f"over {MAX_BENCH_BYTES:,} bytes")])
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return BenchReport("unknown", [], [BenchIssue(0, "", "not UTF-8 text")])
    kind, records = _records(data)
    if kind == "unknown" or not records:
        allowed = "vLLM bench serve JSON, SGLang bench_serving JSON Lines, GenAI-Perf / AIPerf JSON or CSV"
        return BenchReport(kind, [], [BenchIssue(0, "", f"not a benchmark result file; allowed: {allowed}")])
    runs, errors = [], []
    for line, obj in records:
        try:
            if isinstance(obj, _Bad):
                raise obj
            runs.append(_genai_run(obj, line, load) if kind.startswith("genai") else _server_run(obj, line))
        except _Bad as bad:
            errors.append(BenchIssue(line, bad.field, bad.message))
        except ValidationError as exc:  # a record's bounds: the field and what is allowed
            errors += [BenchIssue(line, ".".join(map(str, e["loc"])), e["msg"]) for e in exc.errors()]
    return BenchReport(kind, runs, errors)
