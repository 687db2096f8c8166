"""Commands decided in every session the server serves at once (``desk.venue_wide``):
a venue-wide Time Out, its resume, an announcement to the whole venue, the venue's
countdowns (started, paused, resumed, cancelled).

One log per session, so a venue-wide command is one command in each open session (its
``open`` status: a pending session has no seed yet, a closed one changes no more), each
decided, stored and fanned out as any other, to that session's devices. The command id
the device sent is the idempotency key in its own session; the others get that id with
``@<session>``, so a retry after a dropout decides nothing twice anywhere. A storyteller
bound to one session reaches every session too: an emergency stops every room, whoever
calls it (docs/protocol.md, ``freeze``).
"""

from __future__ import annotations

import asyncio

from conteur.events.model import Actor, Command
from conteur.events.desk import venue_wide
from conteur.events.session import Freeze, Resume
from conteur.server.core.service import Chronicle, Executed
from conteur.server.store.interface import Outcome

__all__ = ["execute", "venue_wide", "open_sessions"]


async def open_sessions(chronicle: Chronicle, first: str) -> list[str]:
    """The open sessions of the chronicle, ``first`` (the sender's) first; the store read
    off the event loop (``Chronicle.work``)."""
    stored = await chronicle.work.run(chronicle.store.sessions)
    names = [first] + [s for s in stored if s != first]
    return [s for s in names if (await chronicle.state_now(s)).session.status == "open"]


def _id(command_id: str, session: str, sender: str) -> str:
    return command_id if session == sender or not command_id else f"{command_id}@{session}"


async def _concerned(chronicle: Chronicle, session: str, command: Command, device: str,
                     command_id: str) -> list[str]:
    """The sessions a venue-wide command changes: a Time Out goes where the venue's is not
    on yet, its resume where it is (a session opened during it was never frozen by it).
    None changed: the sender's session alone, which refuses it with its reason. A retry
    (its id already stored in the sender's session) goes where the first try went, each
    answered with its first outcome."""
    store, run = chronicle.store, chronicle.work.run
    if command_id and await run(store.outcome_of, device, command_id, session) is not None:
        def retried() -> list[str]:
            return [s for s in [session] + [s for s in store.sessions() if s != session]
                    if store.outcome_of(device, _id(command_id, s, session), s) is not None]
        return await run(retried)
    sessions = await open_sessions(chronicle, session)
    if isinstance(command, (Freeze, Resume)):
        want = isinstance(command, Resume)
        sessions = [s for s in sessions if (await chronicle.state_now(s)).session.venue_frozen == want]
    return sessions or [session]


async def execute(chronicle: Chronicle, session: str, command: Command, actor: Actor, *,
                  device: str = "", command_id: str = "", entropy: str = "") -> Executed:
    """``command`` in ``session`` alone, or, venue-wide, in every open session: then one
    outcome for the sender, its seqs those of every session (rejected only when no
    session took it, with the sender's session's reason)."""
    if not venue_wide(command) or not actor.is_storyteller:
        # a player's try stays in its own session, refused there and kept as evidence
        return await chronicle.execute(session, command, actor, device=device,
                                       command_id=command_id, entropy=entropy)
    sessions = await _concerned(chronicle, session, command, device, command_id)
    done = await asyncio.gather(*(
        chronicle.execute(s, command, actor, device=device, command_id=_id(command_id, s, session),
                          entropy=entropy)
        for s in sessions))
    taken = [e for e in done if not e.outcome.rejected]
    if not taken:
        return done[0]
    seqs = tuple(sorted(seq for e in taken for seq in e.outcome.seqs))
    own = next((e for e in done if e.session == session), done[0])
    return Executed(session=session, outcome=Outcome(seqs=seqs, replayed=own.outcome.replayed),
                    events=own.events if not own.outcome.rejected else (), actor=actor)

