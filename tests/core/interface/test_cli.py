"""The command line: stable JSON keys, exit 2 with a named field on bad input, never a traceback."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan_core.perf.calibration import calibration_table, median_abs_error
from tests.configs import QWEN2_5_7B_CONFIG

ROOT = Path(__file__).resolve().parents[3]


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run(*args):
    """In-process (fast); test_module_entry_point checks the real ``python -m`` once."""
    import contextlib
    import io

    from gpuplan_core.interface.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse errors
            code = exc.code
    return Result(code, out.getvalue(), err.getvalue())


def test_module_entry_point():
    p = subprocess.run(
        [sys.executable, "-m", "gpuplan_core", "memory", "--input-tokens", "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 2 and "input_tokens" in p.stderr and "Traceback" not in p.stderr


def test_memory_json_has_the_documented_keys():
    p = run(*shlex.split("memory --preset Llama-3.1-8B --input-tokens 8000 --output-tokens 192 --batch 4 --json"))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    for key in (
        "params_total",
        "params_active",
        "kv_cache_bytes_per_token",
        "components",
        "total_bytes",
        "per_gpu_bytes",
        "scope",
        "gpus",
    ):
        assert key in r
    assert r["params_total"] == 8_030_261_248
    assert r["kv_cache_bytes_per_token"] == 131_072
    assert r["components"]["KV cache"] == 131_072 * (8000 + 192) * 4  # bytes/token x (input + output) x sequences
    assert (
        r["per_gpu_bytes"] == sum(r["components"].values())
        or abs(r["per_gpu_bytes"] - sum(r["components"].values())) <= 5
    )
    h100 = next(g for g in r["gpus"] if g["gpu"] == "H100-SXM")
    assert set(h100) >= {"fits", "min_gpus", "max_batch"}
    assert h100["fits"] is True


def test_memory_training_accountings_from_cli():
    for acc, gb in (("zero", 112), ("hf", 126)):
        p = run("memory", "--params", "7e9", "--mode", "training", "--accounting", acc, "--json")
        assert json.loads(p.stdout)["budgets"]["model states"] == gb * 10**9


def test_memory_config_file(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(QWEN2_5_7B_CONFIG))
    r = json.loads(run("memory", "--config", str(cfg), "--json").stdout)
    assert r["params_total"] == 7_615_616_512
    assert r["kv_cache_bytes_per_token"] == 57_344


@pytest.mark.parametrize(
    "args,field",
    [
        (["--input-tokens", "-5"], "input_tokens"),
        (["--output-tokens", "999999999999"], "output_tokens"),
        (["--input-tokens", "9000000", "--output-tokens", "2000000"], "input_tokens + output_tokens"),
        (["--sequence-tokens", "0", "--mode", "training"], "sequence_tokens"),
        (["--batch", "lots"], "batch"),
        (["--weights-format", "int3"], "weights_format"),
        (["--gpu", "H900"], "gpu"),
        (["--tp", "64", "--gpus", "64"], "tp"),
        (["--params", "seven"], "params"),
        (["--config", "/nonexistent/config.json"], "config"),
        (["--mode", "dreaming"], "mode"),
        (["--gpus", "3", "--tp", "2"], "gpus"),
        (["--preset", "GPT-9"], "preset"),
    ],
)
def test_bad_arguments_exit_2_naming_the_field(args, field):
    p = run("memory", *args)
    assert p.returncode == 2
    assert field in p.stderr
    assert "Traceback" not in p.stderr + p.stdout


def test_bad_json_config_is_a_clear_error(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text("{oops")
    p = run("memory", "--config", str(cfg))
    assert p.returncode == 2 and "not valid JSON" in p.stderr and "Traceback" not in p.stderr


def test_perf_json_and_calibrate():
    p = run(
        *shlex.split("perf --preset Llama-3.1-8B --gpu H100 --input-tokens 2048 --output-tokens 128 --batch max --json")
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["batch"] == r["max_batch"]
    for k in ("ttft_s", "tpot_s", "decode_tokens_per_s_per_sequence", "output_tokens_per_s", "compute_bound_batch"):
        assert isinstance(r[k], (int, float))
    # a decode step streams every weight but the input embedding table, of which it gathers one row per sequence:
    # (8,030,261,248 - 128,256 x 4,096) x 2 bytes + batch x 4,096 x 2 bytes
    assert r["decode"]["weight_bytes"] == (8_030_261_248 - 128_256 * 4096) * 2 + r["batch"] * 4096 * 2
    c = run("calibrate", "--json")
    assert c.returncode == 0
    cal = json.loads(c.stdout)
    assert cal["median_abs_error"] == median_abs_error(calibration_table())  # the CLI reports what the core computes
    assert {r["regime"] for r in cal["regimes"]} >= {"Ampere · 16-bit · decode", "Hopper · FP8 · throughput"}


@pytest.mark.parametrize(
    "args,field",
    [
        (["--output-tokens", "0"], "output_tokens"),
        (["--prefix-cache", "1.5"], "prefix_cache_fraction"),
        (["--spec-acceptance", "2"], "spec_acceptance"),
    ],
)
def test_perf_bad_arguments(args, field):
    p = run("perf", *args)
    assert p.returncode == 2 and field in p.stderr


def test_cost_and_plan_json():
    c = run(*shlex.split("cost --params 7e9 --mode training --training-tokens 1e12 --mfu 0.5 --gpu H100 --json"))
    assert c.returncode == 0, c.stderr
    r = json.loads(c.stdout)
    assert r["gpu_hours"] and r["wall_hours"]
    assert all({"run_cost_usd", "monthly_always_on_usd"} <= set(o) for o in r["offers"])
    p = run("plan", "--preset", "Llama-3.1-8B", "--requests-per-day", "20000", "--tpot-target-s", "0.05", "--json")
    assert p.returncode == 0, p.stderr
    plan = json.loads(p.stdout)
    assert plan["picks"] and all(x["why"] for x in plan["picks"])


def test_the_cli_flags_mirror_the_app_inputs():
    """Every input that sets one Scenario field has a flag named after the field, with the input's help."""
    from gpuplan_core.interface.cli import build_parser
    from gpuplan_core.interface.inputs import SIDEBAR

    sub = build_parser()._subparsers._group_actions[0].choices["plan"]
    flags = {o: a for a in sub._actions for o in a.option_strings}
    for inp in SIDEBAR:
        if inp.flag:
            assert flags[inp.flag].dest == inp.field and flags[inp.flag].help.startswith(inp.help.replace("%", "%%"))
    assert {"--input-tokens", "--output-tokens", "--sequence-tokens", "--ttft-target-s", "--memory-utilization"} <= set(
        flags
    )
    assert "--context" not in flags  # the request is input + output tokens now


