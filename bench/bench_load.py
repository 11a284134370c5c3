"""Load: N concurrent sessions on loopback, each asking for a rerun every 3 s (alternating scenarios and
pages), for a bounded time. Prints p50/p95 rerun latency for the whole run and after the first 10 s
(when the sessions have just opened at once and the caches are cold), and once more with every scenario's answer
computed first (warm: the caches after warm-up), the server's CPU per rerun and its peak RSS. Goal: 100 sessions,
p95 <= 300 ms per process after warm-up, RSS <= 400 MB.

Runs the app the way the README and the Dockerfile do (python -m gpuplan_ui.serve), once as plain
``streamlit run app.py`` for comparison, and as two processes behind nginx (``python -m gpuplan_ui.serve
--replicas 2``: server CPU is then the whole tree's, RSS the largest process's); also compares
runner.postScriptGC on and off for one session.

    python bench/bench_load.py [sessions] [seconds]
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from st_client import Session  # noqa: E402

QUERIES = [
    "model=Llama-3.1-8B&in=3840&out=256",
    "model=Llama-3.1-8B&in=7936&out=256",
    "model=Qwen2.5-7B&in=7936&out=256&batch=16",
    "model=Llama-3.1-70B&in=16000&out=384",
]
PAGES = ["", "Memory", "Performance", "Cost"]
LAUNCHER = ["-m", "gpuplan_ui.serve"]
PLAIN = ["-m", "streamlit", "run", "app.py"]
WARMUP_S = 10.0


def start(extra: list[str], how: list[str] = LAUNCHER) -> tuple[subprocess.Popen, str]:
    """The app on a free loopback port (with ``--replicas N`` in ``extra``: nginx there, the replicas behind it,
    listed by ``replica_urls(proc)``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            *how,
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
            "--browser.gatherUsageStats=false",
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=(log := tempfile.TemporaryFile()),  # noqa: SIM115 - read by replica_urls, closed with the process
    )
    proc.log_file = log  # type: ignore[attr-defined]  # (Popen keeps no handle on a file it was given)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if requests.get(url + "/_stcore/health", timeout=1).text == "ok":
                return proc, url
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def replica_urls(proc: subprocess.Popen) -> list[str]:
    """The replicas' own addresses, as the launcher announced them under ``--replicas N`` (none for one process)."""
    log = proc.log_file  # type: ignore[attr-defined]
    log.seek(0)
    return re.findall(r"replica \d+ of \d+ at (http://\S+)", log.read().decode(errors="replace"))


