"""Safety calls across the venue: every storyteller's socket, whatever session it is on,
hears of a safety call waiting in any other open session (``wire.VenueCalls``).

A call is an event of its own session's log, seen by that session's devices alone
(events/desk.py). Someone not OK cannot wait for the storyteller of the right room to look
at the right tablet: each storyteller socket of every other session gets a ``venue_calls``
frame listing the safety calls nobody has taken yet, read from the sessions' folded
states (so a reconnect or a restart shows them again) and sent again whenever that list
changes. Nothing of it is logged, and nothing reaches a player or a wall: it goes only
to sockets whose viewer is a storyteller. A storyteller bound to another session learns
that a safety call waits and in which session, not who made it nor its line.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Iterable

from conteur.events import desk, wire
from conteur.events.model import Event
from conteur.events.session import SessionClosed
from conteur.server.store.interface import StoreError

if TYPE_CHECKING:
    from conteur.server.core.hub import Connection, Hub
    from conteur.server.core.service import Chronicle, Executed

# what can change the list: a call made, taken or closed, its session closed
CHANGES: tuple[type[Event], ...] = desk.CALL_EVENTS + (SessionClosed,)

Waiting = dict[str, tuple[str, list[desk.Call]]]  # session -> (its name, its waiting safety calls)


class SafetyCalls:
    def __init__(self, chronicle: Chronicle, hub: Hub):
        self.chronicle = chronicle
        self.hub = hub
        self._soon = False
        self._heard: set[str] = set()  # sessions another process told of: loaded here before reading
        self._tasks: set[asyncio.Task] = set()

    # -- what is waiting -----------------------------------------------------------

    def waiting(self) -> Waiting:
        """The waiting safety calls of every open session this process holds (all of
        them from start-up on: ``Chronicle.preload``), in order of arrival."""
        out: Waiting = {}
        for session in self.chronicle.held_sessions():
            state = self.chronicle.state(session)
            if state.session.status != "open":
                continue  # a closed session takes no command: its calls are over
            calls = [c for c in state.desk.calls.values() if c.kind == "safety" and c.status == "waiting"]
            if calls:
                out[session] = (state.session.name, calls)
        return out

    def frame_for(self, conn: Connection, waiting: Waiting) -> str:
        entries = []
        for session, (name, calls) in sorted(waiting.items()):
            if session == conn.session:
                continue  # its own session's calls come as that session's events
            if conn.bound is None or conn.bound == session:
                characters = self.chronicle.state(session).session.characters
                entries += [wire.WaitingCall(session=session, session_name=name, call=c.id, character=c.character,
                                             name=getattr(characters.get(c.character), "name", c.character),
                                             text=c.text) for c in calls]
            else:
                entries += [wire.WaitingCall(session=session, session_name=name) for _ in calls]
        return wire.encode(wire.VenueCalls(calls=tuple(entries)))

    # -- telling the sockets -------------------------------------------------------

    def greet(self, conn: Connection) -> None:
        """A storyteller's socket just live: what waits elsewhere, if anything does."""
        if not conn.viewer.is_storyteller:
            return
        frame = self.frame_for(conn, self.waiting())
        if frame != conn.venue_calls and frame != _NONE:
            conn.venue_calls = frame
            conn.push(frame)

    def changed(self) -> None:
        self._soon = False
        task = self.hub.loop.create_task(self._refresh())
        self._tasks.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(self._tasks.discard)

    async def _refresh(self) -> None:
        heard, self._heard = self._heard, set()
        # a session another process opened after this one started, or one whose state
        # trails the tail: read off the loop first (``state_now``), so that ``waiting``
        # reads nothing from the store here; a read the store did not answer is tried
        # again at the next change
        stale = heard | {s for s in self.chronicle.held_sessions() if self.chronicle.held(s) is None}
        for session in sorted(stale):
            try:
                await self.chronicle.state_now(session)
            except StoreError:
                self._heard.add(session)
        waiting = self.waiting()
        for conn in self.hub.storytellers():
            frame = self.frame_for(conn, waiting)
            if frame != (conn.venue_calls or _NONE):
                conn.venue_calls = frame
                conn.push(frame)

    def on_executed(self, executed: Executed) -> None:
        """The chronicle's listener, after the hub's: the call's own session has its event
        first. Safe from any thread (``execute_sync``)."""
        if _changes(e for _, e in executed.events):
            self._later()

    def on_remote(self, items: Iterable[tuple[int, str, Event]]) -> None:
        """Other processes' commits (the store's tail), after the chronicle took them."""
        sessions = {session for _, session, e in items if isinstance(e, CHANGES)}
        if sessions:
            self._heard |= sessions
            self._later()

    def _later(self) -> None:
        """Once the loop is next free: the states are folded by then, and a burst of calls
        makes one frame per socket."""
        loop = self.hub.loop
        if loop is None:
            return
        if self._soon:
            return
        self._soon = True
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.call_soon(self.changed)
        else:
            loop.call_soon_threadsafe(self.changed)


_NONE = wire.encode(wire.VenueCalls(calls=()))


def _changes(events: Iterable[Event]) -> bool:
    return any(isinstance(e, CHANGES) for e in events)
