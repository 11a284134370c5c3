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
from . import cli_text
from .inputs import INT_FIELDS, SIDEBAR


def add_cli_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per input that sets one Scenario field, in the field's own unit (seconds, tokens, counts),
    named after the field (``--ttft-target-s``). Omitted flags leave the Scenario's default."""
    for inp in SIDEBAR:
        if inp.flag is None:
            continue
        opts = inp.option_list() if inp.choice else []
        unit = f" [{', '.join(opts)}]" if opts and all(isinstance(o, str) for o in opts) else ""
        text = f"{inp.help}{unit}".replace("%", "%%")
        parser.add_argument(inp.flag, *inp.cli_aliases, dest=inp.field, default=None, help=text)


def cli_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The flags given, as Scenario fields (pydantic validates them and names the field when one is wrong).
    Counts accept a decimal exponent (``--spec-draft-params 1e9``)."""
    out: dict[str, Any] = {}
    for inp in SIDEBAR:
        raw = getattr(args, inp.field, None) if inp.flag else None
        if raw is None:
            continue
        if inp.whole or INT_FIELDS.get(inp.field):
            try:
                f = float(raw)
                raw = int(f) if f.is_integer() else raw
            except (ValueError, OverflowError):
                pass
        out[inp.field] = raw
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage + exit 2; keep exit 2, one clear line
        self.exit(2, f"error: {message}\n")


def _add_scenario_options(p: argparse.ArgumentParser) -> None:
    """The model source and the job by hand; every other scenario flag mirrors an app input and comes from
    its record in ``inputs.py`` (same help, the Scenario field's name and unit)."""
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", help="bundled model preset, e.g. Llama-3.1-8B (the default)")
    src.add_argument("--config", help="path to a Hugging Face config.json")
    src.add_argument("--params", help="bare parameter count, e.g. 7e9 (derives an approximate dense shape)")
    p.add_argument("--mode", default="inference", help="inference | training | finetune")
    p.add_argument("--serving", default=None, help="inference: interactive | batch")
    add_cli_flags(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


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
        if name in ("cost", "plan"):
            c.add_argument("--pricing", default=None, help="path to a pricing CSV (default: bundled data/pricing.csv)")
        if name == "plan":
            c.add_argument(
                "--explore-formats",
                action="store_true",
                help="also search FP8 and INT4 weights (a quality trade-off); default: only --weights-format",
            )
        if name == "serve":
            load = c.add_mutually_exclusive_group(required=True)
            load.add_argument("--concurrency", type=int, help="clients, each sending its next request when one ends")
            load.add_argument("--request-rate", type=float, help="requests per second arriving at random (Poisson)")
    cal = sub.add_parser("calibrate", help="predicted vs measured on data/measurements.csv")
    cal.add_argument("--json", action="store_true")
    cal.add_argument("--markdown", action="store_true", help="the error per regime as the README's table")
    return parser


def _scenario_from_args(args: argparse.Namespace) -> dict:
    out = {"mode": args.mode, **cli_fields(args)}
    if args.serving is not None:
        out["serving"] = args.serving
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
    else:
        out["preset"] = args.preset or "Llama-3.1-8B"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "calibrate":
            result = api.calibration_report()
            text = cli_text.calibration_markdown(result) if args.markdown else cli_text.format_calibration(result)
        else:
            scenario = _scenario_from_args(args)
            pricing = getattr(args, "pricing", None)
            handlers = {
                "memory": api.memory_report,
                "perf": lambda s: api.perf_report(s),
                "cost": lambda s: api.cost_report(s, pricing_path=pricing),
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
