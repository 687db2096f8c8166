"""MET-16 (choice): a retest/overbid window left open closes by itself after the
session's ``accept_timeout`` seconds, so a challenge never hangs on a player who walked
away. The server sends ``close_window {timeout: true}`` through the ordinary command path
(as a storyteller named "server"), so the closing is an event in the log like any other.

A timer belongs to one window: (challenge, round, status). Anything that changes it (a
retest, an overbid, an accept) cancels that timer; a new window gets a new one. After a
restart, open windows get a full timeout again (the time already spent is not known
without a clock in the domain, and a little more time never wrongs a player). A Time Out
over either side stops the clock: no timer while it lasts, a full timeout after resume.

The timers wait on a ``Clock``: the event loop's by default, a ``ManualClock`` in tests,
which moves only when the test advances it, so a test shows that a timer did not fire
without sleeping.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Protocol

from conteur.events import met
from conteur.events.model import Actor
from conteur.server.core.service import Chronicle, Executed
from conteur.server.store.interface import StoreError

log = logging.getLogger("conteur.timers")

SERVER = Actor(role="storyteller", name="server")


class Clock(Protocol):
    async def sleep(self, seconds: float) -> None:
        """Returns once ``seconds`` have passed on this clock."""
        ...


class LoopClock:
    """Real time, the running event loop's."""

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ManualClock:
    """Time that passes only when ``advance`` says so. Sleepers may wait on any event loop
    (the server's thread) while a test advances the clock from its own."""

    def __init__(self) -> None:
        self.now = 0.0
        self._lock = threading.Lock()
        self._sleepers: list[tuple[float, asyncio.AbstractEventLoop, asyncio.Future]] = []

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            sleeper = (self.now + seconds, loop, loop.create_future())
            self._sleepers.append(sleeper)
        try:
            await sleeper[2]
        finally:
            with self._lock:
                if sleeper in self._sleepers:
                    self._sleepers.remove(sleeper)

    @property
    def sleeping(self) -> int:
        """How many sleeps are under way (armed timers)."""
        with self._lock:
            return len(self._sleepers)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds
            due = [s for s in self._sleepers if s[0] <= self.now]
            for sleeper in due:
                self._sleepers.remove(sleeper)
        for _deadline, loop, future in due:
            loop.call_soon_threadsafe(_wake, future)


def _wake(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


class WindowTimers:
    def __init__(self, chronicle: Chronicle, clock: Clock | None = None):
        self.chronicle = chronicle
        self.clock = clock or LoopClock()
        self._tasks: dict[tuple[str, str], tuple[tuple, asyncio.Task]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        # when each armed window closes, on the server's clock: what phones count down to
        self._closes: dict[tuple[str, str], tuple[tuple, float]] = {}

    def bind(self, sessions: list[str]) -> None:
        """From the serving loop: arms the windows already open in the log."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        for session in sessions:
            self.check(session)

    def on_executed(self, executed: Executed) -> None:
        if not executed.events or self._loop is None:
            return
        if threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self.check, executed.session)
        else:
            self.check(executed.session)

    def on_remote(self, session: str) -> None:
        """Another process wrote to ``session`` (the store's tail, on the serving loop):
        windows it opened are armed here too, windows it closed disarmed."""
        if self._loop is not None:
            self.check(session)

    def check(self, session: str) -> None:
        state = self.chronicle.held(session)
        if state is None:  # not in memory, or behind another process's rows: read off the loop
            self._loop.create_task(self._check_read(session))
            return
        self._check(session, state)

    async def _check_read(self, session: str) -> None:
        try:
            state = await self.chronicle.state_now(session)
        except StoreError as exc:  # the store is down: the session's next event checks again
            log.warning("the windows of %s wait for the store: %s", session, exc)
            return
        self._check(session, state)

    def _check(self, session: str, state) -> None:
        delay = state.session.options.accept_timeout
        windows = {}
        # TIME-2: a closed session changes no more, so its windows stay as they were left
        if delay > 0 and state.session.status != "closed":
            for cid in met.open_windows(state):
                if met.window_paused(state, cid):
                    continue  # TIME-5: the clock waits for resume (the closing would be refused)
                ch = met.get(state, cid)
                windows[cid] = (ch.round, ch.status, ch.winner)
        for (s, cid), (key, task) in list(self._tasks.items()):
            if s == session and windows.get(cid) != key:
                task.cancel()
                del self._tasks[(s, cid)]
        for cid, key in windows.items():
            if (session, cid) not in self._tasks:
                task = self._loop.create_task(self._fire(session, cid, key, delay))
                self._tasks[(session, cid)] = (key, task)
                self._closes[(session, cid)] = (key, time.time() + delay)
        for (s, cid) in [k for k in self._closes if k[0] == session and k not in self._tasks]:
            del self._closes[(s, cid)]

    async def _fire(self, session: str, cid: str, key: tuple, delay: float) -> None:
        await self.clock.sleep(delay)
        self._tasks.pop((session, cid), None)
        self._closes.pop((session, cid), None)
        command = met.CloseWindow(challenge=cid, timeout=True)
        # one id per window: every server process on the store arms the same timer, and
        # the store decides the closing once (the others get its outcome)
        round_, status, winner = key
        command_id = f"timeout/{session}/{cid}/{round_}/{status}/{winner or ''}"
        told = False
        while True:
            try:
                await self.chronicle.execute(session, command, SERVER, device="server",
                                             command_id=command_id)
                return
            except StoreError as exc:
                # the store is down: the window's time is up already, so it closes as soon
                # as the store is back (``check`` cancels this if the window changes)
                if not told:
                    log.warning("closing the window of %s in %s waits for the store: %s", cid, session, exc)
                    told = True
                self._tasks[(session, cid)] = (key, asyncio.current_task())
                await asyncio.sleep(self.chronicle.work.retry_after)
            except Exception:  # noqa: BLE001 - the storyteller can still close it by hand
                log.exception("closing the window of %s in %s failed", cid, session)
                return

    def closing(self, session: str) -> dict[str, tuple[int, str, float]]:
        """The windows of ``session`` a timer will close: challenge -> (round, status, the
        server's epoch seconds when it closes). A Time Out stops them (none is armed), a
        restart gives a full timeout again (the module's doc)."""
        return {cid: (key[0], key[1], at) for (s, cid), (key, at) in list(self._closes.items()) if s == session}

    def cancel_all(self) -> None:
        for _key, task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        self._closes.clear()
