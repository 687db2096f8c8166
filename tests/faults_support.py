"""What the fault tests share (tests/test_faults.py on one SQLite server,
tests/test_procs_faults.py on several PostgreSQL processes): a real client that keeps
toggling its character, the viewer a player is, the seqs a viewer may see, and a wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

from conteur.client.client import Backoff, Client
from conteur.events import views
from conteur.events.model import Actor


def toggle(character: str, out: bool) -> dict:
    if out:
        return {"type": "back_in_game", "character": character}
    return {"type": "out_of_game", "character": character, "reason": "fault test"}


def player(character: str) -> Actor:
    return Actor(role="player", character=character, name=character)


def seen_seqs(log: list[tuple[int, object]], viewer: Actor) -> list[int]:
    return [seq for seq, _ in views.view_events(log, viewer)]


async def eventually(predicate, timeout: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.2)


class TogglingPhone:
    """A real client (durable outbox file) that keeps toggling its character in and out
    of the game: every command is decided on the state the others' commands left."""

    def __init__(self, url: str, token: str, session: str, character: str, *, outbox: Path,
                 device: str, backoff: Backoff):
        self.session = session
        self.character = character
        self.client = Client(url, token, session, outbox=outbox, device=device, ping_interval=1.0,
                             backoff=backoff)
        self.out = False
        self.ids: list[str] = []

    def send(self) -> None:
        self.ids.append(self.client.send(toggle(self.character, self.out)))
        self.out = not self.out

    def acked(self) -> dict[str, tuple[int, ...]]:
        return {e.id: e.seqs for e in self.client.outbox.all() if e.status == "acked"}

    def settled(self, log_seqs: list[int]) -> bool:
        """Live, nothing queued, and holding the end of its view of the log."""
        received = [d.seq for d in self.client.received]
        return (self.client.live.is_set() and not self.client.queued()
                and received[-len(log_seqs):] == log_seqs[-len(received):]
                and (received[-1] if received else 0) == (log_seqs[-1] if log_seqs else 0))
