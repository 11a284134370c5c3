"""New questions answered by two trees of the code in one run, question by question in turn (A B A B ...), so a
machine whose speed drifts moves both alike: per-question times, p50 / p95 of each and the per-question ratio A / B
(its median and p95), in wall time and in the process's CPU time (what a loaded machine moves least),
step-loop runs; and a slider's next value (bench_answer.py's: input 10% longer, or a first-token
target of 1 s).

    python bench/bench_ab.py --base /tmp/base [--questions 24] [--seed 0] [--python PY] [--base-python PY]

Each tree answers in its own warm process (imports, catalogs and the default question done first); the questions
are bench_answer.py's (7 models, 500-8,000 input tokens, 2,000-200,000 requests a day). The pick, GPU count and
cost of both are printed side by side and must be equal.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_answer import pct  # noqa: E402

WORKER = """
import json, sys, time
sys.path.insert(0, '.')
from bench.bench_answer import questions
from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.capacity import simulations_run
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario
offers = load_pricing().offers
answer(Scenario(), offers)
qs = questions(int(sys.argv[1]), int(sys.argv[2]))
print('ready', flush=True)
for line in sys.stdin:
    sc = qs[int(line)]
    runs, t, cpu = simulations_run(), time.perf_counter(), time.process_time()
    ans = answer(sc, offers)
    ms, cpu_ms = (time.perf_counter() - t) * 1e3, (time.process_time() - cpu) * 1e3
    p = ans.pick
    sliders = []
    for changed in (sc.with_(input_tokens=round(sc.request.input_tokens * 1.1)), sc.with_(ttft_target_s=1.0)):
        t = time.process_time()
        answer(changed, offers)
        sliders.append((time.process_time() - t) * 1e3)
    what = f'{sc.model_source.preset} in {sc.request.input_tokens} rpd {sc.traffic.requests_per_day:.0f}'
    pick = [p.gpu, p.gpus, round(ans.cost_usd, 6)] if p else None
    row = {'ms': ms, 'cpu_ms': cpu_ms, 'runs': simulations_run() - runs, 'pick': pick, 'what': what, 'sliders': sliders}
    print(json.dumps(row), flush=True)
"""


def _worker(tree: Path, python: str, n: int, seed: int) -> subprocess.Popen:
    p = subprocess.Popen(
        [python, "-c", WORKER, str(n), str(seed)], cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "ready"
    return p


def _ask(p: subprocess.Popen, i: int) -> dict:
    p.stdin.write(f"{i}\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the other tree (B: the baseline)")
    ap.add_argument("--questions", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--python", default=sys.executable, help="this tree's interpreter (A)")
    ap.add_argument("--base-python", default=sys.executable)
    args = ap.parse_args()
    here = Path(__file__).resolve().parents[1]
    a = _worker(here, args.python, args.questions, args.seed)
    b = _worker(args.base, args.base_python, args.questions, args.seed)
    ms_a, ms_b, cpu_a, cpu_b, runs_a, runs_b, same, sl_a, sl_b = [], [], [], [], [], [], 0, [], []
    for i in range(args.questions):
        ra, rb = _ask(a, i), _ask(b, i)
        ms_a.append(ra["ms"])
        ms_b.append(rb["ms"])
        cpu_a.append(ra["cpu_ms"])
        cpu_b.append(rb["cpu_ms"])
        runs_a.append(ra["runs"])
        runs_b.append(rb["runs"])
        same += ra["pick"] == rb["pick"]
        sl_a += ra["sliders"]
        sl_b += rb["sliders"]
        print(
            f"  {ra['what']:<36} A {ra['ms']:>8.0f} ms ({ra['cpu_ms']:>6.0f} CPU, {ra['runs']:>3} runs)  "
            f"B {rb['ms']:>8.0f} ms ({rb['cpu_ms']:>6.0f} CPU)  "
            f"{'same pick' if ra['pick'] == rb['pick'] else f'DIFFERENT {ra} {rb}'}",
            flush=True,
        )
    for p in (a, b):
        p.stdin.close()
        p.wait()
    print(f"{'':<52} {'p50 ms':>9} {'p95 ms':>9} {'A/B p50':>8} {'A/B p95':>8}")
    rows = (
        ("new question, wall", ms_a, ms_b),
        ("new question, CPU", cpu_a, cpu_b),
        ("slider (input +10%, TTFT 1 s), CPU", sl_a, sl_b),
    )
    for what, a_ms, b_ms in rows:
        ratios = [x / y for x, y in zip(a_ms, b_ms, strict=True)]
        for name, ms in (("A (this tree)", a_ms), ("B (base)", b_ms)):
            print(f"{what + ', ' + name:<52} {statistics.median(ms):>9.1f} {pct(ms, 0.95):>9.1f}", end="")
            print(f" {statistics.median(ratios):>8.3f} {pct(ratios, 0.95):>8.3f}" if name[0] == "A" else "")
    runs = f"A {statistics.median(runs_a):.0f}, B {statistics.median(runs_b):.0f}"
    print(f"step-loop runs per new question (median): {runs}")
    print(f"same pick, GPU count and cost: {same} of {args.questions}")


if __name__ == "__main__":
    main()
