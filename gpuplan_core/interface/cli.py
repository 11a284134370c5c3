"""Command line: ``python -m gpuplan_core memory|perf|calibrate|cost|plan ...``.

Bad arguments exit 2 with one line naming the field and what is allowed; never a traceback.
The --json output is the stable interface documented in the README.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import api
from ..common.errors import describe
from ..perf.replica import DEFAULT_GPU
from ..scenario.scenario import (
    FIELDS,
    JOB_DEFAULTS,
    Scenario,
    default_for,
    field_bounds,
    field_choices,
    field_info,
    field_is_int,
    field_optional,
)
from . import cli_text
from .record import NO_FLAG, plain

# Flags kept under an older name too.
ALIASES = {"prefix_cache_fraction": ("--prefix-cache",), "max_num_batched_tokens": ("--max-batched-tokens",)}
# Values a flag takes beside its field's choices, and the fields each sets: --recompute auto searches the policy
# (--recompute-auto true, the older spelling, still works); --recompute none|selective|full keeps the one given.
FLAG_VALUES = {"recompute": {"auto": {"recompute_auto": True}}}
FLAG_DEFAULTS = {"recompute": "auto"}  # what a flag reads as when not given, where a FLAG_VALUES value is it
NONE = "none"  # the value of a flag that sets a field to None (--ttft-target-s none: no first-token target)


def flag_fields() -> tuple[str, ...]:
    """The Scenario fields with a flag of their own: all but the model source (--preset, --config PATH, --params)
    and the pricing choices the CLI does not read yet."""
    return tuple(f for f in FIELDS if f not in NO_FLAG)


def add_cli_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per Scenario field, in the field's own unit (seconds, tokens, counts), named after it
    (``--ttft-target-s``), with its description as help. Omitted flags leave the Scenario's default."""
    for name in flag_fields():
        info = field_info(name)
        choices = field_choices(name)
        choices = (*FLAG_VALUES.get(name, {}), *choices) if choices else choices
        extra = [", ".join(map(str, choices))] if choices else []
        if field_optional(name):
            extra.append(f"{NONE}: not set")
        lo, _, hi, _ = field_bounds(name)
        if lo is not None and hi is not None:
            extra.append(f"{plain(lo)} to {plain(hi)}")
        text = (info.description or name) + (f" [{'; '.join(extra)}]" if extra else "")
        per_job = [f"{job}: {d[name]}" for job, d in JOB_DEFAULTS.items() if name in d]
        shown = [str(default_for(name))] if default_for(name) not in (None, {}) else []
        shown = [FLAG_DEFAULTS[name]] if name in FLAG_DEFAULTS else shown
        text += f" (default: {'; '.join(shown + per_job)})" if shown or per_job else ""
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, *ALIASES.get(name, ()), dest=name, default=None, help=text.replace("%", "%%"))


def cli_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The flags given, as Scenario fields (pydantic validates them and names the field when one is wrong).
    Counts accept a decimal exponent (``--spec-draft-params 1e9``); ``none`` clears a field that may be None."""
    out: dict[str, Any] = {}
    for name in flag_fields():
        raw = getattr(args, name, None)
        if raw is None:
            continue
        if raw.strip().lower() == NONE and field_optional(name):
            out[name] = None
            continue
        if (fields := FLAG_VALUES.get(name, {}).get(raw.strip().lower())) is not None:
            out = {**fields, **out}  # a flag of the field itself (--recompute-auto) given too wins
            continue
        if field_is_int(name):
            try:
                f = float(raw)
                raw = int(f) if f.is_integer() else raw
            except (ValueError, OverflowError):
                pass
        out[name] = raw
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage + exit 2; keep exit 2, one clear line
        self.exit(2, f"error: {message}\n")


def _add_scenario_options(p: argparse.ArgumentParser) -> None:
    """The model source by hand (a config is read from a file); every other flag is a Scenario field's."""
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", help=f"bundled model preset (default: {default_for('preset')})")
    src.add_argument("--config", help="path to a Hugging Face config.json")
    src.add_argument("--params", help="bare parameter count, e.g. 7e9 (derives an approximate dense shape)")
    add_cli_flags(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _add_deployment_options(cal: argparse.ArgumentParser) -> None:
    """calibrate --from FILE: your own benchmark file, and what it does not say (the model, GPU, layout, engine)."""
    cal.add_argument(
        "--from",
        dest="from_file",
        metavar="FILE",
        help="your benchmark result file (vLLM bench serve JSON or JSON Lines, SGLang bench_serving JSON Lines, "
        "GenAI-Perf / AIPerf JSON or CSV): replay each run, fit your deployment's constants",
    )
    cal.add_argument("--model", help="the model preset the runs served (default: the file's model_id, if a preset)")
    cal.add_argument("--gpu", help=f"the GPU the runs served on (default: {DEFAULT_GPU})")
    cal.add_argument("--tp", type=int, help="tensor parallel of the replica (default: 1)")
    cal.add_argument("--engine", choices=("vllm", "sglang", "trtllm"), help="the serving engine (default: vllm)")
    load = cal.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=float, help="the load, for a file that does not say it (GenAI-Perf CSV)")
    load.add_argument("--request-rate", type=float, help="the load in requests/s, for a file that does not say it")


