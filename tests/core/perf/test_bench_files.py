"""perf/bench_files.py: each format's runs read as what the client sent, and a bad file reported run by run."""

import json
import math

from gpuplan_core.perf.bench_files import SAMPLE_BENCH_FILE, read_bench_file

VLLM = {  # keys of vllm/benchmarks/serve.py's --save-result JSON
    "backend": "vllm",
    "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "request_rate": "inf",
    "burstiness": 1.0,
    "max_concurrency": 16,
    "completed": 100,
    "total_input_tokens": 102_400,
    "total_output_tokens": 12_800,
    "mean_ttft_ms": 250.0,
    "mean_tpot_ms": 11.0,
    "output_throughput": 1200.0,
}


def test_a_vllm_result_is_a_closed_loop_of_its_clients_at_the_mean_lengths():
    r = read_bench_file(json.dumps(VLLM))
    assert r.ok and r.kind == "vllm json"
    run = r.runs[0]
    assert (run.load_kind, run.load, run.arrival, run.label) == ("concurrency", 16, "closed", "16 clients")
    assert (run.input_tokens, run.output_tokens) == (102_400 // 100, 12_800 // 100)  # totals / completed
    assert (run.ttft_mean_ms, run.tpot_mean_ms, run.output_tokens_per_s) == (250.0, 11.0, 1200.0)
    assert run.model_id == "meta-llama/Llama-3.1-8B-Instruct"


def test_load_shapes_rate_bursty_and_burst():
    rate = read_bench_file(json.dumps(VLLM | {"request_rate": 4.0, "max_concurrency": None})).runs[0]
    assert (rate.load_kind, rate.load, rate.arrival) == ("request_rate", 4.0, "poisson")
    bursty = read_bench_file(json.dumps(VLLM | {"request_rate": 4.0, "burstiness": 0.5})).runs[0]
    assert bursty.arrival == "bursty"
    burst = read_bench_file(json.dumps(VLLM | {"max_concurrency": None})).runs[0]
    assert burst.load_kind == "burst" and math.isinf(burst.load) and burst.arrival == "all_at_once"


def test_lengths_from_per_request_lens_and_sglang_random_ratio():
    lens = {"input_lens": [800, 900, 1000], "output_lens": [100, 100, 100], "completed": 3}
    run = read_bench_file(json.dumps(VLLM | lens)).runs[0]
    assert (run.lengths, run.length_spread, run.input_tokens) == ("uniform", 0.2, 1000)  # 1 - 800/1000
    chat = read_bench_file(json.dumps(VLLM | {"input_lens": [10, 1000], "output_lens": [5, 300]})).runs[0]
    assert chat.lengths == "chat" and chat.input_tokens == 505  # the mean of dataset lengths
    sglang = VLLM | {"dataset_name": "random", "random_input_len": 2048, "random_output_len": 256}
    run = read_bench_file(json.dumps(sglang | {"random_range_ratio": 0.5})).runs[0]
    assert (run.lengths, run.length_spread, run.input_tokens, run.output_tokens) == ("uniform", 0.5, 2048, 256)


def test_json_lines_one_run_a_line():
    text = "\n".join(json.dumps(VLLM | {"max_concurrency": c}) for c in (1, 4, 16)) + "\n"
    r = read_bench_file(text)
    assert r.kind == "json lines" and [x.load for x in r.runs] == [1, 4, 16] and [x.line for x in r.runs] == [1, 2, 3]


def test_genai_perf_json_and_csv():
    doc = {
        "time_to_first_token": {"unit": "ns", "avg": 45_000_000},
        "inter_token_latency": {"unit": "ms", "avg": 9.5},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 880},
        "input_sequence_length": {"unit": "tokens", "avg": 512},
        "output_sequence_length": {"unit": "tokens", "avg": 128},
        "request_count": {"unit": "count", "avg": 300},
        "input_config": {"perf_analyzer": {"stimulus": {"concurrency": 8}}},
    }
    run = read_bench_file(json.dumps(doc)).runs[0]
    assert (run.load_kind, run.load, run.ttft_mean_ms, run.tpot_mean_ms) == ("concurrency", 8, 45.0, 9.5)
    assert (run.input_tokens, run.output_tokens, run.requests, run.output_tokens_per_s) == (512, 128, 300, 880)
    csv = (
        "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"
        "Time To First Token (ms),45.00,30,60,59,58,57,50,44,40\n"
        "Inter Token Latency (ms),9.50,9,10,10,10,10,10,9,9\n"
        "Output Sequence Length (tokens),128,128,128,128,128,128,128,128,128\n"
        "Input Sequence Length (tokens),512,512,512,512,512,512,512,512,512\n"
        "\nMetric,Value\nOutput Token Throughput (per sec),880.00\nRequest Throughput (per sec),6.9\n"
    )
    r = read_bench_file(csv)
    assert not r.ok and "does not say the load" in str(r.errors[0])  # the CSV has no load: it is given
    run = read_bench_file(csv, ("request_rate", 7.0)).runs[0]
    assert (run.load_kind, run.load, run.ttft_mean_ms, run.output_tokens_per_s) == ("request_rate", 7.0, 45.0, 880.0)


def test_a_bad_file_gets_an_error_per_run_naming_the_field_and_what_is_allowed():
    lines = [
        json.dumps(VLLM),
        json.dumps(VLLM | {"completed": 0}),
        json.dumps(VLLM | {"request_rate": -2}),
        "{not json",
        json.dumps(VLLM | {"mean_ttft_ms": "fast"}),
    ]
    r = read_bench_file("\n".join(lines))
    assert not r.ok and len(r.runs) == 1
    assert [str(e) for e in r.errors] == [
        "run 2, completed: 0 is below 1; allowed: 1 or more",
        "run 3, request_rate: -2; allowed: above 0, or inf (every request at once)",
        "run 4: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        "run 5, mean_ttft_ms: 'fast' is not a number",
    ]
    assert "not a benchmark result file" in str(read_bench_file("hello").errors[0])


def test_the_bundled_sample_is_labelled_synthetic():
    r = read_bench_file(SAMPLE_BENCH_FILE.read_bytes())
    assert r.ok and len(r.runs) == 7
    assert all(
        "SYNTHETIC" in json.loads(line)["gpuplan_synthetic"]
        for line in SAMPLE_BENCH_FILE.read_text().split("\n")
        if line
    )
