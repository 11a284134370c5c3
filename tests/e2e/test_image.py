"""The Dockerfile, tested without a Docker engine (none runs on these machines): hadolint, its rules
as plain checks, and its own steps replayed in a fresh virtualenv: the COPY lines copied into a
read-only folder, the RUN pip line in the venv, the ENTRYPOINT started, the HEALTHCHECK command asked,
and one page run through the websocket the browser uses. A folder the Dockerfile forgets to COPY, or
a package missing from requirements.txt, fails here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import _free_port

ROOT = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out, buf = [], ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        buf += line.rstrip().removesuffix("\\") + " " if line.rstrip().endswith("\\") else line.strip()
        if not line.rstrip().endswith("\\"):
            word, _, rest = buf.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            buf = ""
    return out


def exec_form(args: str) -> list[str]:
    return json.loads(args) if args.startswith("[") else shlex.split(args)


def test_dockerfile_lints_clean():
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        if os.environ.get("CI") == "true":
            pytest.fail("hadolint is not installed (pip install -r requirements-dev.txt)")
        pytest.skip("hadolint is not installed")
    r = subprocess.run([hadolint, "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_dockerfile_rules():
    ins = instructions()
    kinds = [k for k, _ in ins]
    base = dict(ins)["FROM"]
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base), f"base image not pinned to a patch release: {base}"
    copies = [a for k, a in ins if k == "COPY"]
    assert copies[0] == "requirements.txt ."  # dependencies layer first...
    assert kinds.index("RUN") < kinds.index("COPY", kinds.index("COPY") + 1)  # ...installed before the code
    user = [a for k, a in ins if k == "USER"]
    assert user and user[-1].isdigit() and int(user[-1]) != 0, "the image must run as a numeric non-root user"
    assert "8501" in dict(ins)["EXPOSE"]
    assert "/_stcore/health" in dict(ins)["HEALTHCHECK"]
    for k, a in ins:
        if k in ("ENV", "ARG"):
            assert not re.search(r"(SECRET|PASSWORD|TOKEN|KEY)\w*=", a, re.I), f"a secret baked into the image: {a}"


def _health_cmd(port: int) -> list[str]:
    hc = dict(instructions())["HEALTHCHECK"]
    return exec_form(hc.split(" CMD ", 1)[1].strip().replace("8501", str(port)))


@pytest.fixture(scope="module")
def image_like(tmp_path_factory):
    """The Dockerfile's steps in a fresh virtualenv and a read-only copy of what it COPYs."""
    tmp = tmp_path_factory.mktemp("image")
    app, home, venv = tmp / "app", tmp / "home", tmp / "venv"
    app.mkdir()
    home.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "HOME": str(home), "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    for k, a in instructions():
        if k == "COPY":
            src, dst = a.split()
            target = (app / dst).resolve()
            if (ROOT / src).is_dir():
                shutil.copytree(ROOT / src, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(ROOT / src, target if dst != "." else app / src)
        elif k == "RUN" and a.startswith("pip "):
            subprocess.run(shlex.split(a), cwd=app, env=env, check=True, stdout=subprocess.DEVNULL)
    for p in [app, *app.rglob("*")]:  # what the non-root user gets: files it cannot write
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    for k, a in instructions():  # the user's own steps (the step loop compiled into its home's cache)
        if k == "RUN" and a.startswith("python "):
            subprocess.run(shlex.split(a), cwd=app, env=env, check=True, stdout=subprocess.DEVNULL)
    yield app, env
    for p in [app, *app.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_the_image_steps_serve_the_app_from_a_fresh_virtualenv(image_like, tmp_path):
    from bench.st_client import page_element_kinds

    app, env = image_like
    port = _free_port()
    cmd = exec_form(dict(instructions())["ENTRYPOINT"])
    assert cmd[0] == "python"
    cmd = [
        str(Path(env["VIRTUAL_ENV"]) / "bin" / "python"),
        *cmd[1:],
        f"--server.port={port}",
        "--server.address=127.0.0.1",
    ]
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, cwd=app, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        health = _health_cmd(port)
        health[0] = str(Path(env["VIRTUAL_ENV"]) / "bin" / "python")
        deadline = time.time() + 90
        while subprocess.run(health, env=env, capture_output=True).returncode != 0:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            assert time.time() < deadline, "HEALTHCHECK never passed"
            time.sleep(0.5)

        kinds = page_element_kinds(f"http://127.0.0.1:{port}", "model=Llama-3.1-70B&ctx=8k", "Memory")
        assert "exception" not in kinds, (tmp_path / "server.log").read_text()
        assert "plotly_chart" in kinds and "metric" in kinds  # the Memory page really ran (its tables: when opened)
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
