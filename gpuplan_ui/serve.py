"""Start the app: ``python -m gpuplan_ui.serve [streamlit options]`` is ``streamlit run app.py [options]``
with two fixes to how Streamlit 1.67 serves many people at once. Both were found and measured with
bench/bench_load.py and bench/st_client.py (figures in the README).

1. TCP_NODELAY on every connection. Streamlit binds its listening socket with
   ``socket.socket(family=...)``, so the socket's ``proto`` field is 0, and asyncio turns Nagle's
   algorithm off only for sockets whose ``proto`` is ``IPPROTO_TCP`` (``asyncio.base_events._set_nodelay``).
   A rerun sends many small websocket frames in a row; with Nagle on, the second waits until the
   first is acknowledged, and the receiver (a browser, nginx, any Linux client) delays that
   acknowledgement by ~40 ms. A one-line app took 48 ms per rerun under ``streamlit run`` and 7 ms
   with this fix. The fix re-wraps the bound socket with ``proto=IPPROTO_TCP``; accepted connections
   inherit it and asyncio then sets TCP_NODELAY on each one itself.

2. At most ``GPUPLAN_MAX_CONCURRENT_RUNS`` script runs at a time (default 1). Streamlit runs every
   session's script in its own thread; under load dozens of them contend for the GIL with the event
   loop that sends their messages, and each message hand-off waits for a GIL switch. Measured with
   50 sessions: p50 3.0 s unlimited vs 0.5 s with one run at a time, at the same work. A run that
   waits for the network (a Hugging Face fetch) gives its slot back meanwhile (``released()``); it
   must not wait on any lock another run may hold while it still holds its slot.

3. ``--replicas N`` (or ``GPUPLAN_REPLICAS``): N such processes behind Debian's nginx with the bundled
   ``deploy/nginx.conf`` (sticky sessions), for more sessions than one process keeps up with (cluster.py).

If a later Streamlit moves what these patch, the server starts unpatched and says so on stderr.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"
RUNS_ENV = "GPUPLAN_MAX_CONCURRENT_RUNS"

_slots: threading.BoundedSemaphore | None = None
_holder = threading.local()


def _tcp_proto(sock: socket.socket) -> socket.socket:
    """The same listening socket, with its proto field set to IPPROTO_TCP (what asyncio checks)."""
    if sock.type != socket.SOCK_STREAM or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def patch_nodelay() -> bool:
    """Wrap Streamlit's socket binding; True when the patch is in place."""
    try:
        from streamlit.web.server.starlette import starlette_server
    except ImportError:
        return False
    original = getattr(starlette_server, "_bind_socket", None)
    if original is None:
        return False
    if getattr(original, "_gpuplan", False):
        return True

    def bind_socket(*args, **kwargs):
        return _tcp_proto(original(*args, **kwargs))

    bind_socket._gpuplan = True  # type: ignore[attr-defined]
    starlette_server._bind_socket = bind_socket
    return True


def limit_runs(n: int) -> bool:
    """Let at most n script runs execute at once (the others wait their turn, not for the GIL)."""
    global _slots
    if n < 1:
        raise ValueError(f"{RUNS_ENV} must be a whole number >= 1, got {n}")
    try:
        from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    except ImportError:
        return False
    original = getattr(ScriptRunner, "_run_script", None)
    if original is None:
        return False
    original = getattr(original, "_gpuplan_original", original)
    _slots = threading.BoundedSemaphore(n)
    ScriptRunner._run_script = limited(original, _slots)
    return True


def limited(func, slots: threading.BoundedSemaphore):
    """func, run only while holding one of slots (released() inside it lends the slot out)."""

    def run(*args, **kwargs):
        with slots:
            _holder.slots = slots
            try:
                return func(*args, **kwargs)
            finally:
                _holder.slots = None

    run._gpuplan_original = func  # type: ignore[attr-defined]
    return run


@contextlib.contextmanager
def released():
    """Give this run's slot back while it waits on something slow that is not the CPU (a network
    fetch), so the other sessions are not held up; take it back afterwards. A no-op outside the
    launcher (AppTest, plain ``streamlit run``)."""
    slots = getattr(_holder, "slots", None)
    if slots is None:
        yield
        return
    slots.release()
    _holder.slots = None
    try:
        yield
    finally:
        slots.acquire()
        _holder.slots = slots


def _runs_from_env() -> int:
    raw = os.environ.get(RUNS_ENV, "1").strip()
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise SystemExit(f"gpuplan: {RUNS_ENV} must be a whole number >= 1 (got {raw!r}).")
    return n


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    from gpuplan_ui import cluster

    plan = cluster.plan_from(args)  # --replicas N: N processes like this one behind nginx (cluster.py)
    if plan.replicas > 1:
        raise SystemExit(cluster.serve_replicas(plan))
    args = cluster.take_option(args, "--replicas")[1]
    if not patch_nodelay():
        print(
            "gpuplan: could not enable TCP_NODELAY (Streamlit's server changed); reruns may be ~40 ms slower.",
            file=sys.stderr,
        )
    if not limit_runs(_runs_from_env()):
        print(
            "gpuplan: could not limit concurrent script runs (Streamlit changed); heavy load will be slower.",
            file=sys.stderr,
        )
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *args]
    cli.main()


if __name__ == "__main__":
    main()
