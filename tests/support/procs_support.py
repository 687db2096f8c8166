"""Several server processes behind one address, for tests/faults/test_procs_faults.py: a proxy
that spreads connections over them as a reverse proxy does, and a real client (durable
outbox) whose convergence is checked against the PostgreSQL log."""

from __future__ import annotations

from pathlib import Path

from conteur.client.client import Backoff
from conteur.server.store.codec import decode_events
from conteur.server.store.interface import EventStore
from tests.support.client_support import Proxy
from tests.support.faults_support import TogglingPhone, player, seen_seqs  # noqa: F401 - the tests' names


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


class Phone(TogglingPhone):
    """A toggling phone of ``session`` whose outbox lives in ``folder``."""

    def __init__(self, url: str, session: str, character: str, token: str, folder: Path):
        super().__init__(url, token, session, character, outbox=folder / f"{session}-{character}.db",
                         device=f"phone-{session}-{character}", backoff=Backoff(base=0.05, cap=0.3))
