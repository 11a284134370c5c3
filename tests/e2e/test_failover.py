"""Two app replicas behind Debian nginx running deploy/nginx.conf (loopback only): a session driven
through nginx survives its replica being stopped, and new sessions still work."""

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from tests.e2e.conftest import ROOT, open_app, screenshot, start_server, wait_for_app

pytestmark = pytest.mark.browser
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SECRET = "test-cookie-secret-shared-by-all-replicas"


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
    if not Path(NGINX).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is not installed (apt-get install nginx)")
        pytest.skip("nginx is not installed")
    os.environ["STREAMLIT_SERVER_COOKIE_SECRET"] = SECRET
    try:
        a = start_server(tmp_path / "a.log")
        b = start_server(tmp_path / "b.log")
    finally:
        os.environ.pop("STREAMLIT_SERVER_COOKIE_SECRET", None)
    port = _port()
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / d).mkdir()
        conf = conf.replace(f"/var/lib/nginx/{d}", str(tmp_path / d))
    conf = conf.replace("/run/nginx-gpuplan.pid", str(tmp_path / "nginx.pid"))
    conf = conf.replace("/var/log/nginx/gpuplan-error.log", str(tmp_path / "nginx-error.log"))
    conf = conf.replace("worker_processes auto;", "worker_processes 1;")
    conf = conf.replace("server app1:8501", "server " + a[1].removeprefix("http://"))
    conf = conf.replace("server app2:8501", "server " + b[1].removeprefix("http://"))
    conf = conf.replace("listen 80;", f"listen 127.0.0.1:{port};")
    (tmp_path / "nginx.conf").write_text(conf)
    ng = subprocess.Popen(
        [NGINX, "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "nginx.out", "w"),  # noqa: SIM115 - lives as long as nginx
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(50):
        try:
            if requests.get(url + "/_stcore/health", timeout=1).text == "ok":
                break
        except requests.RequestException:
            time.sleep(0.1)
    yield url, a, b
    ng.terminate()
    ng.wait(10)
    for proc, _ in (a, b):
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)


def test_session_survives_a_replica_dying(cluster, browser):
    url, a, b = cluster
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = ctx.new_page()
    open_app(pg, f"{url}/Memory?model=Llama-3.1-70B&ctx=8k&batch=4")
    expect(pg.get_by_role("combobox", name="Published model")).to_have_value("Llama-3.1-70B")
    counts = {name: active_sessions(rep[1]) for name, rep in (("a", a), ("b", b))}
    assert sorted(counts.values()) == [0, 1], counts  # the session lives on exactly one replica
    serving, survivor = (a, b) if counts["a"] == 1 else (b, a)
    os.killpg(serving[0].pid, signal.SIGTERM)
    serving[0].wait(15)
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
    ctx.close()
