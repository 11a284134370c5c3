"""Load: N concurrent sessions on loopback, each asking for a rerun every 3 s (alternating scenarios),
for a bounded time. Prints p50/p95 rerun latency and the server's peak RSS. Goal: 50 sessions,
p95 <= 300 ms, RSS <= 400 MB. Also compares runner.postScriptGC on and off.

    python bench/bench_load.py [sessions] [seconds]
"""

from __future__ import annotations

import asyncio
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from st_client import Session  # noqa: E402

QUERIES = ["model=Llama-3.1-8B&ctx=4k", "model=Llama-3.1-8B&ctx=8k", "model=Qwen2.5-7B&ctx=8k&batch=16",
           "model=Llama-3.1-70B&ctx=16k"]
PAGES = ["", "Memory", "Performance", "Cost"]


def start(extra: list[str]) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "gpuplan_ui.serve", "--server.headless=true",
                             f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false",
                             *extra], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if requests.get(url + "/_stcore/health", timeout=1).text == "ok":
                return proc, url
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def user(url: str, i: int, until: float, out: list[float]) -> None:
    s = Session(url)
    await s.connect()
    page = PAGES[i % len(PAGES)]
    rng = random.Random(i)
    await s.rerun(QUERIES[0], page)  # first load (not counted)
    await asyncio.sleep(rng.uniform(0, 3))
    k = 1
    while time.time() < until:
        out.append(await s.rerun(QUERIES[k % len(QUERIES)], page))
        k += 1
        await asyncio.sleep(3.0)
    await s.close()


async def drive(url: str, pid: int, n: int, seconds: float) -> tuple[list[float], float]:
    lat: list[float] = []
    peak = [rss_mb(pid)]
    until = time.time() + seconds

    async def sample():
        while time.time() < until + 5:
            peak.append(rss_mb(pid))
            await asyncio.sleep(0.5)

    tasks = [asyncio.create_task(user(url, i, until, lat)) for i in range(n)]
    sampler = asyncio.create_task(sample())
    await asyncio.gather(*tasks, return_exceptions=False)
    sampler.cancel()
    return lat, max(peak)


def run(n: int, seconds: float, extra: list[str]) -> None:
    proc, url = start(extra)
    try:
        lat, peak = asyncio.run(drive(url, proc.pid, n, seconds))
    finally:
        proc.terminate()
        proc.wait(10)
    lat.sort()
    p50 = statistics.median(lat) * 1e3
    p95 = lat[int(0.95 * (len(lat) - 1))] * 1e3
    print(f"{n:>4} sessions {seconds:>4.0f}s {' '.join(extra) or '(defaults)':<28} reruns {len(lat):>5}  "
          f"p50 {p50:>6.0f} ms  p95 {p95:>6.0f} ms  peak RSS {peak:>5.0f} MB")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 60
    run(1, 20, ["--runner.postScriptGC=true"])
    run(1, 20, ["--runner.postScriptGC=false"])
    run(n, secs, ["--runner.postScriptGC=true"])
    run(n, secs, ["--runner.postScriptGC=false"])
