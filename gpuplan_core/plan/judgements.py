"""The layout search's memory of its judgements (plan/search.py ``_judged``): the most recent ``size`` kept, as
functools.lru_cache keeps them, and able to say whether one is kept without judging it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int


class Judgements:
    """The layouts' judgements, the most recent ``size`` kept (functools.lru_cache's rule), which can also say
    whether one is kept without judging it (``judge_all`` sends only those that are not to its threads)."""

    def __init__(self, size: int, judge):
        """``judge(*key)``: the judgement of the layout ``key`` names (made outside the lock)."""
        self.size, self.judge, self.lock, self.kept = size, judge, threading.Lock(), OrderedDict()
        self.hits = self.misses = 0

    def __contains__(self, key: tuple) -> bool:
        with self.lock:
            return key in self.kept

    def __call__(self, *key):
        with self.lock:
            got = self.kept.get(key)
            if got is not None:
                self.kept.move_to_end(key)
                self.hits += 1
                return got
            self.misses += 1
        got = self.judge(*key)  # outside the lock: judgements of other layouts go on
        with self.lock:
            self.kept[key] = got
            if len(self.kept) > self.size:
                self.kept.popitem(last=False)
        return got

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self.size, len(self.kept))

    def cache_clear(self) -> None:
        with self.lock:
            self.kept.clear()
            self.hits = self.misses = 0