def tree(pid: int) -> list[int]:
    """pid and every process under it (the replicas and nginx under ``--replicas N``)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def rss_mb(pid: int) -> float:
    """The largest resident set of one process of the tree (the goal is per process)."""
    most = 0.0
    for p in tree(pid):
        try:
            lines = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            continue
        most = max([most] + [int(x.split()[1]) / 1024 for x in lines if x.startswith("VmRSS:")])
    return most


def cpu_s(pid: int) -> float:
    """CPU seconds of the whole tree."""
    total = 0.0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def user(url: str, i: int, t0: float, until: float, out: list[tuple[float, float]]) -> None:
    s = Session(url)
    await s.connect()
    page = PAGES[i % len(PAGES)]
    rng = random.Random(i)
    await s.rerun(QUERIES[0], page)  # first load (not counted)
    await asyncio.sleep(rng.uniform(0, 3))
    k = 1
    while time.time() < until:
        started = time.time() - t0
        out.append((started, await s.rerun(QUERIES[k % len(QUERIES)], page)))
        k += 1
        await asyncio.sleep(3.0)
    await s.close()


async def drive(url: str, pid: int, n: int, seconds: float) -> tuple[list[tuple[float, float]], float]:
    lat: list[tuple[float, float]] = []
    peak = [rss_mb(pid)]
    t0 = time.time()
    until = t0 + seconds

    async def sample():
        while time.time() < until + 5:
            peak.append(rss_mb(pid))
            await asyncio.sleep(0.5)

    tasks = [asyncio.create_task(user(url, i, t0, until, lat)) for i in range(n)]
    sampler = asyncio.create_task(sample())
    await asyncio.gather(*tasks, return_exceptions=False)
    sampler.cancel()
    return lat, max(peak)


def _p(xs: list[float]) -> str:
    if not xs:
        return "      -"
    xs = sorted(xs)
    return f"p50 {statistics.median(xs) * 1e3:>5.0f} p95 {xs[int(0.95 * (len(xs) - 1))] * 1e3:>5.0f} ms"


async def _warm(url: str) -> None:
    """One session through every scenario on every page: the answers computed once, as after a day of use."""
    s = Session(url)
    await s.connect()
    for page in PAGES:
        for q in QUERIES:
            await s.rerun(q, page, timeout=300)
    await s.close()


def run(n: int, seconds: float, extra: list[str], how: list[str] = LAUNCHER, warm: bool = False) -> list[float]:
    """``warm``: every scenario's answer computed before the sessions open (the caches after warm-up); else the
    sessions open at once on cold caches (the first 10 s are also reported apart). Prints the row; returns the
    latencies (seconds) after the first 10 s."""
    proc, url = start(extra, how)
    try:
        if warm:  # every replica's caches (nginx would send one warming session to one replica)
            for u in replica_urls(proc) or [url]:
                asyncio.run(_warm(u))
        c0, me0 = cpu_s(proc.pid), time.process_time()
        lat, peak = asyncio.run(drive(url, proc.pid, n, seconds))
        cpu, me = cpu_s(proc.pid) - c0, time.process_time() - me0
    finally:
        proc.terminate()
        proc.wait(10)
    name = ("launcher" if how == LAUNCHER else "streamlit run") + (", warm" if warm else "")
    print(
        f"{n:>3} sessions {seconds:>3.0f}s {name:<19} {' '.join(extra):<20} reruns {len(lat):>4}  "
        f"all: {_p([x for _, x in lat])}  after {WARMUP_S:.0f}s: {_p([x for t, x in lat if t >= WARMUP_S])}  "
        f"server CPU {cpu * 1e3 / max(1, len(lat) + n):>3.0f} ms/rerun  peak RSS {peak:>4.0f} MB  "
        f"(the load generator: {me / seconds:.0%} of a core)",
        flush=True,
    )
    return [x for t, x in lat if t >= WARMUP_S]


async def _back_to_back(url: str, pid: int, page: str, reps: int) -> tuple[float, float]:
    s = Session(url)
    await s.connect()
    for k in range(8):  # warm the caches for the four scenarios
        await s.rerun(QUERIES[k % len(QUERIES)], page)
    c0 = cpu_s(pid)
    lat = [await s.rerun(QUERIES[k % len(QUERIES)], page) for k in range(reps)]
    cpu = cpu_s(pid) - c0
    await s.close()
    return statistics.median(lat), cpu / reps


def per_page(extra: list[str], how: list[str] = LAUNCHER, reps: int = 60) -> None:
    """One session, reruns back to back: each page's latency and the server's CPU per rerun."""
    proc, url = start(extra, how)
    try:
        cells = []
        for page in PAGES:
            wall, cpu = asyncio.run(_back_to_back(url, proc.pid, page, reps))
            cells.append(f"{page or 'Overview'} {wall * 1e3:.0f}/{cpu * 1e3:.0f}")
    finally:
        proc.terminate()
        proc.wait(10)
    name = "launcher" if how == LAUNCHER else "streamlit run"
    print(
        f"1 session, back to back, {name:<13} {' '.join(extra):<26} ms per rerun (latency/server CPU): "
        + ", ".join(cells),
        flush=True,
    )


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 60
    per_page([], PLAIN)
    per_page(["--runner.postScriptGC=true"])
    per_page(["--runner.postScriptGC=false"])
    run(n, secs, [], PLAIN)
    run(n, secs, [])
    run(n, secs, [], warm=True)
    run(n, secs, ["--replicas=2"])  # two processes behind nginx (one command: gpuplan_ui/cluster.py)
    run(n, secs, ["--replicas=2"], warm=True)
