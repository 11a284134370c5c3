"""The launcher's two fixes (gpuplan_ui/serve.py): TCP_NODELAY on accepted connections, and a limit
on concurrent script runs that a network wait can lend out."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import pytest

from gpuplan_ui import fetches, serve


def _nodelay_of_accepted(listening: socket.socket) -> int:
    """Serve one connection with asyncio on this listening socket; TCP_NODELAY of the server side."""

    async def run() -> int:
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        def on_conn(reader, writer):
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_conn, sock=listening)
        port = listening.getsockname()[1]
        _, w = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(seen, 5)
        finally:
            w.close()
            server.close()
            await server.wait_closed()

    # In a thread of its own: the browser tests (Playwright's sync API) may leave an event loop running
    # in the main thread, where asyncio.run() refuses to start.
    out: list = []
    t = threading.Thread(target=lambda: out.append(asyncio.run(run())), daemon=True)
    t.start()
    t.join(10)
    return out[0]


def _listening(proto: int = 0) -> socket.socket:
    # What Streamlit 1.67's _bind_socket does: socket.socket(family=...) leaves proto at 0.
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    s.setblocking(False)
    return s


def test_a_socket_bound_like_streamlit_gets_no_nodelay_and_the_fix_gives_it():
    plain = _listening()
    assert plain.proto == 0
    assert _nodelay_of_accepted(plain) == 0  # asyncio skips proto-0 sockets: Nagle stays on

    fixed = serve._tcp_proto(_listening())
    assert fixed.proto == socket.IPPROTO_TCP
    assert _nodelay_of_accepted(fixed) == 1


def test_streamlit_binding_is_patched_and_keeps_address_and_port():
    from streamlit.web.server.starlette import starlette_server

    original = starlette_server._bind_socket
    try:
        assert serve.patch_nodelay()
        assert serve.patch_nodelay()  # idempotent: not wrapped twice
        sock = starlette_server._bind_socket("127.0.0.1", 0, 8)
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.getsockname()[0] == "127.0.0.1"
        assert _nodelay_of_accepted(sock) == 1
    finally:
        starlette_server._bind_socket = original


def _concurrency_probe(slots, n_threads: int, lend: bool) -> int:
    """Run n threads through limited(); return the most that were inside at once."""
    inside = 0
    most = 0
    lock = threading.Lock()
    all_in = threading.Barrier(n_threads, timeout=2)

    def work():
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        if lend:
            with serve.released(), contextlib.suppress(threading.BrokenBarrierError):
                all_in.wait()  # only passes if every thread got in while the others lent their slot
        with lock:
            inside -= 1

    run = serve.limited(work, slots)
    threads = [threading.Thread(target=run, daemon=True) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return most


def test_one_slot_runs_scripts_one_at_a_time():
    assert _concurrency_probe(threading.BoundedSemaphore(1), 4, lend=False) == 1


def test_a_run_waiting_on_the_network_lends_its_slot():
    assert _concurrency_probe(threading.BoundedSemaphore(1), 3, lend=True) == 3


def test_released_outside_the_launcher_is_a_no_op():
    with serve.released():
        pass


@pytest.mark.parametrize("raw", ["0", "-2", "two", ""])
def test_a_bad_run_limit_is_refused_with_the_variable_named(monkeypatch, raw):
    monkeypatch.setenv(serve.RUNS_ENV, raw)
    with pytest.raises(SystemExit, match=serve.RUNS_ENV):
        serve._runs_from_env()


def test_run_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv(serve.RUNS_ENV, "3")
    assert serve._runs_from_env() == 3
    monkeypatch.delenv(serve.RUNS_ENV)
    assert serve._runs_from_env() == 1


def test_two_runs_fetching_the_same_config_do_not_wait_on_each_other(monkeypatch):
    """Two sessions ask for the same Hugging Face id at once, one run slot between them. The first
    fetches (slow network) inside Streamlit's per-value cache lock; the second must not sit on the slot
    while it waits for that lock, or the first could never take the slot back (a deadlock)."""
    import gpuplan_core.pricing.fetch

    def slow_fetch(model_id, **kw):
        time.sleep(0.3)
        return '{"model_type": "llama"}'

    monkeypatch.setattr(gpuplan_core, "fetch_hf_config", slow_fetch)
    fetches._fetch_hf_config.clear()
    slots = threading.BoundedSemaphore(1)
    got = []
    threads = [
        threading.Thread(
            target=serve.limited(lambda: got.append(fetches.hf_config("owner/same-model")), slots), daemon=True
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
        time.sleep(0.05)  # the first is inside the fetch when the second asks
    for t in threads:
        t.join(5)
    assert got == [('{"model_type": "llama"}', None)] * 2
