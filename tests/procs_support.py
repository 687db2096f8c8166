"""Several server processes behind one address, for tests/test_procs_faults.py: a proxy
that spreads connections over them as a reverse proxy does, and a real client (durable
outbox) whose convergence is checked against the PostgreSQL log."""

from __future__ import annotations

from pathlib import Path

from conteur.client.client import Backoff, Client
from conteur.events import views
from conteur.events.model import Actor
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore
from tests.client_support import Proxy


class Spread(Proxy):
    """Each new connection to the next server in turn (round robin). A server that is
    gone refuses the connection; the device retries and lands on the next one."""

    def __init__(self, ports: list[int]):
        super().__init__(ports[0])
        self.ports = list(ports)
        self._turn = 0

    async def _handle(self, reader, writer) -> None:
        # no await before Proxy._handle reads target_port: this connection's own choice
        self.target_port = self.ports[self._turn % len(self.ports)]
        self._turn += 1
        await super()._handle(reader, writer)


def log_of(store: EventStore, session: str) -> list[tuple[int, object]]:
    rows = store.read_after(session)
    return list(zip([r.seq for r in rows], decode_events([r.data for r in rows])))


def player(character: str) -> Actor:
    return Actor(role="player", character=character, name=character)


def seen_seqs(log: list[tuple[int, object]], viewer: Actor) -> list[int]:
    return [seq for seq, _ in views.view_events(log, viewer)]


class Phone:
    """A real client (durable outbox file) that keeps toggling its character in and out
    of the game: every command is decided on the state the others' commands left."""

    def __init__(self, url: str, session: str, character: str, token: str, folder: Path):
        self.session = session
        self.character = character
        self.client = Client(url, token, session, outbox=folder / f"{session}-{character}.db",
                             device=f"phone-{session}-{character}", ping_interval=1.0,
                             backoff=Backoff(base=0.05, cap=0.3))
        self.out = False

    def send(self) -> None:
        if self.out:
            command = {"type": "back_in_game", "character": self.character}
        else:
            command = {"type": "out_of_game", "character": self.character, "reason": "fault test"}
        self.client.send(command)
        self.out = not self.out

    def acked(self) -> dict[str, tuple[int, ...]]:
        return {e.id: e.seqs for e in self.client.outbox.all() if e.status == "acked"}

    def settled(self, log_seqs: list[int]) -> bool:
        received = [d.seq for d in self.client.received]
        return (self.client.live.is_set() and not self.client.queued()
                and received[-len(log_seqs):] == log_seqs[-len(received):]
                and (received[-1] if received else 0) == (log_seqs[-1] if log_seqs else 0))
