"""The load a simulated replica serves (simulate.py): how requests arrive and how long they are (``Shape``), how
many clients or what rate send them (``Load``), and who sends what when during a run (``Clients``).

Load is sent as benchmark clients and production send it: ``concurrency`` N clients that all start at once and
send their next request when the last one ends (closed loop: identical requests fall into waves), or arrivals at a
``request_rate`` that are Poisson or bursty (gamma gaps, coefficient of variation 2). Lengths are fixed, uniform
between (1 - spread) and 1 times the set lengths, or long-tailed (lognormal, the spread of chat traffic). A fixed
seed makes every run reproducible.

The published runs were sent by benchmark clients (``BenchClient``): each adds its own cost before the first token
(HTTP, streaming, a chat endpoint's template) on top of the engine's. That cost is a constant of the client, named
here and applied only to runs that client sent (``client_cost``); a run from a client it does not know, and the
app's own answer, gets none.

A client that sends many requests at once can also be held up by a serial FRONT END before the engine (``Shape``'s
``ingest_s_per_request`` and ``ingest_s_per_token``, ``BenchClient.ingest``): one worker that takes each request
in the order it was sent, for a fixed time plus a time per prompt token, and hands what it has taken in to the
engine when it has nothing more to take in (``ingest_done``). It is a named constant of the client that showed it
(``vllm bench serve`` over the chat endpoint: a burst of 1,000 128-token prompts waits 18-19 s for its first tokens
on vLLM on one A100, one H100 or eight H200 alike, with Qwen3-14B or DeepSeek-R1), fitted on its bursts and
applied only to its runs (``front_end``); zero for every other run and for the app's own answer. No other client's
bursts show a wait that does not depend on the GPU.
"""

from __future__ import annotations

import heapq
import math
import random
import threading
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .bench_clients import (  # noqa: F401 - the clients' tables, re-exported where callers read them
    BENCH_CLIENTS,
    NO_CLIENT_NOTE,
    SOURCE_CLIENTS,
    BenchClient,
    client_cost,
    client_ingest,
    client_of,
)
from .replica import Replica
from .schedulers import EngineLoop

Arrival = Literal["poisson", "bursty", "closed"]
Lengths = Literal["fixed", "uniform", "chat"]
BURSTY_SHAPE = 0.25  # gamma shape of bursty gaps: coefficient of variation 1 / sqrt(0.25) = 2
CHAT_SIGMA = 0.9  # lognormal sigma of chat lengths (ShareGPT outputs: coefficient of variation ~1)


@dataclass(frozen=True, kw_only=True)
class Shape:
    """How requests arrive and how long they are. ``requests``: how many a run sends (None: enough for steady
    state); ``seed``: the run's random draws (the same seed, the same run)."""

    arrival: Arrival = "poisson"
    lengths: Lengths = "fixed"
    length_spread: float = 0.2
    requests: int | None = None
    seed: int = 0
    ingest_s_per_request: float = 0.0  # the serial front end's time per request (module docstring)
    ingest_s_per_token: float = 0.0  # and per prompt token

    def __post_init__(self):
        if not 0 <= self.length_spread < 1:
            raise ValueError("length_spread: must be at least 0 and below 1")
        if self.ingest_s_per_request < 0 or self.ingest_s_per_token < 0:
            raise ValueError("ingest: the front end's times must be at least 0")

    @property
    def ingests(self) -> bool:
        return self.ingest_s_per_request > 0 or self.ingest_s_per_token > 0


@dataclass(frozen=True, kw_only=True)
class Load:
    """The load on the replica: ``concurrency`` clients (closed loop) or ``request_rate`` arrivals per second
    (open loop), exactly one, in a ``shape``."""

    concurrency: int | None = None
    request_rate: float | None = None
    shape: Shape = Shape()

    def __post_init__(self):
        if (self.concurrency is None) == (self.request_rate is None):
            raise ValueError("load: give exactly one of concurrency or request_rate")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency: must be at least 1")
        if self.request_rate is not None and not self.request_rate > 0:
            raise ValueError("request_rate: must be more than 0 requests per second")

    @property
    def closed(self) -> bool:
        return self.concurrency is not None

    def count(self) -> int:
        if self.shape.requests:
            return int(self.shape.requests)
        if self.closed:
            return int(min(3000, max(200, 4 * self.concurrency)))
        return 400


