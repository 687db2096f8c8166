"""Faults with several server processes on one PostgreSQL store:
real ``serve`` processes on loopback, real clients with durable outboxes behind a proxy
that spreads them over the processes, the real database.

- kill -9 of one process under load from 50 devices: its devices reconnect through the
  proxy to the other process; nothing acknowledged is lost or doubled, every device ends
  with exactly what the log shows its viewer.
- PostgreSQL restarted under load with two processes: `unavailable` during the outage,
  each command decided once after it.
- ``conteur serve --workers 2``: two processes on one port, a worker killed is replaced;
  refused on a chronicle file.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from bench.harness import ServerProcess, free_port, prepare_venue
from conteur.server.store.chain import verify_rows
from conteur.server.store.factory import open_store
from conteur.server.testing import Device, Venue
from tests.support.faults_support import eventually, restart_under_load
from tests.support.procs_support import Phone, Spread, log_of, player, seen_seqs

pytest.importorskip("psycopg")

SESSIONS = ("hall-a", "hall-b")
PER_SESSION = 25  # 50 devices


def check_exactly_once(url: str, acked: dict[str, tuple[int, ...]]) -> None:
    """Every acknowledged command's events are in the log once, at the acked seqs; the
    log is gapless and its chain whole."""
    with open_store(url) as store:
        rows = list(store.rows())
    assert verify_rows(rows, gapless=True) == (len(rows), None)
    by_id: dict[str, list[int]] = {}
    for row in rows:
        if row.command_id:
            by_id.setdefault(row.command_id, []).append(row.seq)
    for command_id, seqs in acked.items():
        assert tuple(by_id.get(command_id, ())) == tuple(seqs), f"{command_id}: acked {seqs}"


async def test_kill_9_of_one_process_under_load_from_50_devices_loses_and_doubles_nothing(
        pg_url, tmp_path, phones):
    venues = [prepare_venue(pg_url, session, players=PER_SESSION) for session in SESSIONS]
    servers = [ServerProcess(pg_url, log_path=tmp_path / f"server-{k}.log") for k in range(2)]
    for server in servers:
        server.start()
    try:
        with Spread([s.port for s in servers]) as proxy:
            devices = [Phone(proxy.ws_url, v.session, character, token, phones)
                       for v in venues for character, token in v.players]
            try:
                for d in devices:
                    d.client.start()
                await asyncio.gather(*(d.client.wait_live() for d in devices))

                async def load(rounds: int) -> None:
                    for _ in range(rounds):
                        for d in devices:
                            d.send()
                        await asyncio.sleep(0.1)

                await load(3)
                await eventually(lambda: sum(len(d.acked()) for d in devices) >= 100, 30,
                                 "acks before the kill")
                sending = asyncio.create_task(load(8))  # the kill lands mid-load
                await asyncio.sleep(0.3)
                before = {k: v for d in devices for k, v in d.acked().items()}
                servers[0].kill9()
                await sending
                await load(2)

                def settled() -> bool:
                    with open_store(pg_url) as store:
                        logs = {s: log_of(store, s) for s in SESSIONS}
                    return all(d.settled(seen_seqs(logs[d.session], player(d.character))) for d in devices)

                await eventually(settled, 60, "every device caught up and flushed its outbox")
                with open_store(pg_url) as store:
                    logs = {s: log_of(store, s) for s in SESSIONS}
                for d in devices:
                    assert [r.seq for r in d.client.received] == seen_seqs(logs[d.session], player(d.character))
                    assert all(e.status == "acked" for e in d.client.outbox.all()), [
                        (e.id, e.status, e.code, e.message) for e in d.client.outbox.all() if e.status != "acked"]
                after = {k: v for d in devices for k, v in d.acked().items()}
                assert before.items() <= after.items(), "an acknowledged command changed its outcome"
                assert len(after) == sum(len(d.client.outbox.all()) for d in devices)
            finally:
                await asyncio.gather(*(d.client.close() for d in devices))
    finally:
        for server in servers:
            server.stop()
    check_exactly_once(pg_url, after)
    # both processes decided, before the kill and (the survivor) after it
    assert len(after) == 2 * PER_SESSION * 13


async def test_a_postgresql_restart_under_load_with_two_processes_decides_each_command_once(
        pg_cluster, pg_url):
    with Venue(pg_url) as a, Venue(pg_url) as b:
        token = a.token()
        devices = [Device(v.ws_url, token, "night", device=f"tablet-{k}") for k, v in enumerate((a, b, a, b))]
        for device in devices:
            await device.connect()
        try:
            assert (await devices[0].command({"type": "open_session", "name": "night"}))["type"] == "ack"
            acked, _ = await restart_under_load(pg_cluster.restart, devices, 12)
            assert len(acked) == 4 * 12
            with open_store(pg_url) as store:
                head = store.head()
            # both processes' devices see the whole stream after the outage (their tails
            # reconnected), the same on both
            for d in devices:
                await eventually(lambda d=d: d.events and d.events[-1][0] >= head, 30, "the whole stream")
            assert all([s for s, _ in d.events] == list(range(1, head + 1)) for d in devices)
        finally:
            for device in devices:
                await device.close()
    with open_store(pg_url) as store:
        rows = list(store.rows())
    assert verify_rows(rows, gapless=True) == (len(rows), None)
    assert sorted(r.command_id for r in rows if r.type != "session.opened") == sorted(acked)


def test_serve_workers_runs_processes_that_replace_a_killed_one(pg_url, tmp_path):
    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    serve = subprocess.Popen(
        [sys.executable, "-m", "conteur.server.cli.main", "serve", "--store", pg_url, "--host",
         "127.0.0.1", "--port", str(port), "--workers", "2"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        pids: list[int] = []
        while not pids:
            assert serve.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            found = re.search(r"server processes on .*, pids ([\d ]+)", (tmp_path / "serve.log").read_text())
            pids = [int(p) for p in found.group(1).split()] if found else []
            time.sleep(0.1)
        assert len(pids) == 2
        assert pg_url.split("@")[0].split(":")[-1] not in (tmp_path / "serve.log").read_text()

        def health() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        while not health():
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.1)
        os.kill(pids[0], signal.SIGKILL)
        while "starting another" not in (tmp_path / "serve.log").read_text():
            assert time.monotonic() < deadline + 30, (tmp_path / "serve.log").read_text()
            time.sleep(0.1)
        assert health()
    finally:
        serve.terminate()
        assert serve.wait(60) == 0, (tmp_path / "serve.log").read_text()
        log.close()


def test_serve_workers_is_refused_on_a_chronicle_file(tmp_path):
    done = subprocess.run([sys.executable, "-m", "conteur.server.cli.main", "serve", "--db",
                           str(tmp_path / "c.db"), "--workers", "2"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "--workers 2 needs a PostgreSQL store" in done.stderr
    assert not (tmp_path / "c.db").exists()
