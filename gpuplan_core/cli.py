"""Command line: ``python -m gpuplan_core memory|perf|calibrate|cost|plan ...``.

Bad arguments exit 2 with one line naming the field and what is allowed; never a traceback.
The --json output is the stable interface documented in the README.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from . import api
from .errors import describe
from .formats import FORMATS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage + exit 2; keep exit 2, one clear line
        self.exit(2, f"error: {message}\n")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--preset", help="bundled model preset, e.g. Llama-3.1-8B")
    src.add_argument("--config", help="path to a Hugging Face config.json")
    src.add_argument("--params", help="bare parameter count, e.g. 7e9 (derives an approximate dense shape)")
    p.add_argument("--mode", default="inference", help="inference | training | finetune")
    p.add_argument("--method", default="full", help="finetune method: full | lora | qlora")
    p.add_argument("--zero-stage", type=int, default=0, help="ZeRO stage 0-3 (training)")
    p.add_argument("--accounting", default="zero", help="zero (16 B/param) | hf (18 B/param)")
    p.add_argument("--optimizer", default="adamw", help="adamw | adam8bit | sgd")
    p.add_argument("--recompute", default="none", help="activation recompute: none | selective | full")
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--weights-format", default="bf16", help=f"one of {', '.join(FORMATS)}")
    p.add_argument("--kv-format", default="bf16")
    p.add_argument("--context", type=int, default=4096, help="tokens per sequence")
    p.add_argument("--batch", default="1", help="sequences at once")
    p.add_argument("--gpu", help="GPU name (aliases accepted); default: every catalog GPU")
    p.add_argument("--gpus", type=int, default=1, help="GPU count")
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel degree")
    p.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree")
    p.add_argument("--memory-utilization", type=float, default=None, help="share of usable VRAM to fill (0.5-1.0)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m gpuplan_core", description="gpuplan sizing engine")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    mem = sub.add_parser("memory", help="memory budget and fit per GPU")
    _add_model_options(mem)
    perf = sub.add_parser("perf", help="prefill/decode roofline, TTFT, TPOT, throughput")
    _add_model_options(perf)
    perf.add_argument("--input-tokens", type=int, default=None, help="prompt tokens (default: context - output)")
    perf.add_argument("--output-tokens", type=int, default=256)
    perf.add_argument("--prefix-cache", type=float, default=None, help="share of the prompt already cached (0-0.99)")
    perf.add_argument("--spec-draft-params", default=None, help="speculative decoding: draft model size, e.g. 1e9")
    perf.add_argument("--spec-tokens", type=int, default=None)
    perf.add_argument("--spec-acceptance", type=float, default=None)
    for name in ("cost", "plan"):
        c = sub.add_parser(name, help="costs per offer" if name == "cost" else "ranked recommendation")
        _add_model_options(c)
        c.add_argument("--input-tokens", type=int, default=None)
        c.add_argument("--output-tokens", type=int, default=256)
        c.add_argument("--training-tokens", type=float, default=None, help="tokens to train on (training/finetune)")
        c.add_argument("--mfu", type=float, default=None, help="model FLOPs utilization for training (0-1)")
        c.add_argument("--requests-per-day", type=float, default=None)
        c.add_argument("--pricing", default=None, help="path to a pricing CSV (default: bundled data/pricing.csv)")
        c.add_argument("--billing", default=None, help="on_demand | spot | reserved | serverless")
        c.add_argument("--provider", default=None)
        c.add_argument("--ttft-target-s", type=float, default=None)
        c.add_argument("--tpot-target-s", type=float, default=None)
        c.add_argument("--deadline-hours", type=float, default=None, help="training completion target")
    cal = sub.add_parser("calibrate", help="predicted vs measured on data/measurements.csv")
    cal.add_argument("--json", action="store_true")
    return parser


def _scenario_from_args(args: argparse.Namespace) -> dict:
    out = {
        "mode": args.mode,
        "method": args.method,
        "weights_format": args.weights_format,
        "kv_format": args.kv_format,
        "context_tokens": args.context,
        "batch": args.batch,
        "gpus": args.gpus,
        "tp": args.tp,
        "pp": args.pp,
        "zero_stage": args.zero_stage,
        "accounting": args.accounting,
        "optimizer": args.optimizer,
        "recompute": args.recompute,
        "lora_rank": args.lora_rank,
        "gpu": args.gpu,
    }
    if args.memory_utilization is not None:
        out["memory_utilization"] = args.memory_utilization
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
    if getattr(args, "prefix_cache", None) is not None:
        out["prefix_cache_fraction"] = args.prefix_cache
    if getattr(args, "spec_draft_params", None) is not None:
        try:
            out["spec_draft_params"] = int(float(args.spec_draft_params))
        except ValueError:
            raise ValueError(f"spec_draft_params: {args.spec_draft_params!r} is not a number") from None
    for extra in (
        "spec_tokens",
        "spec_acceptance",
        "input_tokens",
        "output_tokens",
        "training_tokens",
        "mfu",
        "requests_per_day",
        "billing",
        "ttft_target_s",
        "tpot_target_s",
        "deadline_hours",
        "provider",
    ):
        val = getattr(args, extra, None)
        if val is not None:
            out[extra] = val
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "calibrate":
            result = api.calibration_report()
            text = api.format_calibration(result)
        else:
            scenario = _scenario_from_args(args)
            pricing = getattr(args, "pricing", None)
            handlers = {
                "memory": api.memory_report,
                "perf": lambda s: api.perf_report(s),
                "cost": lambda s: api.cost_report(s, pricing_path=pricing),
                "plan": lambda s: api.plan_report(s, pricing_path=pricing),
            }
            result = handlers[args.command](scenario)
            text = api.format_report(args.command, result)
    except (ValueError, ValidationError) as exc:
        print(f"error: {describe(exc)}", file=sys.stderr)
        return 2
    try:
        if getattr(args, "json", False):
            print(json.dumps(result, indent=2, sort_keys=False))
        else:
            print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        sys.stderr.close()
        return 0
    return 0