def _calibrate_from(args: argparse.Namespace):
    """calibrate --from FILE: the report, or ValueError naming each bad run (exit 2, nothing fitted)."""
    path = Path(args.from_file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"from: cannot read {args.from_file!r} ({exc.strerror})") from None
    given = ("concurrency", args.concurrency) if args.concurrency else None
    given = ("request_rate", args.request_rate) if args.request_rate else given
    r = api.calibrate_deployment(
        data, path.name, model=args.model, gpu=args.gpu, tp=args.tp, engine=args.engine, load=given
    )
    if r.issues or not r.ok:
        raise ValueError(f"from: {path.name} ({r.file_format}): " + "; ".join(r.issues or ["no run"]))
    return r


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m gpuplan_core", description="gpuplan sizing engine")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    helps = {
        "memory": "memory budget and fit per GPU",
        "perf": "prefill/decode roofline, TTFT, TPOT, throughput",
        "cost": "costs per offer",
        "plan": "ranked recommendation",
        "serve": "one replica under traffic: continuous batching, TTFT/TPOT percentiles, capacity",
    }
    for name, text in helps.items():
        c = sub.add_parser(name, help=text)
        _add_scenario_options(c)
        if name in ("cost", "plan", "memory"):
            c.add_argument("--pricing", default=None, help="path to a pricing CSV (default: bundled data/pricing.csv)")
        if name == "memory":
            c.add_argument(
                "--at-answer",
                action="store_true",
                help="budget the layout the answer runs (the plan's pick) and add each GPU type's count from the "
                "layout search (implied by --pricing); default: the scenario's own layout",
            )
        if name == "plan":
            c.add_argument(
                "--explore-formats",
                action="store_true",
                help="also search FP8 and INT4 weights (a quality trade-off); default: only --weights-format",
            )
        if name == "serve":
            load = c.add_mutually_exclusive_group(required=True)
            load.add_argument("--concurrency", type=int, help="clients, each sending its next request when one ends")
            rate_help = "requests per second arriving at random (--arrival poisson or bursty)"
            load.add_argument("--request-rate", type=float, help=rate_help)
    cal = sub.add_parser(
        "calibrate", help="predicted vs measured on data/measurements.csv, or on your own benchmark file (--from)"
    )
    cal.add_argument("--json", action="store_true")
    _add_deployment_options(cal)
    cal.add_argument("--markdown", action="store_true", help="the error per regime as the README's table")
    cal.add_argument(
        "--write-serving",
        action="store_true",
        help="simulate every published serving run again and store the predictions (data/serving_calibration.csv)",
    )
    return parser


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """The Scenario the flags describe: the Scenario's defaults for every flag not given."""
    out = cli_fields(args)
    if args.config:
        try:
            out["config_text"] = Path(args.config).read_text()
        except OSError as exc:
            raise ValueError(f"config: cannot read {args.config!r} ({exc.strerror})") from None
    elif args.params:
        try:
            out["params"] = int(float(args.params))
        except ValueError:
            raise ValueError(f"params: {args.params!r} is not a number (e.g. 7e9)") from None
    elif args.preset:
        out["preset"] = args.preset
    return Scenario(**out)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "calibrate" and args.write_serving:
            print(f"{api.write_serving_calibration():,} serving points written to data/serving_calibration.csv")
            return 0
        if args.command == "calibrate" and args.from_file:
            result = _calibrate_from(args)
            text = cli_text.format_deployment(result)
        elif args.command == "calibrate":
            result = api.calibration_report()
            text = cli_text.calibration_markdown(result) if args.markdown else cli_text.format_calibration(result)
        else:
            scenario = scenario_from_args(args)
            pricing = getattr(args, "pricing", None)
            handlers = {
                "memory": lambda s: api.memory_report(
                    s, pricing_path=pricing, search=args.at_answer or pricing is not None
                ),
                "perf": lambda s: api.perf_report(s),
                "cost": lambda s: api.cost_report(s, pricing_path=pricing, with_answer=args.json),
                "plan": lambda s: api.answer_report(s, pricing_path=pricing, explore_formats=args.explore_formats),
                "serve": lambda s: api.serve_report(s, args.concurrency, args.request_rate),
            }
            result = handlers[args.command](scenario)
            text = cli_text.format_report(args.command, result)  # plan: the one answer (ScenarioAnswer)
    except (ValueError, ValidationError) as exc:
        print(f"error: {describe(exc)}", file=sys.stderr)
        return 2
    try:
        if getattr(args, "json", False):
            data = result.to_json() if hasattr(result, "to_json") else result
            data = data.model_dump() if hasattr(data, "model_dump") else data
            print(json.dumps(data, indent=2, sort_keys=False))
        else:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        sys.stderr.close()
        return 0
    return 0
