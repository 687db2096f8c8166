"""A command's events reach the device before its ``ack`` whichever process decided it
(docs/protocol.md, "Commands"): two real ``conteur serve`` processes on one PostgreSQL
store, hundreds of races between them.

- One command id sent to both processes at once (the same device's socket on each, as a
  phone whose retry lands on the other process): one decides, the other answers from the
  stored outcome, and must not do so before it has sent that command's events.
- Two commands sent at once to two processes: each process's own commit may wait in its
  hub behind the other's lower seq, still in the tail; its ack waits too.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.harness import prepare_venue
from conteur.server.core.auth import Tokens
from conteur.server.store.factory import open_store
from conteur.server.testing import Device
from tests.support.faults_support import toggle
from tests.support.pg_support import Serve

pytest.importorskip("psycopg")

RACES = 200


def acks_before_their_events(device: Device) -> list[str]:
    """The acks this socket got before one of their events (a storyteller sees them all)."""
    seen: set[int] = set()
    early = []
    for frame in device.frames:
        if frame["type"] == "event":
            seen.add(frame["seq"])
        elif frame["type"] == "ack" and not set(frame["seqs"]) <= seen:
            early.append(frame["id"])
    return early


async def test_acks_follow_their_events_across_two_processes_on_hundreds_of_races(pg_url, tmp_path):
    venue = prepare_venue(pg_url, "hall", players=3)
    (p0, _), (p1, _), (p2, _) = venue.players
    with open_store(pg_url) as store:  # a token each: each its own budget of commands
        left_token, right_token = Tokens(store).issue_many([("storyteller", None, None, "left"),
                                                             ("storyteller", None, None, "right")])
    with Serve(pg_url, tmp_path / "a.log", deadline=30) as a, Serve(pg_url, tmp_path / "b.log", deadline=30) as b:
        # the same device on each process (same token and device name: one idempotency key)
        twin_a = Device(a.ws_url, venue.storyteller, "hall", device="tablet", create=False)
        twin_b = Device(b.ws_url, venue.storyteller, "hall", device="tablet", create=False)
        # two devices, one on each process, sending different commands at once
        left = Device(a.ws_url, left_token, "hall", device="left", create=False)
        right = Device(b.ws_url, right_token, "hall", device="right", create=False)
        devices = [twin_a, twin_b, left, right]
        for device in devices:
            await device.connect()
        try:
            for race in range(RACES):
                out = race % 2 == 1
                same = f"same-{race}"
                answers = await asyncio.gather(
                    twin_a.command(toggle(p0, out), id=same, timeout=60),
                    twin_b.command(toggle(p0, out), id=same, timeout=60),
                    left.command(toggle(p1, out), id=f"left-{race}", timeout=60),
                    right.command(toggle(p2, out), id=f"right-{race}", timeout=60))
                assert [x["type"] for x in answers] == ["ack"] * 4, answers
                assert answers[0]["seqs"] == answers[1]["seqs"]  # decided once
                await asyncio.sleep(0.05)  # within each token's 20 commands a second
            for device in devices:
                await device.sync(timeout=60)
        finally:
            for device in devices:
                await device.close()
        early = {device.device + "@" + ("a" if device in (twin_a, left) else "b"): acks_before_their_events(device)
                 for device in devices}
        assert early == {name: [] for name in early}, early