def lengths(r: Replica, shape: Shape, n: int, rng: random.Random | RunDraws) -> tuple[list[int], list[int]]:
    """Each request's prompt and output tokens (``length_arrays`` as lists)."""
    ins, outs = length_arrays(r, shape, n, rng)
    return ins.tolist(), outs.tolist()


def length_arrays(r: Replica, shape: Shape, n: int, rng: random.Random | RunDraws) -> tuple[np.ndarray, np.ndarray]:
    """Each request's prompt and output tokens (int64): the set lengths, or the set lengths times their unit draws
    rounded half to even (Python's ``round``, numpy's ``rint``) and at least 1; a request longer than the whole KV
    cache is cut to fit (its output to at most a quarter of the room, its prompt to the rest)."""
    i, o = r.input_tokens, r.output_tokens
    u_in, u_out = _length_draws(shape, n, rng)
    if u_in is None:
        return np.full(n, i, np.int64), np.full(n, o, np.int64)
    ins = np.maximum(1, np.rint(i * np.asarray(u_in))).astype(np.int64)
    outs = np.maximum(1, np.rint(o * np.asarray(u_out))).astype(np.int64)
    room = max(2, r.kv_tokens)  # a request longer than the whole cache could never run: cut to fit
    long = ins + outs > room
    if long.any():
        outs[long] = np.maximum(1, np.minimum(outs[long], room // 4))
        ins[long] = np.maximum(1, np.minimum(ins[long], room - outs[long]))
    return ins, outs


def _arrivals(load: Load, n: int, rng: random.Random | RunDraws) -> np.ndarray:
    """Each request's send time: the gaps' unit draws (``_gap_draws``) over the rate, summed in order."""
    rate = float(load.request_rate)
    if load.shape.arrival == "bursty":
        gaps = _gap_draws(load.shape, n, rng) * (1 / (rate * BURSTY_SHAPE))
    else:
        gaps = _gap_draws(load.shape, n, rng) / rate
    return np.cumsum(gaps)


# A run's random draws, remembered by what they depend on: the generator's state, the length shape, the arrival
# shape and the count (not the lengths, the rate or the replica), so the capacity search's runs at one shape draw
# them once. A length is the set length times a unit draw (uniform's 1 - spread .. 1, or lognormal's with mean 1),
# a gap a unit draw over the rate (expovariate(1.0)'s -log(1 - u), gammavariate(shape, 1.0)'s x): what
# random.Random computes with the length or the rate inside, float for float (x / rate, x * beta;
# tests/core/perf/test_clients.py). The generator's state after the draws is remembered with them and restored, so
# what the run draws next is what it drew before.
_DRAWS: dict[tuple, tuple] = {}
_DRAWS_LOCK = threading.Lock()  # the app's sessions run in threads


class RunDraws:
    """A run's random draws from ``random.Random(seed)``, each remembered by the seed and the draws made before it
    (which fix the generator's state exactly), so a run whose draws are all remembered makes no generator: setting
    a Mersenne Twister's state takes ~0.35 ms, a capacity search's run ~2 ms in all. The generator is made (and
    brought to the state after the earlier draws, by drawing them again) only for a draw not yet remembered."""

    def __init__(self, seed: int):
        self.seed, self.made = seed, []  # the draws so far: (key, how it is drawn)
        self._rng: random.Random | None = None
        self._drawn = 0  # how many of ``made`` the generator has drawn

    def take(self, key: tuple, draw):
        path = (self.seed, *(k for k, _ in self.made), key)
        got = _DRAWS.get(path)
        if got is None:
            if self._rng is None or self._drawn != len(self.made):
                self._rng = random.Random(self.seed)
                for _, earlier in self.made:
                    earlier(self._rng)
            got = draw(self._rng)
            self._drawn = len(self.made) + 1
            _keep(path, got)
        self.made.append((key, draw))
        return got


def _keep(key: tuple, got) -> None:
    with _DRAWS_LOCK:
        while len(_DRAWS) >= 128:  # a bounded memory (two generator states, ~45 kB, an entry): oldest first
            del _DRAWS[next(iter(_DRAWS))]
        _DRAWS[key] = got


def _remembered(key: tuple, rng: random.Random | RunDraws, draw) -> tuple:
    """``draw(rng)``'s result for ``key`` when ``rng`` starts from the state it had when the key was first drawn
    (a ``RunDraws``: its own memory, by the seed and the draws before)."""
    if isinstance(rng, RunDraws):
        return rng.take(key, draw)
    start = rng.getstate()
    got = _DRAWS.get((key, start))
    if got is None:
        got = (draw(rng), rng.getstate())
        _keep((key, start), got)
    rng.setstate(got[1])
    return got[0]


def _length_draws(shape: Shape, n: int, rng: random.Random | RunDraws) -> tuple[tuple | None, tuple | None]:
    if shape.lengths == "fixed" or (shape.lengths == "uniform" and shape.length_spread == 0):
        return None, None
    if shape.lengths == "uniform":
        lo = 1 - shape.length_spread
        one = lambda g: tuple(g.uniform(lo, 1) for _ in range(n))  # noqa: E731
    else:  # lognormal with the set lengths as means
        mu = -(CHAT_SIGMA**2) / 2
        one = lambda g: tuple(g.lognormvariate(mu, CHAT_SIGMA) for _ in range(n))  # noqa: E731
    return _remembered(("lengths", shape.lengths, shape.length_spread, n), rng, lambda g: (one(g), one(g)))


def _gap_draws(shape: Shape, n: int, rng: random.Random | RunDraws) -> np.ndarray:
    if shape.arrival == "bursty":
        draw = lambda g: np.array([g.gammavariate(BURSTY_SHAPE, 1.0) for _ in range(n)])  # noqa: E731
    else:
        draw = lambda g: np.array([g.expovariate(1.0) for _ in range(n)])  # noqa: E731
    return _remembered(("gaps", shape.arrival, n), rng, draw)


def ingest_done(shape: Shape, sent: np.ndarray, prompt: np.ndarray) -> np.ndarray:
    """When the serial front end hands each request to the engine (seconds; NaN for one not yet sent): it takes
    them in the order they were sent, each starting when it was sent or the one before it was done, whichever is
    later, for ``ingest_s_per_request`` + ``ingest_s_per_token`` x its prompt tokens, and hands over what it has
    taken in when it has nothing left to take in (the end of its busy spell: a burst reaches the engine at once,
    after the whole burst; a request sent to an idle front end, after its own time)."""
    done = np.full(len(sent), math.nan)
    order = [k for k in np.argsort(sent, kind="stable") if not math.isnan(sent[k])]
    free, spell = -math.inf, []
    for k in order:
        if sent[k] > free and spell:  # idle before this one: the spell so far is handed over
            done[spell] = free
            spell = []
        free = max(free, sent[k]) + shape.ingest_s_per_request + shape.ingest_s_per_token * prompt[k]
        spell.append(k)
    if spell:
        done[spell] = free
    return done


def first_sends(load: Load, n: int, rng: random.Random | RunDraws) -> tuple[int, list[float]]:
    """How many requests are sent before any ends (a closed loop's clients, or every open-loop arrival) and each
    request's send time (NaN for a closed loop's later ones: they are sent when one ends)."""
    first, sent = send_array(load, n, rng)
    return first, sent.tolist()


def send_array(load: Load, n: int, rng: random.Random | RunDraws) -> tuple[int, np.ndarray]:
    """``first_sends`` with the send times as a float64 array (the compiled step loop's)."""
    if load.closed:
        first = min(n, load.concurrency)
        sent = np.full(n, math.nan)
        sent[:first] = 0.0
        return first, sent
    return n, _arrivals(load, n, rng)


class Clients:
    """Who sends what when: the send and engine-arrival time of each request, and for a closed loop the next
    request each client sends when its last one ends."""

    def __init__(self, load: Load, n: int, loop: EngineLoop, rng: random.Random):
        self.load, self.n, self.loop = load, n, loop
        self.fin = [math.nan] * n
        self.next_id, self.sent = first_sends(load, n, rng)
        self.arrive = [t + loop.request_in_s for t in self.sent]
        self.queue = [(self.arrive[k], k) for k in range(self.next_id)]  # engine arrivals not yet seen
        heapq.heapify(self.queue)

    def next_arrival(self) -> float:
        return self.queue[0][0] if self.queue else math.inf

    def arrived(self, now: float) -> list[int]:
        out = []
        while self.queue and self.queue[0][0] <= now:
            out.append(heapq.heappop(self.queue)[1])
        return out

    def finish(self, k: int, now: float) -> int:
        """Request ``k`` ends now; a closed-loop client sends its next one (if the run has any left)."""
        self.fin[k] = now
        if self.load.closed and self.next_id < self.n:
            j = self.next_id
            self.sent[j] = now + self.loop.request_out_s
            self.arrive[j] = self.sent[j] + self.loop.request_in_s
            heapq.heappush(self.queue, (self.arrive[j], j))
            self.next_id += 1
        return 1
