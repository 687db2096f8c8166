"""PostgreSQL restarted under load (issue 17, item 3): a real server on a PostgreSQL
chronicle, devices sending commands while the database restarts. During the outage a
command is answered `unavailable` (nothing was written, retry); every retry keeps its
command id, and after the restart each command is decided exactly once, the log gapless
and its chain whole."""

from __future__ import annotations

import asyncio
import threading

import pytest

from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.testing import Device, Venue

pytest.importorskip("psycopg")

DEVICES = 4
COMMANDS = 15  # per device


async def play_until_acked(device: Device, prefix: str, unavailable: list, restarted: threading.Event,
                           ready: asyncio.Event) -> list[str]:
    acked = []
    for i in range(COMMANDS):
        command_id = f"{prefix}-{i}"
        if i == COMMANDS // 3:
            ready.set()  # the restart may begin: the rest are sent around and after it
        for _ in range(200):
            answer = await device.command({"type": "skip_time", "seconds": 60}, id=command_id, timeout=60)
            if answer["type"] == "ack":
                acked.append(command_id)
                break
            assert answer["type"] == "reject" and answer["code"] == "unavailable", answer
            unavailable.append(command_id)
            await asyncio.sleep(0.05)  # the same id again, as a phone's outbox does
        else:
            pytest.fail(f"{command_id} was never recorded")
        if i == COMMANDS - 1 and not restarted.is_set():
            await asyncio.to_thread(restarted.wait, 120)
    return acked


async def test_a_postgresql_restart_under_load_answers_unavailable_then_decides_each_command_once(
        pg_cluster, pg_url):
    with Venue(pg_url) as venue:
        token = venue.token()
        devices = [Device(venue.ws_url, token, "night", device=f"tablet-{k}", create=True) for k in range(DEVICES)]
        for device in devices:
            await device.connect()
        try:
            assert (await devices[0].command({"type": "open_session", "name": "night"}))["type"] == "ack"
            unavailable: list[str] = []
            restarted = threading.Event()
            readies = [asyncio.Event() for _ in devices]

            async def restart() -> None:
                await asyncio.gather(*(r.wait() for r in readies))
                await asyncio.to_thread(pg_cluster.restart)
                restarted.set()

            results = await asyncio.gather(
                restart(),
                *(play_until_acked(d, f"d{k}", unavailable, restarted, readies[k]) for k, d in enumerate(devices)))
            acked = [c for ids in results[1:] for c in ids]
            assert len(acked) == DEVICES * COMMANDS
            # a command sent after the restart met the server's dropped connections first
            extra = await devices[0].command({"type": "skip_time", "seconds": 60}, id="after", timeout=60)
            while extra["type"] != "ack":
                assert extra["code"] == "unavailable"
                unavailable.append("after")
                extra = await devices[0].command({"type": "skip_time", "seconds": 60}, id="after", timeout=60)
            assert unavailable, "no command met the outage"
        finally:
            for device in devices:
                await device.close()
    with open_store(pg_url) as store:
        rows = list(store.rows())
        assert verify_rows(rows, gapless=True) == (len(rows), None)
        decided = [r.command_id for r in rows if r.type != "session.opened"]
        # each command once: retried ids were written by exactly one of their attempts
        assert sorted(decided) == sorted(acked + ["after"])
