"""Two app replicas behind Debian nginx running deploy/nginx.conf, started by the launcher's ``--replicas 2``
(loopback only): a session driven through nginx survives its replica being stopped, the launcher starts that
replica again, and new sessions still work."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, open_app, screenshot, wait_for_app

pytestmark = pytest.mark.browser
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REPLICA = re.compile(r"replica \d of 2 at (http://127\.0\.0\.1:\d+) \(pid (\d+)\)")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def active_sessions(url: str) -> int:
    try:
        text = requests.get(url + "/_stcore/metrics", timeout=2).text
    except requests.RequestException:
        return -1
    m = re.search(r"^active_sessions (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


@pytest.fixture
def cluster(tmp_path, chromium_path):
    """The launcher's own cluster: ``python -m gpuplan_ui.serve --replicas 2`` (two app processes behind Debian's
    nginx running deploy/nginx.conf, one shared cookie secret); the replicas' pids and addresses read from what it
    says on stderr."""
    if not Path(NGINX).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is not installed (apt-get install nginx)")
        pytest.skip("nginx is not installed")
    port = _port()
    log = tmp_path / "launcher.log"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "gpuplan_ui.serve", "--replicas", "2", f"--server.port={port}"]
        + ["--server.address=127.0.0.1", "--server.headless=true", "--browser.gatherUsageStats=false"]
        + ["--server.fileWatcherType=none"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),  # noqa: SIM115 - lives as long as the launcher
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline and "replicas behind nginx" not in log.read_text():
        assert launcher.poll() is None, log.read_text()
        time.sleep(0.2)
    assert requests.get(url + "/_stcore/health", timeout=5).text == "ok", log.read_text()
    replicas = [(int(pid), u) for u, pid in REPLICA.findall(log.read_text())]
    assert len(replicas) == 2, log.read_text()
    yield url, replicas[0], replicas[1], log
    os.killpg(launcher.pid, signal.SIGTERM)
    launcher.wait(30)


def test_session_survives_a_replica_dying(cluster, browser):
    url, a, b, log = cluster
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = ctx.new_page()
    open_app(pg, f"{url}/Memory?model=Llama-3.1-70B&ctx=8k&batch=4")
    expect(pg.get_by_role("combobox", name="Published model")).to_have_value("Llama-3.1-70B")
    counts = {name: active_sessions(rep[1]) for name, rep in (("a", a), ("b", b))}
    assert sorted(counts.values()) == [0, 1], counts  # the session lives on exactly one replica
    serving, survivor = (a, b) if counts["a"] == 1 else (b, a)
    os.kill(serving[0], signal.SIGTERM)
    # the browser reconnects through nginx to the survivor, which rebuilds the scenario from the URL
    deadline = time.time() + 60
    while time.time() < deadline and active_sessions(survivor[1]) < 1:
        time.sleep(0.5)
    assert active_sessions(survivor[1]) >= 1
    wait_for_app(pg)
    expect(pg.get_by_role("heading", level=1)).to_contain_text("Memory")
    expect(pg.get_by_role("combobox", name="Published model")).to_have_value("Llama-3.1-70B", timeout=30_000)
    expect(pg.get_by_test_id("stException")).to_have_count(0)
    screenshot(pg, "failover-after-replica-stopped")
    # a brand-new visitor is served too
    fresh = browser.new_context().new_page()
    open_app(fresh, f"{url}/Cost?model=Qwen2.5-7B")
    expect(fresh.get_by_role("combobox", name="Published model")).to_have_value("Qwen2.5-7B")
    # the launcher starts the stopped replica again on its port
    deadline = time.time() + 90
    while time.time() < deadline and active_sessions(serving[1]) < 0:
        time.sleep(0.5)
    assert active_sessions(serving[1]) >= 0, log.read_text()
    assert "replica" in log.read_text() and "starting it again" in log.read_text()
    ctx.close()
