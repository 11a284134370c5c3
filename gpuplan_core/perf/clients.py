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


@dataclass(frozen=True)
class BenchClient:
    """A benchmark client and the first-token cost it adds beyond the engine's (``request_in_s``: engine ->
    seconds; one client's path differs by the engine's front end it talks to, so it is kept per engine), fitted on
    the training runs of its own sources only (bench/fit_serving.py: the light-load rule of
    serving_loso.fit_client_costs); an engine it has no light-load run with gets 0.0."""

    name: str
    what: str
    request_in_s: tuple[tuple[str, float], ...] = ()
    fitted_on: str = "no light-load runs of dense models"
    front_end: bool = False  # its bursts wait on a serial front end (module docstring): ``ingest`` is fitted
    ingest: tuple[tuple[str, float, float], ...] = ()  # engine, its front end's seconds per request and per token
    ingest_fitted_on: str = "no bursts"

    def cost_s(self, engine: str) -> float:
        return dict(self.request_in_s).get(engine, 0.0)

    def ingest_s(self, engine: str) -> tuple[float, float]:
        """The serial front end a burst from this client waits on with ``engine`` (seconds per request, per prompt
        token; module docstring): fitted on the bursts of its own sources (serving_loso.fit_ingest)."""
        return next(((a, b) for e, a, b in self.ingest if e == engine), (0.0, 0.0))


BENCH_CLIENTS: dict[str, BenchClient] = {
    c.name: c
    for c in (
        BenchClient(
            "triton-perf-overview",
            "TensorRT-LLM v0.14 perf-overview's online client against Triton's tensorrtllm_backend (tool not named)",
            (("trtllm", 0.0110),),
            "trt014on: 5 training rows",
        ),
        BenchClient("aiperf", "NVIDIA AIPerf / GenAI-Perf, closed-loop concurrency over HTTP (NIM's guide)"),
        BenchClient(
            "lmdeploy-profile-generation",
            "LMDeploy profile_generation.py: threads calling TurboMind in-process (no HTTP)",
            (("trtllm", 0.0078),),
            "lmdeploy: 3 training rows",
        ),
        BenchClient(
            "vllm-bench-serve-chat",
            "vllm bench serve --backend openai-chat (streamed /v1/chat/completions), as GPUStack ran it",
            (("vllm", 0.0486), ("sglang", 0.0273), ("trtllm", 0.0380)),
            "gpustack-q3-8b-h100: 12 vLLM and 15 SGLang training rows; TensorRT-LLM (no training row) from both",
            front_end=True,
            ingest=(("vllm", 0.0157, 1.07e-5), ("sglang", 0.0007, 1.43e-5), ("trtllm", 0.0, 3.12e-5)),
            ingest_fitted_on="GPUStack's training bursts: 12 vLLM, 16 SGLang and 13 TensorRT-LLM first-token rows",
        ),
        BenchClient(
            "vllm-benchmark-serving",
            "vLLM benchmarks/benchmark_serving.py over /v1/completions (dstack's runs, one a modified copy)",
        ),
        BenchClient(
            "sglang-bench-serving",
            "SGLang bench_serving.py over HTTP (dstack's DeepSeek-R1 runs, the SGLang cookbook's)",
        ),
        BenchClient(
            "trtllm-bench", "trtllm-bench throughput, in-process (bursts; the DeepSeek-R1 blog's --concurrency runs)"
        ),
    )
}

# the client that sent each published source's runs (data/serving_measurements.md says how each was run)
SOURCE_CLIENTS = {
    "trt014on": "triton-perf-overview",
    "trt014off": "trtllm-bench",
    "trt10off": "trtllm-bench",
    "nim": "aiperf",
    "lmdeploy": "lmdeploy-profile-generation",
    "dstack-405b": "vllm-benchmark-serving",
    "dstack-tgi-vllm": "vllm-benchmark-serving",
    "dstack-dsr1": "sglang-bench-serving",
    "sglcb-dsr1-b200": "sglang-bench-serving",
    "sglcb-l70b-a100": "sglang-bench-serving",
    "sglcb-dsv3-mi300x": "sglang-bench-serving",
    "trtblog-dsr1": "trtllm-bench",
    **{
        s: "vllm-bench-serve-chat"
        for s in (
            "gpustack-q3-8b-h100",
            "gpustack-q3-14b-h100",
            "gpustack-q3-14b-a100",
            "gpustack-q3-32b-h100",
            "gpustack-q3-32b-a100",
            "gpustack-dsr1",
        )
    },
}


NO_CLIENT_NOTE = (
    "First-token times include no benchmark or HTTP client's cost (the published runs' clients add 0-49 ms per "
    "request, perf/clients.py); calibrate to your deployment to add yours."
)


def client_of(source: str) -> str | None:
    """The benchmark client a published source's runs were sent by (None: not known, as for your own runs)."""
    return SOURCE_CLIENTS.get(source)


def client_cost(source: str, engine: str, costs: dict[tuple[str, str], float] | None = None) -> float:
    """The first-token cost (seconds) that the client which sent ``source``'s runs adds to ``engine``'s: from
    ``costs`` ((client, engine) -> seconds, a left-out-source fit) or the fitted ``BENCH_CLIENTS``; 0.0 for a
    client neither knows."""
    client = client_of(source)
    if client is None:
        return 0.0
    if costs is not None:
        return costs.get((client, engine), 0.0)
    return BENCH_CLIENTS[client].cost_s(engine) if client in BENCH_CLIENTS else 0.0


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


def client_ingest(source: str, engine: str, fitted: dict | None = None) -> tuple[float, float]:
    """The serial front end (seconds per request, per prompt token) a burst from ``source``'s client waits on with
    ``engine``: from ``fitted`` ((client, engine) -> the pair, a left-out-source fit) or ``BENCH_CLIENTS``; none for
    a client neither knows."""
    client = client_of(source)
    if client is None:
        return 0.0, 0.0
    if fitted is not None:
        return fitted.get((client, engine), (0.0, 0.0))
    return BENCH_CLIENTS[client].ingest_s(engine) if client in BENCH_CLIENTS else (0.0, 0.0)


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
