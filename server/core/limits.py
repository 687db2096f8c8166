"""Limits per token and per address, one table for the websocket and HTTP paths alike.

A socket's own bucket (server/web/ws.py) stops one socket flooding; a player opening
twenty sockets, or posting commands over HTTP, went around it (372 commands a second on
one join link). Here a token's commands share one bucket whichever way they come, a token
holds at most ``sockets`` sockets at once, and an address that sent ``bad`` unknown or
revoked tokens within ``window`` seconds is refused for the rest of that window (a guess
at tokens costs a minute per ten tries). Each refusal says when to come back, and depends
on the caller's own counts alone, never on another's state.
"""

from __future__ import annotations

import collections
import time
from typing import Callable


class Bucket:
    """A token bucket: ``burst`` at once, ``rate`` a second after that."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: int, now: float):
        self.rate, self.burst, self.tokens, self.stamp = rate, burst, float(burst), now

    def take(self, now: float) -> float:
        """0 when one is taken; else the seconds until one is there."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate if self.rate > 0 else 60.0


class Limits:
    def __init__(self, *, rate: float, burst: int, sockets: int = 32, bad: int = 10,
                 window: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.sockets, self.bad, self.window = rate, burst, sockets, bad, window
        self.clock = clock
        self._commands: dict[str, Bucket] = {}
        self._open: collections.Counter[str] = collections.Counter()
        self._failures: dict[str, collections.deque[float]] = {}

    def command(self, grant: str) -> float:
        """Takes one command of this token's budget: 0, or the seconds to wait."""
        now = self.clock()
        bucket = self._commands.get(grant)
        if bucket is None:
            if len(self._commands) > 100_000:  # full buckets forgotten: they would be full again
                self._commands = {g: b for g, b in self._commands.items() if b.tokens < b.burst}
            bucket = self._commands[grant] = Bucket(self.rate, self.burst, now)
        return bucket.take(now)

    def open_socket(self, grant: str) -> bool:
        """One more socket for this token, if it holds fewer than ``sockets``."""
        if self._open[grant] >= self.sockets:
            return False
        self._open[grant] += 1
        return True

    def close_socket(self, grant: str) -> None:
        self._open[grant] -= 1
        if self._open[grant] <= 0:
            del self._open[grant]

    def refused(self, address: str) -> float:
        """The seconds this address must wait before its next credential is looked at."""
        failures = self._failures.get(address)
        if not failures:
            return 0.0
        now = self.clock()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[address]
            return 0.0
        return failures[0] + self.window - now if len(failures) >= self.bad else 0.0

    def failed(self, address: str) -> None:
        """An unknown or revoked credential from this address."""
        self._failures.setdefault(address, collections.deque()).append(self.clock())
