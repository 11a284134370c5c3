"""Compiled inner loops: numba's ``njit`` where numba is installed (a requirement: the step loop runs ~10x faster
compiled), plain Python otherwise, so the core still answers, slower, where numba has no wheel.

``njit`` compiles with ``cache=True``: the machine code is written to disk (under the package, or, where that folder
is read only, under numba's user cache) on first use and read back by every later process, so the compile is paid
once per installation, not per process. numba checks a cached function against its own source file alone, so
compiled code that calls another module's compiled function (the step loop calls steps.py's and step_time.py's)
would read stale machine code after an edit to the callee only: where the package's folder is writable (a
checkout), the cache lives under ``__pycache__/numba-<digest of every compiled module's source>``, so any edit to
them starts a fresh cache (an installed, read-only copy keeps numba's default: its sources do not change).

``objmode`` is numba's way back into Python from compiled code (the step loop asks the Python step model for a step
of a replica the compiled one does not cover, step_time.py); ``int_dict``, ``cell_dict`` and ``array_list`` are the
typed containers compiled code reads and writes, shared by every run of one step model.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

try:  # GPUPLAN_NO_NUMBA=1: the plain-Python path (a test that both give the same runs, or a machine without numba)
    if os.environ.get("GPUPLAN_NO_NUMBA"):
        raise ImportError("GPUPLAN_NO_NUMBA is set")
    import numba
    from numba import objmode, types
    from numba.typed import Dict, List

    NUMBA = True
except ImportError:  # pragma: no cover - exercised with GPUPLAN_NO_NUMBA=1
    numba = None
    NUMBA = False


_COMPILED_SOURCES = (
    "perf/step_loop.py",
    "perf/step_queues.py",
    "perf/simulate.py",
    "perf/steps.py",
    "perf/step_time.py",
    "perf/step_pack.py",
    "perf/schedulers.py",
    "common/jit.py",
)


def _use_source_keyed_cache() -> None:
    """Point numba's cache at a folder named by the compiled modules' sources, where the package is writable."""
    root = Path(__file__).resolve().parents[1]
    if numba.config.CACHE_DIR or not os.access(root, os.W_OK):
        return  # NUMBA_CACHE_DIR set by the environment, or an installed read-only copy
    digest = hashlib.sha256(b"".join((root / f).read_bytes() for f in _COMPILED_SOURCES)).hexdigest()[:16]
    numba.config.CACHE_DIR = str(root / "__pycache__" / f"numba-{digest}")


if NUMBA:
    _use_source_keyed_cache()


def njit(fn):
    """``fn`` compiled (nopython, cached on disk) where numba is installed; ``fn`` itself otherwise."""
    return numba.njit(cache=True)(fn) if NUMBA else fn


def njit_nogil(fn):
    """``njit``, and the compiled ``fn`` lets go of Python's GIL while it runs (its ``objmode`` blocks take it
    back), so threads run it side by side: the step loop, while the layout search judges layouts in threads
    (plan/search.py ``judge_all``). Whatever it writes must be one thread's (steps.StepTimes' lock)."""
    return numba.njit(cache=True, nogil=True)(fn) if NUMBA else fn


if not NUMBA:

    def objmode(**_types):  # noqa: F811 - the plain-Python stand-in: the block runs as written
        return contextlib.nullcontext()


# Typed containers made inside compiled code: numba's Dict.empty / List.empty_list called from Python take ~1-4 ms
# each (their type dispatch), made by a compiled function ~5 us; a StepTimes makes four.
if NUMBA:
    _CELL_KEY, _CELL_VALUE, _ARRAY = types.UniTuple(types.int64, 2), types.UniTuple(types.float64, 8), types.int64[::1]

    @njit
    def _int_dict():
        return Dict.empty(types.int64, types.int64)

    @njit
    def _cell_dict():
        return Dict.empty(_CELL_KEY, _CELL_VALUE)

    @njit
    def _array_list():
        return List.empty_list(_ARRAY)

    @njit
    def _float_list():
        return List.empty_list(types.float64)


def int_dict():
    """An int64 -> int64 map compiled code can fill."""
    return _int_dict() if NUMBA else {}


def cell_dict():
    """A (int64, int64) -> 8 float64 map compiled code can fill (the decode grid's cells)."""
    return _cell_dict() if NUMBA else {}


def array_list():
    """A list of int64 arrays compiled code can append to."""
    return _array_list() if NUMBA else []


def float_list():
    """A list of float64 compiled code can append to."""
    return _float_list() if NUMBA else []
