"""Several app processes behind the bundled nginx recipe, started by one command:
``python -m gpuplan_ui.serve --replicas N [streamlit options]`` (or ``GPUPLAN_REPLICAS=N``).

One Streamlit process runs one script at a time under the launcher (serve.py), so one process serves about as
many sessions as one core keeps up with (bench/bench_load.py: the knee is near 70 sessions changing an input every
3 s). With ``--replicas N`` the launcher starts N app processes on loopback ports and Debian's nginx in front of
them on the address and port asked for, with the configuration of ``deploy/nginx.conf`` (sticky sessions hashed on
Streamlit's XSRF cookie, websocket upgrade, a dead replica skipped). Every replica gets the same cookie secret
(``STREAMLIT_SERVER_COOKIE_SECRET``, made up for this run when unset), so a cookie one replica issued is good on
the others; a replica that exits is started again on its port, and its sessions reconnect to another meanwhile,
rebuilding their scenario from the link. Pricing files and profiles live in the shared data folder (SQLite, or
``GPUPLAN_DATABASE_URL``), so a link that names one opens on any replica.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"
REPLICAS_ENV = "GPUPLAN_REPLICAS"
MAX_REPLICAS = 32
SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"
TEMP_DIRS = ("body", "proxy", "fastcgi", "uwsgi", "scgi")
START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Plan:
    """What ``--replicas`` asks for: how many app processes, where nginx listens, the options every replica gets."""

    replicas: int
    address: str  # where nginx listens ('' = every interface, as Streamlit's default)
    port: int
    streamlit_args: tuple[str, ...]  # the other options, passed to every replica unchanged


def take_option(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """The value of ``--name V`` or ``--name=V`` in args (the last one given), and args without it."""
    value, rest, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a == name and i + 1 < len(args):
            value, i = args[i + 1], i + 2
            continue
        if a.startswith(name + "="):
            value = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return value, rest


def _whole(raw: str, field: str, low: int, high: int) -> int:
    try:
        n = int(raw.strip())
    except ValueError:
        n = low - 1
    if not low <= n <= high:
        raise SystemExit(f"gpuplan: {field} must be a whole number from {low} to {high} (got {raw!r}).")
    return n


def plan_from(args: list[str], env: Mapping[str, str] = os.environ) -> Plan:
    """Read ``--replicas`` (else GPUPLAN_REPLICAS, else 1) and the public address and port out of the launcher's
    arguments; a bad value stops with a sentence naming the option and what it allows."""
    raw, rest = take_option(list(args), "--replicas")
    replicas = _whole(raw if raw is not None else env.get(REPLICAS_ENV, "1"), "--replicas", 1, MAX_REPLICAS)
    port, rest = take_option(rest, "--server.port")
    address, rest = take_option(rest, "--server.address")
    port = port if port is not None else env.get("STREAMLIT_SERVER_PORT", "8501")
    address = address if address is not None else env.get("STREAMLIT_SERVER_ADDRESS", "")
    return Plan(replicas, address, _whole(port, "--server.port", 1, 65535), tuple(rest))


def nginx_config(template: str, upstreams: list[str], listen: str, workdir: Path, workers: int = 1) -> str:
    """deploy/nginx.conf made runnable by an ordinary user: its upstream servers, its listen address, and its pid,
    log and temporary files under ``workdir`` (each temporary folder made). ``listen``: ``host:port`` or a port."""
    conf = template
    for d in TEMP_DIRS:
        (workdir / d).mkdir(parents=True, exist_ok=True)
        conf = conf.replace(f"/var/lib/nginx/{d}", str(workdir / d))
    conf = conf.replace("/run/nginx-gpuplan.pid", str(workdir / "nginx.pid"))
    conf = conf.replace("/var/log/nginx/gpuplan-error.log", str(workdir / "error.log"))
    conf = conf.replace("worker_processes auto;", f"worker_processes {workers};")
    servers = "".join(f"        server {u} max_fails=1 fail_timeout=10s;\n" for u in upstreams)
    start = conf.index("        server app1:8501")
    end = conf.index("\n", conf.index("        server app2:8501")) + 1
    conf = conf[:start] + servers + conf[end:]
    return conf.replace("listen 80;", f"listen {listen};")


def nginx_binary() -> str | None:
    """Debian's nginx (``apt-get install nginx``), where installed."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = START_TIMEOUT_S) -> bool:
    """True once ``url``'s health check answers ok; False if the process ends or the time runs out first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(requests.RequestException):
            if requests.get(url + "/_stcore/health", timeout=1).text == "ok":
                return True
        time.sleep(0.2)
    return False


class Cluster:
    """N replicas of the launcher and nginx in front; ``run()`` keeps them up until nginx ends or a signal."""

    def __init__(self, plan: Plan, nginx: str, workdir: Path):
        self.plan, self.nginx, self.workdir = plan, nginx, workdir
        self.ports = [free_port() for _ in range(plan.replicas)]
        self.env = {**os.environ, "GPUPLAN_REPLICAS": "1"}
        if SECRET_ENV not in self.env and not any(a.startswith("--server.cookieSecret") for a in plan.streamlit_args):
            self.env[SECRET_ENV] = secrets.token_urlsafe(32)  # one secret for all: cookies valid on every replica
        self.apps: list[subprocess.Popen | None] = [None] * plan.replicas
        self.proxy: subprocess.Popen | None = None

    def start_replica(self, i: int) -> subprocess.Popen:
        args = [f"--server.port={self.ports[i]}", "--server.address=127.0.0.1", *self.plan.streamlit_args]
        self.apps[i] = subprocess.Popen(
            [sys.executable, "-m", "gpuplan_ui.serve", *args], env=self.env, stdout=subprocess.DEVNULL, cwd=ROOT
        )
        say(f"replica {i + 1} of {self.plan.replicas} at http://127.0.0.1:{self.ports[i]} (pid {self.apps[i].pid})")
        return self.apps[i]

    def start(self) -> None:
        for i in range(self.plan.replicas):
            self.start_replica(i)
        for i, proc in enumerate(self.apps):
            if not wait_healthy(f"http://127.0.0.1:{self.ports[i]}", proc):
                raise SystemExit(f"gpuplan: replica {i + 1} did not start (its messages are above).")
        listen = f"{self.plan.address}:{self.plan.port}" if self.plan.address else str(self.plan.port)
        conf = nginx_config(NGINX_CONF.read_text(), [f"127.0.0.1:{p}" for p in self.ports], listen, self.workdir)
        (self.workdir / "nginx.conf").write_text(conf)
        self.proxy = subprocess.Popen([self.nginx, "-c", str(self.workdir / "nginx.conf"), "-g", "daemon off;"])
        host = self.plan.address or "localhost"
        probe = "127.0.0.1" if host in ("localhost", "0.0.0.0", "::") else host  # where this machine reaches it
        if not wait_healthy(f"http://{probe}:{self.plan.port}", self.proxy):
            raise SystemExit(f"gpuplan: nginx did not start on port {self.plan.port} (see {self.workdir}/error.log).")
        say(f"{self.plan.replicas} replicas behind nginx: open http://{host}:{self.plan.port}")

    def run(self) -> int:
        """Restart a replica that exits; return nginx's exit code when it ends."""
        while True:
            if self.proxy is not None and self.proxy.poll() is not None:
                return self.proxy.returncode
            for i, proc in enumerate(self.apps):
                if proc is not None and proc.poll() is not None:
                    say(f"replica {i + 1} exited (code {proc.returncode}); starting it again")
                    self.start_replica(i)
            time.sleep(0.5)

    def stop(self) -> None:
        for proc in [self.proxy, *self.apps]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in [self.proxy, *self.apps]:
            if proc is not None:
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()


def say(text: str) -> None:
    print(f"gpuplan: {text}", file=sys.stderr, flush=True)


def serve_replicas(plan: Plan) -> int:
    """Run ``plan.replicas`` app processes behind nginx until interrupted; the exit code."""
    nginx = nginx_binary()
    if nginx is None:
        raise SystemExit(
            "gpuplan: --replicas above 1 needs nginx in front of the replicas, and none is installed "
            "(apt-get install nginx), or run one process: --replicas 1."
        )
    workdir = Path(tempfile.mkdtemp(prefix="gpuplan-nginx-"))
    workdir.chmod(0o755)  # nginx's workers run as another user when it is started as root
    cluster = Cluster(plan, nginx, workdir)

    def stop(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        cluster.start()
        return cluster.run()
    except KeyboardInterrupt:
        return 0
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
