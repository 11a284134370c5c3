"""The CLI's JSON keys stay what they were before the reports became typed models: every key path of
``cost``, ``serve``, ``calibrate`` and ``plan --json`` (lists as ``[]``), recorded in cli_keys.json from the
dict-building code they replaced. A key that disappears breaks a user's script; one that appears is a change
to document (README, "JSON output") and to record here with ``python tests/core/interface/test_cli_keys.py``."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from gpuplan_core.interface.cli import main

RECORDED = Path(__file__).with_name("cli_keys.json")
# The questions as they were recorded: the scenario's defaults have since become the app's (10,000 requests a day,
# 2 s / 0.1 s targets, micro-batch 8, full recompute), so the flags say what was then left out.
NO_TRAFFIC = ["--requests-per-day", "none", "--ttft-target-s", "none", "--tpot-target-s", "none"]
TRAIN_BEFORE = ["--batch", "1", "--recompute", "none"]
COMMANDS = {
    "cost_inference_traffic": shlex.split(
        "cost --preset Llama-3.1-8B --requests-per-day 20000 --ttft-target-s 2 --tpot-target-s none"
    ),
    "cost_inference_growth": shlex.split(
        "cost --preset Llama-3.1-8B --requests-per-day 20000 --monthly-growth 0.1 --spike-month 6"
    ),
    "cost_inference": ["cost", "--preset", "Llama-3.1-8B", *NO_TRAFFIC],
    "cost_training": [
        *shlex.split("cost --params 7e9 --mode training --training-tokens 1e12 --mfu 0.5 --gpu H100"),
        *TRAIN_BEFORE,
    ],
    "serve_rate_targets": shlex.split(
        "serve --preset Llama-3.1-8B --gpu H100 --request-rate 2 "
        "--ttft-target-s 2 --tpot-target-s 0.1 --requests-per-day 50000"
    ),
    "serve_targets_no_traffic": shlex.split(
        "serve --preset Llama-3.1-8B --gpu H100 --request-rate 2 "
        "--ttft-target-s 2 --tpot-target-s none --requests-per-day none"
    ),
    "serve_concurrency": ["serve", "--preset", "Llama-3.1-8B", "--gpu", "H100", "--concurrency", "8", *NO_TRAFFIC],
    "calibrate": ["calibrate"],
    "plan_inference": shlex.split(
        "plan --preset Llama-3.1-8B --requests-per-day 20000 --tpot-target-s 0.05 --ttft-target-s none"
    ),
    "plan_training": ["plan", "--params", "7e9", "--mode", "training", "--training-tokens", "1e12", *TRAIN_BEFORE],
}
DATA_KEYED = ("serving_regimes",)  # maps whose keys are data (regime names), not the interface


def key_paths(x, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(prefix + k)
            if prefix + k not in DATA_KEYED:
                out |= key_paths(v, f"{prefix}{k}.")
    elif isinstance(x, list):
        for v in x:
            out |= key_paths(v, f"{prefix}[].")
    return out


def cli_json(argv: list[str]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("name", COMMANDS)
def test_cli_json_keys_are_unchanged(name):
    recorded = set(json.loads(RECORDED.read_text())[name])
    now = key_paths(cli_json(COMMANDS[name]))
    assert not recorded - now, f"keys gone: {sorted(recorded - now)}"
    assert not now - recorded, f"new keys (document them, then record): {sorted(now - recorded)}"


if __name__ == "__main__":  # record today's keys
    RECORDED.write_text(json.dumps({n: sorted(key_paths(cli_json(a))) for n, a in COMMANDS.items()}, indent=1) + "\n")
    print(f"recorded {RECORDED}", file=sys.stderr)
