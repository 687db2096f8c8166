"""PostgreSQL restarted under load: a real server on a PostgreSQL
chronicle, devices sending commands while the database restarts. During the outage a
command is answered `unavailable` (nothing was written, retry); every retry keeps its
command id, and after the restart each command is decided exactly once, the log gapless
and its chain whole."""

from __future__ import annotations

import pytest

from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.testing import Device, Venue
from tests.support.faults_support import restart_under_load

pytest.importorskip("psycopg")

DEVICES = 4
COMMANDS = 15  # per device


async def test_a_postgresql_restart_under_load_answers_unavailable_then_decides_each_command_once(
        pg_cluster, pg_url):
    with Venue(pg_url) as venue:
        token = venue.token()
        devices = [Device(venue.ws_url, token, "night", device=f"tablet-{k}", create=True) for k in range(DEVICES)]
        for device in devices:
            await device.connect()
        try:
            assert (await devices[0].command({"type": "open_session", "name": "night"}))["type"] == "ack"
            acked, _ = await restart_under_load(pg_cluster.restart, devices, COMMANDS)
            assert len(acked) == DEVICES * COMMANDS
            # a command sent after the restart met the server's dropped connections first
            extra = await devices[0].command({"type": "skip_time", "seconds": 60}, id="after", timeout=60)
            while extra["type"] != "ack":
                assert extra["code"] == "unavailable"
                extra = await devices[0].command({"type": "skip_time", "seconds": 60}, id="after", timeout=60)
        finally:
            for device in devices:
                await device.close()
    with open_store(pg_url) as store:
        rows = list(store.rows())
        assert verify_rows(rows, gapless=True) == (len(rows), None)
        decided = [r.command_id for r in rows if r.type != "session.opened"]
        # each command once: retried ids were written by exactly one of their attempts
        assert sorted(decided) == sorted(acked + ["after"])
