"""A minimal Streamlit websocket client for load benchmarks (loopback only, bounded).

Speaks the app's own protocol (streamlit.proto): opens a session the way the browser does (XSRF
cookie from /_stcore/health, token in the websocket subprotocol), asks for a rerun with a query
string, and times until the server reports the script finished.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlparse

import requests
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SMALL = 512  # bytes: a script_finished message is a few dozen; anything larger is an element to count, not read


class Session:
    def __init__(self, base_url: str):
        self.base = base_url.rstrip("/")
        self.ws = None
        self.deltas = 0

    async def connect(self) -> None:
        r = requests.get(self.base + "/_stcore/health", timeout=5)
        xsrf = r.cookies.get("_streamlit_xsrf", "")
        host = urlparse(self.base).netloc
        self.ws = await websockets.connect(
            f"ws://{host}/_stcore/stream",
            subprotocols=["streamlit", xsrf] if xsrf else ["streamlit"],
            additional_headers={"Origin": self.base, "Cookie": f"_streamlit_xsrf={xsrf}"},
            max_size=2**26,
            open_timeout=10,
        )

    async def rerun(self, query: str, page_name: str = "", timeout: float = 30.0) -> float:
        """Ask for a run of the page with this query string; seconds until script_finished."""
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_name = page_name
        t = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        deadline = t + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout=max(0.1, deadline - time.perf_counter()))
            if len(raw) > SMALL:  # an element (a chart, a table): the load generator need not parse it
                self.deltas += 1
                continue
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "delta":
                self.deltas += 1
            if kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return time.perf_counter() - t

    async def element_kinds(self, query: str, page_name: str = "", timeout: float = 60.0) -> list[str]:
        """Run the page with this query string; the kinds of the elements it sent (e.g. "exception")."""
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_name = page_name
        await self.ws.send(msg.SerializeToString())
        kinds: list[str] = []
        deadline = time.perf_counter() + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout=max(0.1, deadline - time.perf_counter()))
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                kinds.append(fm.delta.new_element.WhichOneof("type"))
            if kind == "script_finished" and fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                kinds = []  # the app starts again (on a cleaned link): what counts is the run that follows
            elif kind == "script_finished":
                return kinds

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


def page_element_kinds(base_url: str, query: str, page_name: str = "") -> list[str]:
    """element_kinds from synchronous code, on an event loop of its own in a thread of its own (callers
    such as pytest may already have a loop running in theirs)."""
    import threading

    out: list = []

    async def go():
        s = Session(base_url)
        await s.connect()
        try:
            out.append(await s.element_kinds(query, page_name))
        finally:
            await s.close()

    def run():
        try:
            asyncio.run(go())
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(90)
    if not out:
        raise TimeoutError("no answer from the app")
    if isinstance(out[0], Exception):
        raise out[0]
    return out[0]
