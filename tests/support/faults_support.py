"""What the fault tests share (tests/faults/test_faults.py on one SQLite server,
tests/faults/test_procs_faults.py on several PostgreSQL processes): a real client that keeps
toggling its character, the viewer a player is, the seqs a viewer may see, and a wait."""

from __future__ import annotations

import asyncio
import threading
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


async def restart_under_load(restart, devices, commands: int) -> tuple[list[str], list[str]]:
    """Each device sends ``commands`` commands, each retried with its own id while it is
    answered ``unavailable`` (as a phone's outbox does), while ``restart`` (blocking: a
    PostgreSQL restart) runs once every device is a third of the way through and the
    last command of each waits for it to end. Returns (the ids acknowledged, one entry
    per ``unavailable`` answer)."""
    unavailable: list[str] = []
    restarted = threading.Event()
    readies = [asyncio.Event() for _ in devices]

    async def play(device, prefix: str, ready: asyncio.Event) -> list[str]:
        acked = []
        for i in range(commands):
            command_id = f"{prefix}-{i}"
            if i == commands // 3:
                ready.set()  # the restart may begin: the rest are sent around and after it
            for _ in range(300):
                answer = await device.command({"type": "skip_time", "seconds": 60}, id=command_id, timeout=60)
                if answer["type"] == "ack":
                    acked.append(command_id)
                    break
                assert answer["type"] == "reject" and answer["code"] == "unavailable", answer
                unavailable.append(command_id)
                await asyncio.sleep(0.05)  # the same id again
            else:
                raise AssertionError(f"{command_id} was never recorded")
            if i == commands - 1 and not restarted.is_set():
                await asyncio.to_thread(restarted.wait, 120)
        return acked

    async def restarting() -> None:
        await asyncio.gather(*(r.wait() for r in readies))
        await asyncio.to_thread(restart)
        restarted.set()

    results = await asyncio.gather(restarting(), *(play(d, f"d{k}", readies[k]) for k, d in enumerate(devices)))
    assert unavailable, "no command met the outage"
    return [c for ids in results[1:] for c in ids], unavailable
