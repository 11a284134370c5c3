"""Write data/samples/vllm_bench_serve_synthetic.jsonl: a SYNTHETIC `vllm bench serve --save-result
--append-result` file (one JSON object a line, vLLM's keys) for the calibrate-to-your-deployment tests and demo.

No published vLLM result file with per-run keys was found in the project's look-up corpora, so the file is made
from gpuplan's own serving simulation with KNOWN constants (a fixed request cost of REQUEST_IN_S and decode steps
DECODE_TIME_FACTOR x slower than predicted) and multiplicative noise (+-NOISE, seeded), so a fit must recover
them. Every object carries ``"gpuplan_synthetic"`` saying so. Rerun: ``python bench/make_calib_sample.py``.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan_core.perf.bench_files import BenchRun  # noqa: E402
from gpuplan_core.perf.deployment_fit import Deployment, replay  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "samples" / "vllm_bench_serve_synthetic.jsonl"
REQUEST_IN_S = 0.015
DECODE_TIME_FACTOR = 1.2
NOISE = 0.03
SEED = 28
DEPLOYMENT = Deployment(model="Llama-3.1-8B", gpu="H100-SXM", tp=1, engine="vllm")
INPUT, OUTPUT, REQUESTS = 1024, 128, 200
LOADS = [
    *(("concurrency", n) for n in (1, 4, 16, 64)),
    *(("request_rate", rate) for rate in (1.0, 4.0, 10.0)),
]


def main() -> None:
    rng = random.Random(SEED)
    lines = []
    for kind, load in LOADS:
        run = BenchRun(
            line=0,
            label="",
            load_kind=kind,
            load=load,
            arrival="closed" if kind == "concurrency" else "poisson",
            requests=REQUESTS,
            input_tokens=INPUT,
            output_tokens=OUTPUT,
        )
        p = replay(run, DEPLOYMENT, (REQUEST_IN_S, DECODE_TIME_FACTOR))
        ttft, tpot, tps = (p[m] * (1 + rng.uniform(-NOISE, NOISE)) for m in ("ttft", "tpot", "output_tokens_per_s"))
        duration = REQUESTS * OUTPUT / tps
        lines.append(
            {
                "gpuplan_synthetic": (
                    f"SYNTHETIC, not measured: gpuplan's simulation of {DEPLOYMENT.model} on {DEPLOYMENT.tp} x "
                    f"{DEPLOYMENT.gpu} ({DEPLOYMENT.engine}) with request_in_s={REQUEST_IN_S} and "
                    f"decode_time_factor={DECODE_TIME_FACTOR}, noise +-{NOISE:.0%} (bench/make_calib_sample.py)"
                ),
                "date": "20261202-000000",
                "endpoint_type": "openai",
                "backend": "vllm",
                "label": None,
                "model_id": "meta-llama/Llama-3.1-8B-Instruct",
                "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
                "num_prompts": REQUESTS,
                "request_rate": "inf" if kind == "concurrency" else load,
                "burstiness": 1.0,
                "max_concurrency": load if kind == "concurrency" else None,
                "duration": round(duration, 3),
                "completed": REQUESTS,
                "total_input_tokens": REQUESTS * INPUT,
                "total_output_tokens": REQUESTS * OUTPUT,
                "request_throughput": round(REQUESTS / duration, 4),
                "output_throughput": round(tps, 3),
                "total_token_throughput": round(REQUESTS * (INPUT + OUTPUT) / duration, 3),
                "mean_ttft_ms": round(ttft, 3),
                "mean_tpot_ms": round(tpot, 4),
                "mean_itl_ms": round(tpot, 4),
                "input_lens": [INPUT] * REQUESTS,
                "output_lens": [OUTPUT] * REQUESTS,
            }
        )
    OUT.write_text("".join(json.dumps(x) + "\n" for x in lines))
    print(f"{len(lines)} synthetic runs written to {OUT}")


if __name__ == "__main__":
    main()
