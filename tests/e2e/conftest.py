"""Real-browser fixtures: a fresh Streamlit server on loopback and Debian's chromium via Playwright.

Never downloads a browser: Playwright launches /usr/bin/chromium through executable_path. Without
chromium the browser tests are skipped locally and fail under CI=true (CI must install it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test-output" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    return CHROMIUM


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    log = open(log_path, "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuplan_ui.serve",  # the production launcher (streamlit run app.py + TCP_NODELAY + run limit)
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
            "--browser.gatherUsageStats=false",
            "--server.fileWatcherType=none",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if requests.get(url + "/_stcore/health", timeout=1).text == "ok":
                return proc, url
        except requests.RequestException:
            pass
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("streamlit did not start; see " + str(log_path))


@pytest.fixture(scope="session")
def app_url(tmp_path_factory, chromium_path):
    proc, url = start_server(tmp_path_factory.mktemp("e2e") / "server.log")
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=chromium_path,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
                "--disable-quic",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, accept_downloads=True)
    pg = ctx.new_page()
    yield pg
    ctx.close()


def wait_for_app(pg, timeout: int = 60_000) -> None:
    """Streamlit's own e2e signals: connected, script not running, no skeletons."""
    from playwright.sync_api import expect

    pg.wait_for_timeout(250)
    pg.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout
    )
    pg.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached", timeout=timeout)
    expect(pg.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)


def open_app(pg, url: str):
    pg.goto(url)
    pg.wait_for_selector("[data-testid='stAppViewContainer']", state="attached", timeout=60_000)
    wait_for_app(pg)
    return pg


def screenshot(pg, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