def test_training_sequence_length_from_the_cli():
    r = json.loads(run("memory", "--params", "7e9", "--mode", "training", "--sequence-tokens", "8192", "--json").stdout)
    assert r["context_tokens"] == 8192


def test_cost_with_a_broken_pricing_file(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text("offer_id,provider\nx,y\n")
    p = run("cost", "--pricing", str(f))
    assert p.returncode == 2 and "pricing" in p.stderr and "product" in p.stderr


def test_memory_at_the_answer_is_the_answer_s_memory_per_gpu():
    """`memory --at-answer --json` budgets the layout the answer runs: its per-GPU bytes and GPU count are
    `plan --json`'s (the 70B at 500,000 requests a day and 8,000 input tokens: B200s at TP 2, not the 167 GB one
    GPU would need)."""
    from gpuplan_core import api

    flags = ("--preset", "Llama-3.1-70B", "--requests-per-day", "500000", "--input-tokens", "8000")
    mem = json.loads(run("memory", *flags, "--at-answer", "--json").stdout)
    ans = api.answer_report({"preset": "Llama-3.1-70B", "requests_per_day": 500000, "input_tokens": 8000})
    p = ans.pick
    assert p.tp == 2
    assert mem["layout_source"] == "answer"
    assert mem["per_gpu_bytes"] == ans.memory_per_gpu_bytes
    assert mem["layout"]["tp"] == p.tp and mem["layout"]["gpus"] == p.tp * p.pp
    assert mem["scenario_per_gpu_bytes"] > mem["per_gpu_bytes"]  # one GPU alone would need more
    plain = json.loads(run("memory", *flags, "--json").stdout)
    assert plain["per_gpu_bytes"] == mem["scenario_per_gpu_bytes"] and plain["layout_source"] != "answer"


def test_calibrate_from_your_own_benchmark_file():
    """The bundled synthetic `vllm bench serve` file (15 ms per request, decode x 1.2, +-3% noise): the fit
    recovers them and the errors fall, held out as well as in-sample; the rest of `calibrate` is as it was."""
    p = run("calibrate", "--from", "data/samples/vllm_bench_serve_synthetic.jsonl", "--gpu", "H100-SXM", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["file_format"] == "json lines" and r["runs_read"] == 7 and r["issues"] == []
    assert r["profile"]["request_in_s"] == pytest.approx(0.015, rel=0.1)
    assert r["profile"]["decode_time_factor"] == pytest.approx(1.2, rel=0.03)
    e = r["fit"]["errors"]
    assert e["held_out"]["ttft"] < 0.05 < 0.3 < e["before"]["ttft"]  # 33% before: the engine adds no client cost
    assert e["held_out"]["tpot"] < e["before"]["tpot"]
    text = run("calibrate", "--from", "data/samples/vllm_bench_serve_synthetic.jsonl").stdout
    assert "use it: --request-in-s 0.014128 --decode-time-factor 1.1827" in text


def test_calibrate_from_a_bad_file_names_each_bad_run(tmp_path):
    f = tmp_path / "bad.jsonl"
    good = '{"completed": 5, "mean_ttft_ms": 10, "total_input_tokens": 50, "total_output_tokens": 5}'
    f.write_text(good + '\n{"completed": 0}\n')
    p = run("calibrate", "--from", str(f))
    assert p.returncode == 2 and "run 2, completed: 0 is below 1; allowed: 1 or more" in p.stderr
    assert run("calibrate", "--from", str(tmp_path / "none.json")).returncode == 2
